#pragma once
// The palettes of the timeline states, shared by the timeline, the tables and the legends: op
// states (overflow analysis) and comparison states (two runs), both five severity levels.
#include <QColor>
#include <QString>
#include <array>

#include "core/compare/compare_overlay.h"
#include "core/query/op_state.h"

namespace dlui {

inline QColor stateColor(dl::OpState s) {
    switch (s) {
        case dl::OpState::Normal: return QColor(0x86, 0xa1, 0xc8);
        case dl::OpState::NearLimit: return QColor(0xf2, 0xb1, 0x34);
        case dl::OpState::Saturated: return QColor(0xe8, 0x59, 0x0c);
        case dl::OpState::InfNan: return QColor(0xc9, 0x2a, 0x2a);
        case dl::OpState::Origin: return QColor(0x9c, 0x36, 0xb5);
    }
    return Qt::gray;
}

inline QString stateText(dl::OpState s) { return QString::fromLatin1(dl::opStateName(s)); }

// Agreement is quiet (grey-green), unmatched ops stand apart (teal), divergence is loud.
inline QColor compareColor(dl::CompareState s) {
    switch (s) {
        case dl::CompareState::Agree: return QColor(0x9c, 0xc4, 0xa4);
        case dl::CompareState::NotCompared: return QColor(0xcf, 0xd3, 0xda);
        case dl::CompareState::Unmatched: return QColor(0x2b, 0x9a, 0xa8);
        case dl::CompareState::Diverged: return QColor(0xe8, 0x59, 0x0c);
        case dl::CompareState::FirstDivergence: return QColor(0xc9, 0x2a, 0x2a);
    }
    return Qt::gray;
}

inline QString compareText(dl::CompareState s) { return QString::fromLatin1(dl::compareStateName(s)); }

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
