#include "ui/models/compare_table_model.h"

#include "ui/style/op_names.h"

#include <QBrush>
#include <QColor>
#include <QStringList>
#include <cmath>

#include "core/analysis/tensor_anomaly.h"
#include "ui/models/compare_session.h"
#include "ui/style/figure_text.h"
#include "ui/style/state_colors.h"

namespace dlui {

namespace {

QString num(double v) { return std::isnan(v) ? QStringLiteral("–") : QString::number(v, 'g', 6); }

QString stat(const dl::TensorStats& s, dl::stat::Known m, double v) { return s.has(m) ? num(v) : QStringLiteral("–"); }

QString dtype(const dl::TensorRecord& t) { return QString::fromLatin1(dl::dtypeName(t.dtype).data()); }

dl::CompareSortKey keyOf(int column) {
    switch (column) {
        case CompareTableModel::Cosine:
            return dl::CompareSortKey::Cosine;
        case CompareTableModel::MaxAbsErr:
            return dl::CompareSortKey::MaxAbsErr;
        case CompareTableModel::MaxRelErr:
            return dl::CompareSortKey::MaxRelErr;
        case CompareTableModel::MaxA:
        case CompareTableModel::MaxB:
        case CompareTableModel::MinA:
        case CompareTableModel::MinB:
        case CompareTableModel::MeanA:
        case CompareTableModel::MeanB:
        case CompareTableModel::L2A:
        case CompareTableModel::L2B:
            return dl::CompareSortKey::StatsRelDiff;
        default:
            return dl::CompareSortKey::Order;
    }
}

}  // namespace

CompareTableModel::CompareTableModel(CompareSession* session, QObject* parent)
    : QAbstractTableModel(parent), m_session(session) {
    connect(m_session, &CompareSession::comparisonChanged, this, &CompareTableModel::refresh);
}

void CompareTableModel::setFilter(const dl::CompareRowFilter& filter) {
    m_filter = filter;
    refresh();
}

void CompareTableModel::refresh() {
    beginResetModel();
    m_rows.clear();
    m_viewRow.clear();
    if (const dl::RunComparison* c = m_session->comparison()) {
        m_rows = dl::selectCompareRows(*c, *m_session->indexA(), *m_session->indexB(), m_filter, m_key, m_descending);
        m_viewRow.assign(c->rows.size(), -1);
        for (std::size_t i = 0; i < m_rows.size(); ++i) m_viewRow[m_rows[i]] = int(i);
    }
    endResetModel();
}

int CompareTableModel::viewRowOf(qint64 row) const {
    return row >= 0 && row < qint64(m_viewRow.size()) ? m_viewRow[std::size_t(row)] : -1;
}

int CompareTableModel::rowCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : int(m_rows.size()); }

int CompareTableModel::columnCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : ColumnCount; }

QString CompareTableModel::text(std::uint32_t row, int column) const {
    const dl::RunComparison& c = *m_session->comparison();
    const dl::DumpIndex &a = *m_session->indexA(), &b = *m_session->indexB();
    const dl::TensorPair& p = c.alignment.tensors[row];
    const dl::TensorRecord &ta = a.tensors[p.a], &tb = b.tensors[p.b];
    const dl::OpRecord &oa = a.ops[ta.op], &ob = b.ops[tb.op];
    const dl::TensorComparison& r = c.rows[row];
    const dl::TensorMetrics& m = r.metrics;
    const dl::TensorStats sa = a.stats(ta), sb = b.stats(tb);
    switch (column) {
        case Rank:
            return QString::number(oa.rank);
        case Iteration:
            return QString::number(oa.iteration);
        // The op itself ("SqrtGrad-op154"), not its scope-joined name: at 1366 px every row read
        // "Gradients_Default_network-…". The whole names are in the tooltip.
        case OpA:
            return opNames(a, oa).shortName;
        case OpB:
            return opNames(b, ob).shortName;
        case Match:
            return QString::fromLatin1(dl::matchKindName(c.alignment.ops[p.opPair].kind));
        case Tensor:
            return QString::fromStdString(a.tensorLabel(ta));
        case Shape: {
            QStringList dims;
            for (std::int64_t d : a.shape(ta)) dims << QString::number(d);
            QString s = QLatin1Char('[') + dims.join(QLatin1Char(',')) + QLatin1Char(']');
            return m.shapeMismatch ? s + tr(" ≠ B") : s;
        }
        case DType:
            return ta.dtype == tb.dtype ? dtype(ta) : dtype(ta) + QStringLiteral(" / ") + dtype(tb);
        // Shown figures count infinities, as in the main window's table (core/query/stat_figures.h).
        case MaxA:
            return figureText(sa, dl::StatFigure::Max);
        case MaxB:
            return figureText(sb, dl::StatFigure::Max);
        case MinA:
            return figureText(sa, dl::StatFigure::Min);
        case MinB:
            return figureText(sb, dl::StatFigure::Min);
        case MeanA:
            return figureText(sa, dl::StatFigure::Mean);
        case MeanB:
            return figureText(sb, dl::StatFigure::Mean);
        case L2A:
            return stat(sa, dl::stat::L2, sa.l2);
        case L2B:
            return stat(sb, dl::stat::L2, sb.l2);
        case Cosine:
            return num(m.cosine);
        case MaxAbsErr:
            return num(m.maxAbsErr);
        case MaxRelErr:
            return num(m.maxRelErr);
        case OneThousandth:
            return num(m.oneThousandthRatio);
        case FiveThousandth:
            return num(m.fiveThousandthRatio);
        case Class:
            return verdictText(r.verdict);
        case Status: {
            QString s = qint64(row) == c.firstDivergence ? tr("FIRST DIVERGENCE: ")
                : r.diverged                             ? tr("diverged: ")
                                                         : QString();
            if (!r.diverged)
                s += m.fromData ? tr("%1 (data)").arg(verdictText(r.verdict))
                                : tr("%1 (statistics)").arg(verdictText(r.verdict));
            if (!r.reason.empty())
                s += (r.diverged ? QString() : QStringLiteral(" · ")) + QString::fromStdString(r.reason);
            return s;
        }
    }
    return {};
}

QVariant CompareTableModel::data(const QModelIndex& index, int role) const {
    if (!index.isValid() || !m_session->comparison() || index.row() >= int(m_rows.size())) return {};
    const std::uint32_t row = m_rows[std::size_t(index.row())];
    const dl::RunComparison& c = *m_session->comparison();
    switch (role) {
        case Qt::DisplayRole:
            return text(row, index.column());
        case RowRole:
            return qint64(row);
        case VerdictRole:
            return int(c.rows[row].verdict);
        case Qt::DecorationRole:
            return index.column() == Class ? QVariant(verdictColor(c.rows[row].verdict)) : QVariant();
        case Qt::TextAlignmentRole:
            return index.column() >= MaxA && index.column() <= FiveThousandth
                ? QVariant(Qt::AlignRight | Qt::AlignVCenter)
                : QVariant();
        case Qt::BackgroundRole: {
            // The class's colour, translucent so the palette's text stays readable (light or dark);
            // identical rows stay plain, the first divergence is filled strongest.
            const dl::Verdict v = c.rows[row].verdict;
            if (v == dl::Verdict::Identical || v == dl::Verdict::Unknown) return {};
            QColor col = verdictColor(v);
            col.setAlpha(qint64(row) == c.firstDivergence ? 110 : index.column() == Class ? 80 : 40);
            return QBrush(col);
        }
        case Qt::ToolTipRole:
            if (index.column() == OpA || index.column() == OpB) {
                const dl::TensorPair& p = c.alignment.tensors[row];
                const dl::DumpIndex &a = *m_session->indexA(), &b = *m_session->indexB();
                return tr("A: %1\nB: %2\n%3")
                    .arg(opNames(a, a.ops[a.tensors[p.a].op]).full, opNames(b, b.ops[b.tensors[p.b].op]).full,
                         text(row, Status));
            }
            if (index.column() == Status) return text(row, Status);
            return {};
    }
    return {};
}

QVariant CompareTableModel::headerData(int section, Qt::Orientation o, int role) const {
    if (o != Qt::Horizontal) return role == Qt::DisplayRole ? QVariant(section + 1) : QVariant();
    static const char* names[ColumnCount] = {
        "Rank",   "Iter",      "Op (A)",         "Op (B)",         "Match",           "Tensor", "Shape", "DType",
        "Max A",  "Max B",     "Min A",          "Min B",          "Mean A",          "Mean B", "L2 A",  "L2 B",
        "Cosine", "MaxAbsErr", "MaxRelativeErr", "One Thousandth", "Five Thousandth", "Class",  "Status"};
    if (role == Qt::DisplayRole) return tr(names[section]);
    if (role == Qt::ToolTipRole) {
        switch (section) {
            case Cosine:
                return tr("dot(a,b) / (|a| |b|) over the tensor data (msprobe); – for statistics-only rows");
            case MaxAbsErr:
                return tr("max |a − b| over the elements");
            case MaxRelErr:
                return tr("max |a − b| / |b|, b = 0 compared against machine epsilon (msprobe)");
            case OneThousandth:
                return tr("fraction of elements whose relative error is below 0.001 (1 is perfect)");
            case FiveThousandth:
                return tr("fraction of elements whose relative error is below 0.005 (1 is perfect)");
            case Match:
                return tr("exact: same op name; tolerant: same type and scope, -opN ignored; pinned: mapping file");
            case Status:
                return tr("the threshold the tensor crossed, or why its data was not compared");
            case Class:
                return tr(
                    "identical; precision: changed within the rounding of the runs' coarsest float dtype; "
                    "agree: within msprobe's tests; diverged; nonfinite: NaN/Inf in one run only; "
                    "shape: not comparable; md5: only the checksums differ");
            default:
                return section >= MaxA && section <= L2B ? tr("Sorting by a statistic sorts by the largest relative "
                                                              "difference of max, min, mean and L2")
                                                         : QVariant();
        }
    }
    return {};
}

void CompareTableModel::sort(int column, Qt::SortOrder order) {
    m_key = keyOf(column);
    m_descending = order == Qt::DescendingOrder;
    refresh();
}

}  // namespace dlui
