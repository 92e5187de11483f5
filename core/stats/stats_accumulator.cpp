#include "core/stats/stats_accumulator.h"
#include "core/util/byte_swap.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <type_traits>

#include "core/stats/stats_kernels.h"

namespace dl {

namespace {

// Integers and bool are rarely large in dumps (shapes, indices, masks): widen to double in
// blocks and use the exact scalar kernel.
template <class T>
void addWidened(const std::uint8_t* in, std::size_t n, bool bigEndian, StatsPartial& p, Log2Histogram& h) {
    constexpr std::size_t kBlock = 2048;
    double buf[kBlock];
    for (std::size_t i = 0; i < n; i += kBlock) {
        const std::size_t m = std::min(kBlock, n - i);
        for (std::size_t j = 0; j < m; ++j) {
            T v;
            std::memcpy(&v, in + (i + j) * sizeof(T), sizeof(T));
            if constexpr (sizeof(T) > 1) {
                if (bigEndian) {
                    using U = std::make_unsigned_t<
                        std::conditional_t<std::is_floating_point_v<T>,
                                           std::conditional_t<sizeof(T) == 8, std::uint64_t, std::uint32_t>, T>>;
                    v = std::bit_cast<T>(byteSwap(std::bit_cast<U>(v)));
                }
            }
            buf[j] = double(v);
        }
        kernels::addDoubles(buf, m, p, h);
    }
}

void addBool(const std::uint8_t* in, std::size_t n, StatsPartial& p, Log2Histogram& h) {
    // Any non-zero byte is true, as NumPy reads it.
    std::uint64_t ones = 0;
    for (std::size_t i = 0; i < n; ++i) ones += in[i] != 0;
    const std::uint64_t zeros = n - ones;
    p.finite += n;
    p.zero += zeros;
    p.pos += ones;
    p.sum += double(ones);
    p.sumSq += double(ones);
    h.zero += zeros;
    h.exp[Log2Histogram::binOf(0)] += ones;
    if (zeros) p.min = std::min(p.min, 0.0);
    if (ones) p.min = std::min(p.min, 1.0);
    p.max = std::max(p.max, ones ? 1.0 : 0.0);
    p.maxAbs = std::max(p.maxAbs, ones ? 1.0 : 0.0);
}

}  // namespace

void StatsAccumulator::add(const void* data, std::size_t count, DType dtype, bool bigEndian) {
    const auto* in = static_cast<const std::uint8_t*>(data);
    m_count += count;
    if (count == 0) return;
    switch (dtype) {
        case DType::Float16:
            return kernels::addFloat16(in, count, bigEndian, m_p, m_hist);
        case DType::BFloat16:
            return kernels::addBFloat16(in, count, bigEndian, m_p, m_hist);
        case DType::Float32:
            return kernels::addFloat32(in, count, bigEndian, m_p, m_hist);
        case DType::Float64:
            return addWidened<double>(in, count, bigEndian, m_p, m_hist);
        case DType::Bool:
            return addBool(in, count, m_p, m_hist);
        case DType::Int4:  // stored unpacked, one signed value per byte
        case DType::Int8:
            return addWidened<std::int8_t>(in, count, bigEndian, m_p, m_hist);
        case DType::Int16:
            return addWidened<std::int16_t>(in, count, bigEndian, m_p, m_hist);
        case DType::Int32:
            return addWidened<std::int32_t>(in, count, bigEndian, m_p, m_hist);
        case DType::Int64:
            return addWidened<std::int64_t>(in, count, bigEndian, m_p, m_hist);
        case DType::UInt1:  // stored unpacked, one per byte
        case DType::UInt8:
            return addWidened<std::uint8_t>(in, count, bigEndian, m_p, m_hist);
        case DType::UInt16:
            return addWidened<std::uint16_t>(in, count, bigEndian, m_p, m_hist);
        case DType::UInt32:
            return addWidened<std::uint32_t>(in, count, bigEndian, m_p, m_hist);
        case DType::UInt64:
            return addWidened<std::uint64_t>(in, count, bigEndian, m_p, m_hist);
        case DType::Complex64:
        case DType::Complex128:
        case DType::Unknown:
            m_unsupported = true;
            return;
    }
    m_unsupported = true;
}

void StatsAccumulator::merge(const StatsAccumulator& other) {
    m_p.merge(other.m_p);
    m_count += other.m_count;
    m_unsupported = m_unsupported || other.m_unsupported;
    m_hist.merge(other.m_hist);
}

TensorStats StatsAccumulator::stats() const {
    TensorStats s;
    if (m_unsupported) return s;  // known = 0: nothing may be shown
    s.count = m_count;
    s.nanCount = m_p.nan;
    s.posInfCount = m_p.posInf;
    s.negInfCount = m_p.negInf;
    s.zeroCount = m_p.zero;
    s.negCount = m_p.neg;
    s.posCount = m_p.pos;
    s.satCount = m_p.sat;
    s.subnormalCount = m_p.sub;
    s.l2 = std::sqrt(m_p.sumSq);
    s.known = stat::Count | stat::NanCount | stat::PosInfCount | stat::NegInfCount | stat::ZeroCount | stat::NegCount |
        stat::PosCount | stat::SatCount | stat::SubnormalCount | stat::L2 | stat::Histogram;
    if (m_p.finite > 0) {
        s.min = m_p.min;
        s.max = m_p.max;
        s.mean = m_p.sum / double(m_p.finite);
        s.maxAbs = m_p.maxAbs;
        s.known |= stat::Min | stat::Max | stat::Mean | stat::MaxAbs;
    }
    return s;
}

}  // namespace dl
