#include "ui/models/chain_model.h"

#include <QColor>
#include <QFont>

#include "ui/style/op_names.h"
#include "ui/style/state_colors.h"

namespace dlui {

ChainModel::ChainModel(QObject* parent) : QAbstractTableModel(parent) {}

void ChainModel::setSource(const dl::DumpIndex* index, const dl::AnalysisResult* analysis) {
    beginResetModel();
    m_index = index && analysis ? index : nullptr;
    m_analysis = m_index ? analysis : nullptr;
    endResetModel();
}

int ChainModel::rowCount(const QModelIndex& parent) const {
    return parent.isValid() || !m_analysis ? 0 : static_cast<int>(m_analysis->chain.size());
}

int ChainModel::columnCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : ColumnCount; }

QVariant ChainModel::data(const QModelIndex& index, int role) const {
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid)) return {};
    const dl::ChainStep& s = m_analysis->chain[static_cast<std::size_t>(index.row())];
    const dl::OverflowPoint& p = s.at;
    const bool opKnown = p.op < m_index->ops.size();
    if (role == OpRole) return p.op;
    if (role == TensorRole) return p.tensor;
    if (role == Qt::FontRole && s.role == dl::ChainRole::Origin) {
        QFont f;
        f.setBold(true);
        return f;
    }
    if (role == Qt::DecorationRole && index.column() == Role)
        return stateColor(s.role == dl::ChainRole::Origin ? dl::OpState::Origin : dl::OpState::Saturated);
    if (role == Qt::ToolTipRole && index.column() == Op && opKnown) return opNames(*m_index, m_index->ops[p.op]).full;
    if (role != Qt::DisplayRole) return {};
    switch (index.column()) {
        case Step:
            return index.row() + 1;
        case Role:
            return QString::fromLatin1(dl::chainRoleName(s.role));
        case From:
            return s.causedBy < 0
                ? QStringLiteral("–")
                : QStringLiteral("%1 · %2")
                      .arg(s.causedBy + 1)
                      .arg(QString::fromLatin1(dl::chainViaName(s.via)).replace(QLatin1Char('_'), QLatin1Char(' ')));
        case Rank: {
            QString r = QString::number(p.rank);
            for (std::uint32_t peer : p.peerRanks) r += QStringLiteral(",%1").arg(peer);
            return r;
        }
        case Stage:
            return p.stage < 0 ? QStringLiteral("?") : QString::number(p.stage);
        case Iteration:
            return p.iteration;
        case Op:
            if (!opKnown) return QStringLiteral("?");
            return QStringLiteral("%1 (%2)").arg(opNames(*m_index, m_index->ops[p.op]).shortName,
                                                 QString::fromStdString(m_index->strings.str(m_index->ops[p.op].type)));
        case Kind:
            return QString::fromLatin1(dl::anomalyKindName(p.kind));
        case Time:
            // No time difference where no message ties the step's clock to the origin's (overflow-only
            // dumps): raw clocks of different machines are not comparable.
            if (!m_analysis->chainOrderedByClock || !s.clockAligned || !m_analysis->chain.front().clockAligned)
                return QStringLiteral("–");
            {
                const qint64 d = s.alignedUs - m_analysis->chain.front().alignedUs;
                return (d >= 0 ? QStringLiteral("+%L1") : QStringLiteral("%L1")).arg(d);
            }
        case Note:
            return QString::fromStdString(s.note);
        default:
            return {};
    }
}

QVariant ChainModel::headerData(int section, Qt::Orientation o, int role) const {
    if (o != Qt::Horizontal || role != Qt::DisplayRole) return {};
    static const char* names[] = {"#", "Role", "From", "Rank", "Stage", "Iter", "Op", "Kind", "µs after origin", "Why"};
    return section >= 0 && section < ColumnCount ? tr(names[section]) : QVariant();
}

}  // namespace dlui
