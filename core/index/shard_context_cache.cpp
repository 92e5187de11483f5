#include "core/index/shard_context_cache.h"

#include <xxhash.h>

#include <set>

namespace dl {
namespace {

std::uint64_t namesHash(const std::vector<std::string>& names) {
    XXH3_state_t* state = XXH3_createState();
    XXH3_64bits_reset(state);
    for (const std::string& n : names)
        XXH3_64bits_update(state, n.c_str(), n.size() + 1);  // with its NUL: "a","bc" != "ab","c"
    const std::uint64_t h = XXH3_64bits_digest(state);
    XXH3_freeState(state);
    return h;
}

}  // namespace

std::shared_ptr<const OpOrderTable> ShardContextCache::find(const ScannedFile& f) const {
    const auto it = m_byRel.find(f.rel);
    if (it == m_byRel.end() || it->second.size != f.size || it->second.stamp != f.stamp) return nullptr;
    return it->second.table;
}

std::shared_ptr<const OpOrderTable> ShardContextCache::add(const ScannedFile& f, std::vector<std::string> names) {
    const std::uint64_t h = namesHash(names);
    std::shared_ptr<const OpOrderTable> table;
    if (const auto it = m_byNames.find(h); it != m_byNames.end())
        if (auto held = it->second.lock(); held && held->names() == names) table = std::move(held);
    if (!table) {
        auto made = std::make_shared<OpOrderTable>();
        made->assign(std::move(names));
        table = std::move(made);
        m_byNames[h] = table;
    }
    m_byRel[f.rel] = {f.size, f.stamp, table};
    return table;
}

void ShardContextCache::prune(
    const std::function<bool(const std::string& rel, std::uint64_t size, std::int64_t stamp)>& current) {
    std::erase_if(m_byRel, [&](const auto& e) { return !current(e.first, e.second.size, e.second.stamp); });
    std::erase_if(m_byNames, [](const auto& e) { return e.second.expired(); });
}

std::size_t ShardContextCache::tables() const {
    std::set<const OpOrderTable*> distinct;
    for (const auto& [rel, e] : m_byRel) distinct.insert(e.table.get());
    return distinct.size();
}

}  // namespace dl
