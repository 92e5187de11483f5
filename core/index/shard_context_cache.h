#pragma once
// Execution orders and graph IRs parsed by earlier builds, kept for the watch: it builds a rank
// folder iteration folder by iteration folder (core/watch/incremental_index.h), and each of those
// builds orders its ops by the rank's order file (a 100,000-kernel IR parses in ~3 s). An entry
// serves while its file keeps the size and stamp it was parsed at; ranks whose files list the same
// kernels (the ranks of one pipeline stage) share one table, so what is held grows with the
// distinct orders, not with the ranks.
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/formats/mindspore/execution_order.h"
#include "core/index/dump_scanner.h"

namespace dl {

class ShardContextCache {
public:
    // The table `f` parsed to at its size and stamp; null when none is kept.
    std::shared_ptr<const OpOrderTable> find(const ScannedFile& f) const;
    // The table of `names`, parsed from `f` at its size and stamp (the caller checked the file did not
    // change while it was read), kept for it; an identical table already held is shared.
    std::shared_ptr<const OpOrderTable> add(const ScannedFile& f, std::vector<std::string> names);
    // Drops every entry whose file `current(rel, size, stamp)` no longer vouches for (removed or changed).
    void prune(const std::function<bool(const std::string& rel, std::uint64_t size, std::int64_t stamp)>& current);
    std::size_t entries() const { return m_byRel.size(); }
    std::size_t tables() const;  // distinct tables held

private:
    struct Entry {
        std::uint64_t size = 0;
        std::int64_t stamp = 0;
        std::shared_ptr<const OpOrderTable> table;
    };
    std::unordered_map<std::string, Entry> m_byRel;
    std::unordered_map<std::uint64_t, std::weak_ptr<const OpOrderTable>> m_byNames;  // by a hash of the names
};

}  // namespace dl
