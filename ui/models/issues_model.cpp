#include "ui/models/issues_model.h"

#include <QGuiApplication>

#include <QColor>
#include "ui/style/theme.h"

namespace dlui {

IssuesModel::IssuesModel(QObject* parent) : QAbstractTableModel(parent) {}

void IssuesModel::setDump(const LoadedDump* d) {
    beginResetModel();
    m_issues.clear();
    if (d) {
        if (!d->ok) m_issues.push_back({tr("error"), tr("open"), d->path, d->error});
        if (d->index)
            for (const dl::IndexWarning& w : d->index->warnings)
                m_issues.push_back(
                    {tr("warning"), tr("index"), QString::fromStdString(w.path), QString::fromStdString(w.reason)});
        for (const std::string& n : d->report.cacheNotes)
            m_issues.push_back({tr("note"), tr("cache"), {}, QString::fromStdString(n)});
        if (d->analysis)
            for (const std::string& w : d->analysis->warnings)
                m_issues.push_back({tr("warning"), tr("analysis"), {}, QString::fromStdString(w)});
    }
    endResetModel();
}

void IssuesModel::addError(const QString& source, const QString& path, const QString& reason) {
    const int row = static_cast<int>(m_issues.size());
    beginInsertRows({}, row, row);
    m_issues.push_back({tr("error"), source, path, reason});
    endInsertRows();
}

void IssuesModel::clear() { setDump(nullptr); }

int IssuesModel::rowCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : static_cast<int>(m_issues.size());
}

int IssuesModel::columnCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : ColumnCount; }

QVariant IssuesModel::data(const QModelIndex& index, int role) const {
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid)) return {};
    const Issue& i = m_issues[static_cast<std::size_t>(index.row())];
    if (role == Qt::ForegroundRole && index.column() == Severity && i.severity == tr("error"))
        return theme::textFor(theme::kErrorText, QGuiApplication::palette());
    if (role != Qt::DisplayRole && role != Qt::ToolTipRole) return {};
    switch (index.column()) {
        case Severity:
            return i.severity;
        case Source:
            return i.source;
        case Path:
            return i.path;
        case Reason:
            return i.reason;
        default:
            return {};
    }
}

QVariant IssuesModel::headerData(int section, Qt::Orientation o, int role) const {
    if (o != Qt::Horizontal || role != Qt::DisplayRole) return {};
    static const char* names[] = {"Severity", "Source", "Path", "Reason"};
    return section >= 0 && section < ColumnCount ? tr(names[section]) : QVariant();
}

}  // namespace dlui
