#pragma once
// Errors, index warnings, cache notes and analysis warnings in one list (instead of modal boxes).
#include <QAbstractTableModel>
#include <QString>
#include <vector>

#include "ui/jobs/loaded_dump.h"

namespace dlui {

class IssuesModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column { Severity, Source, Path, Reason, ColumnCount };
    struct Issue {
        QString severity, source, path, reason;
    };
    explicit IssuesModel(QObject* parent = nullptr);

    void setDump(const LoadedDump* dump);  // replaces the warnings of the previous dump
    void addError(const QString& source, const QString& path, const QString& reason);
    void clear();

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role) const override;
    QVariant headerData(int section, Qt::Orientation o, int role) const override;

private:
    std::vector<Issue> m_issues;
};

}  // namespace dlui
