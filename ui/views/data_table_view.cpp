#include "ui/views/data_table_view.h"

#include <QHeaderView>
#include <QTableView>

namespace dlui {

void setupDataTable(QTableView* view, int defaultColumnWidth) {
    view->setSortingEnabled(true);
    view->sortByColumn(-1, Qt::AscendingOrder);  // execution order until a header is clicked
    view->setSelectionBehavior(QAbstractItemView::SelectRows);
    view->setSelectionMode(QAbstractItemView::SingleSelection);
    view->setAlternatingRowColors(true);
    view->verticalHeader()->setDefaultSectionSize(20);
    view->verticalHeader()->hide();
    view->horizontalHeader()->setSectionResizeMode(QHeaderView::Interactive);
    view->horizontalHeader()->setDefaultSectionSize(defaultColumnWidth);
}

}  // namespace dlui
