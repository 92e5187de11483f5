// RecordAllocator: std::vector's behaviour everywhere but inside a SkipRecordInit scope on the
// same thread, where resize() leaves the new records to be filled by the caller.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <thread>

#include "core/model/dump_index.h"
#include "core/model/record_allocator.h"

using namespace dl;

namespace {

bool isDefault(const TensorRecord& t) {
    const TensorRecord d;
    return t.op == d.op && t.io == d.io && t.dtype == d.dtype && t.ndim == d.ndim && t.flags == d.flags &&
        t.side == d.side && std::isnan(t.packedStats.mean) && std::isnan(t.packedStats.max) && t.packedStats.known == 0;
}

}  // namespace

TEST(RecordAllocator, ResizeValueInitialisesOutsideTheScope) {
    RecordVector<TensorRecord> v;
    v.resize(1000);
    for (const TensorRecord& t : v) ASSERT_TRUE(isDefault(t));
    v.emplace_back();
    EXPECT_TRUE(isDefault(v.back()));
    TensorRecord x;
    x.op = 7;
    v.push_back(x);
    EXPECT_EQ(v.back().op, 7u);
    const RecordVector<TensorRecord> copy = v;  // copies are element by element, as always
    EXPECT_EQ(copy.size(), v.size());
    EXPECT_EQ(std::memcmp(copy.data(), v.data(), v.size() * sizeof(TensorRecord)), 0);
}

TEST(RecordAllocator, ResizeInsideTheScopeKeepsWhatTheStorageHolds) {
    RecordVector<OpRecord> v;
    v.reserve(64);
    v.resize(64);
    for (OpRecord& o : v) o.rank = 42;  // bytes in the storage, then the records end
    v.clear();
    {
        const SkipRecordInit skip;
        v.resize(64);  // no construction: the storage keeps the 42s
        { const SkipRecordInit nested; }
        v.resize(32);
        v.resize(48);  // still inside the outer scope after the nested one ended
    }
    for (const OpRecord& o : v) EXPECT_EQ(o.rank, 42u);
    v.resize(80);  // outside again: value-initialised
    for (std::size_t i = 64; i < 80; ++i) EXPECT_EQ(v[i].rank, 0u);
}

TEST(RecordAllocator, TheScopeBelongsToItsThread) {
    const SkipRecordInit skip;
    RecordVector<TensorRecord> other;
    std::thread([&] {
        other.resize(100);  // another thread: value-initialised
    }).join();
    for (const TensorRecord& t : other) EXPECT_TRUE(isDefault(t));
}
