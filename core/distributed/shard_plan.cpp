#include "core/distributed/shard_plan.h"

#include <algorithm>
#include <filesystem>
#include <map>
#include <sstream>

#include "core/index/dump_layout.h"
#include "core/index/dump_scanner.h"

namespace dl {
namespace fs = std::filesystem;

static void findRankFolders(const fs::path& root, const fs::path& rel, int depth, std::vector<std::string>& out) {
    std::error_code ec;
    for (fs::directory_iterator it(root / rel, ec), end; !ec && it != end; it.increment(ec)) {
        if (!it->is_directory(ec)) continue;
        const fs::path child = rel / it->path().filename();
        if (rankFromFolderName(it->path().filename().string()))
            out.push_back(child.string());
        else if (depth < 4 && !it->is_symlink(ec))
            findRankFolders(root, child, depth + 1, out);
    }
}

std::vector<ShardInfo> listShards(const std::string& root) {
    std::vector<std::string> rels;
    findRankFolders(root, {}, 0, rels);
    std::sort(rels.begin(), rels.end());
    if (rels.empty()) rels.emplace_back();
    std::vector<ShardInfo> shards;
    for (const auto& rel : rels) {
        ShardInfo s;
        s.rel = rel;
        for (const auto& f : scanFolder(rel.empty() ? root : root + "/" + rel).files) {
            s.bytes += f.size;
            ++s.files;
        }
        shards.push_back(std::move(s));
    }
    return shards;
}

std::vector<std::vector<std::string>> planShards(const std::vector<std::vector<ShardInfo>>& visible) {
    std::map<std::string, std::pair<std::uint64_t, std::vector<std::size_t>>> who;  // rel -> (bytes, procs)
    for (std::size_t p = 0; p < visible.size(); ++p)
        for (const auto& s : visible[p]) {
            auto& e = who[s.rel];
            e.first = std::max(e.first, s.bytes);
            e.second.push_back(p);
        }
    std::vector<std::pair<std::string, std::pair<std::uint64_t, std::vector<std::size_t>>>> order(who.begin(),
                                                                                                  who.end());
    std::stable_sort(order.begin(), order.end(),
                     [](const auto& a, const auto& b) { return a.second.first > b.second.first; });
    std::vector<std::uint64_t> load(visible.size(), 0);
    std::vector<std::vector<std::string>> plan(visible.size());
    for (const auto& [rel, info] : order) {
        std::size_t best = info.second.front();
        for (std::size_t p : info.second)
            if (load[p] < load[best]) best = p;
        load[best] += info.first + 1;  // +1: empty folders still spread out
        plan[best].push_back(rel);
    }
    return plan;
}

std::string encodeShardList(const std::vector<ShardInfo>& shards) {
    std::string s;
    for (const auto& sh : shards)
        s += std::to_string(sh.bytes) + "\t" + std::to_string(sh.files) + "\t" + sh.rel + "\n";
    return s;
}

std::vector<ShardInfo> decodeShardList(const std::string& text) {
    std::vector<ShardInfo> out;
    std::istringstream in(text);
    std::string line;
    while (std::getline(in, line)) {
        const auto a = line.find('\t'), b = line.find('\t', a == std::string::npos ? a : a + 1);
        if (a == std::string::npos || b == std::string::npos) continue;
        ShardInfo s;
        s.bytes = std::strtoull(line.substr(0, a).c_str(), nullptr, 10);
        s.files = std::strtoull(line.substr(a + 1, b - a - 1).c_str(), nullptr, 10);
        s.rel = line.substr(b + 1);
        out.push_back(std::move(s));
    }
    return out;
}

}  // namespace dl
