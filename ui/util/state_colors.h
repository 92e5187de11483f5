#pragma once
// One palette for op states, shared by the timeline, the table and the legend.
#include <QColor>
#include <QString>

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

}  // namespace dlui
