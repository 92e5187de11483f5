#pragma once
// The look and behaviour shared by the app's big tables: single row selection, header-click
// sorting handed to the model (which sorts in the core), compact rows, and fixed interactive
// column widths, because ResizeToContents over millions of rows would stall.
class QTableView;

namespace dlui {

void setupDataTable(QTableView* view, int defaultColumnWidth);

}  // namespace dlui
