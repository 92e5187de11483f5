#pragma once
// The context menu of an op, the same on the timeline and in the table: copy its names and its
// tensor's file path, open the containing folder, compare the tensor in an open compare window,
// export the tensor's histogram as PNG or CSV, and go to its communication partner.
#include <QString>
#include <functional>

#include "core/analysis/analysis_result.h"
#include "core/model/dump_index.h"

class QMenu;
class QWidget;

namespace dlui {

struct OpMenuHooks {
    std::function<void(quint32 tensor)> compareTensor;  // null: no compare window (the action is disabled)
    std::function<void(quint32 op)> goToOp;             // null: no "Go to" actions
    std::vector<std::pair<QString, quint32>> goTo;      // ("Go to its Receive", op) entries
};

// Object names of the actions, for tests and for code that looks one up.
namespace opmenu {
inline constexpr const char* kCopyName = "copyShortName";
inline constexpr const char* kCopyFullName = "copyFullName";
inline constexpr const char* kCopyPath = "copyFilePath";
inline constexpr const char* kOpenFolder = "openFolder";
inline constexpr const char* kCompare = "compareTensor";
inline constexpr const char* kExportPng = "exportHistogramPng";
inline constexpr const char* kExportCsv = "exportHistogramCsv";
}  // namespace opmenu

// Fills `menu` for op (and tensor: kNoIndex picks the op's first output, else first tensor).
void fillOpMenu(QMenu& menu, QWidget* parent, const dl::DumpIndex& index, quint32 op, quint32 tensor,
                const OpMenuHooks& hooks);
// The tensor shown for op when none is picked: its first output, else its first tensor; kNoIndex without tensors.
quint32 defaultTensorOf(const dl::DumpIndex& index, quint32 op);
// Writes the tensor's log2 histogram; false with `error` naming the file or the missing histogram.
bool exportHistogramPng(const dl::DumpIndex& index, quint32 tensor, const QString& path, QString& error);
bool exportHistogramCsv(const dl::DumpIndex& index, quint32 tensor, const QString& path, QString& error);

}  // namespace dlui
