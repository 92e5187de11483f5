#pragma once
// What a reader keeps across builds of the same shard, for files that grow while they are read
// (the watch: a statistic.csv read from where it was left, core/formats/mindspore/
// statistic_csv_reader.cpp). The caller owns the store and hands the same one to every builder of
// the shard (ShardBuilder::setResume); a reader keeps one entry per file, keyed by its rel, and
// drops what it cannot resume (a file rewritten or replaced is read again from its start).
// Without a store (`index`) every file is read whole.
#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>

namespace dl {

struct ShardResumeEntry {
    virtual ~ShardResumeEntry() = default;
};

struct ShardResume {
    std::unordered_map<std::string, std::unique_ptr<ShardResumeEntry>> entries;  // by file rel
    std::uint64_t bytesRead = 0;  // read from growing files by resuming readers, over all builds
};

}  // namespace dl
