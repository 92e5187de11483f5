#pragma once
// Deterministic random numbers for the simulated dumps (no std::normal_distribution: its output
// is library-specific): splitmix64 and Box-Muller, the same numbers on every platform.
#include <cmath>
#include <cstdint>

namespace dl::demo {

struct Rng {
    std::uint64_t s;
    std::uint64_t next() {
        std::uint64_t z = (s += 0x9e3779b97f4a7c15ull);
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
        return z ^ (z >> 31);
    }
    double uniform() { return double(next() >> 11) * 0x1.0p-53; }
    float normal() {
        const double u1 = uniform() + 1e-12, u2 = uniform();
        return float(std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2));
    }
};

}  // namespace dl::demo
