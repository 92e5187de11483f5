#pragma once
// The palettes of the timeline states, shared by the timeline, the tables and the legends: op
// states (overflow analysis) and comparison states (two runs), both five severity levels.
#include <QColor>
#include <QString>
#include <array>

#include "core/compare/compare_overlay.h"
#include "core/compare/tensor_verdict.h"
#include "core/query/op_state.h"
#include "ui/style/theme.h"

namespace dlui {

inline QColor stateColor(dl::OpState s) {
    switch (s) {
        case dl::OpState::Normal:
            return theme::kStateNormal;
        case dl::OpState::NearLimit:
            return theme::kStateNearLimit;
        case dl::OpState::Saturated:
            return theme::kStateSaturated;
        case dl::OpState::InfNan:
            return theme::kStateInfNan;
        case dl::OpState::Origin:
            return theme::kStateOrigin;
    }
    return Qt::gray;
}

inline QString stateText(dl::OpState s) { return QString::fromLatin1(dl::opStateName(s)); }

inline QColor compareColor(dl::CompareState s) {
    switch (s) {
        case dl::CompareState::Agree:
            return theme::kCompareAgree;
        case dl::CompareState::NotCompared:
            return theme::kCompareNotCompared;
        case dl::CompareState::Unmatched:
            return theme::kCompareUnmatched;
        case dl::CompareState::Diverged:
            return theme::kCompareDiverged;
        case dl::CompareState::FirstDivergence:
            return theme::kCompareFirstDivergence;
    }
    return Qt::gray;
}

inline QString compareText(dl::CompareState s) { return QString::fromLatin1(dl::compareStateName(s)); }

inline QColor verdictColor(dl::Verdict v) {
    switch (v) {
        case dl::Verdict::Identical:
            return theme::kClassIdentical;
        case dl::Verdict::Precision:
            return theme::kClassPrecision;
        case dl::Verdict::Agree:
            return theme::kClassAgree;
        case dl::Verdict::Diverged:
            return theme::kClassDiverged;
        case dl::Verdict::NonFinite:
            return theme::kClassNonFinite;
        case dl::Verdict::Shape:
            return theme::kClassShape;
        case dl::Verdict::Md5:
            return theme::kClassMd5;
        case dl::Verdict::Unknown:
            return theme::kClassUnknown;
    }
    return Qt::gray;
}

inline QString verdictText(dl::Verdict v) { return QString::fromLatin1(dl::verdictName(v)); }

// Colours and names of the five severity levels a timeline draws.
struct StatePalette {
    std::array<QColor, dl::kOpStateCount> colors;
    std::array<QString, dl::kOpStateCount> names;
    QColor color(dl::OpState s) const { return colors[static_cast<int>(s)]; }
    QString name(dl::OpState s) const { return names[static_cast<int>(s)]; }

    static const StatePalette& overflow() {
        static const StatePalette p = [] {
            StatePalette x;
            for (int i = 0; i < dl::kOpStateCount; ++i) {
                x.colors[i] = stateColor(dl::OpState(i));
                x.names[i] = stateText(dl::OpState(i));
            }
            return x;
        }();
        return p;
    }
    static const StatePalette& comparison() {
        static const StatePalette p = [] {
            StatePalette x;
            for (int i = 0; i < dl::kCompareStateCount; ++i) {
                x.colors[i] = compareColor(dl::CompareState(i));
                x.names[i] = compareText(dl::CompareState(i));
            }
            return x;
        }();
        return p;
    }
};

}  // namespace dlui
