#pragma once
// Two hand-built runs of three ops for the comparison tests: A at 2.0 throughout, B diverging at
// Add (2.5) and Mul (9.0).
#include <cstdint>

#include "tests/core/analysis_test_builder.h"

namespace dltest {

// Run A: MatMul, Add, Mul all at 2.0; run B: the same at 2.0, 2.5 and 9.0 (Mul on `mulRank`).
inline void threeOpRuns(IndexBuilder& a, IndexBuilder& b, std::uint32_t mulRank = 0) {
    for (IndexBuilder* x : {&a, &b}) {
        const bool isB = x == &b;
        x->op(0, 0, "MatMul", "MatMul-op1", {dltest::out(0, dltest::dataStats(2.0))});
        x->op(0, 0, "Add", "Add-op2", {dltest::out(0, dltest::dataStats(isB ? 2.5 : 2.0))});
        x->op(mulRank, 0, "Mul", "Mul-op3", {dltest::out(0, dltest::dataStats(isB ? 9.0 : 2.0))});
    }
}

}  // namespace dltest
