#pragma once
// An op's readable names for the views (dl::opDisplayName as QStrings): the short op a row, label
// or banner shows, the scope shown dimmed and elided from the left, and the full name of the
// tooltip and "Copy full name".
#include <QString>

#include "core/model/dump_index.h"
#include "core/util/op_name.h"

namespace dlui {

struct OpNames {
    QString shortName, scope, full;
};

inline QString fromView(std::string_view s) { return QString::fromUtf8(s.data(), static_cast<qsizetype>(s.size())); }

inline OpNames opNames(const dl::DumpIndex& ix, const dl::OpRecord& o) {
    const dl::OpDisplayName d = dl::opDisplayName(ix.strings.view(o.name), ix.strings.view(o.scope));
    return {fromView(d.shortName), fromView(d.scope), fromView(d.full)};
}

}  // namespace dlui
