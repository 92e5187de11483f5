#include "ui/models/dump_session.h"

#include "ui/style/op_names.h"

namespace dlui {

DumpSession::DumpSession(QObject* parent) : QObject(parent) {}

void DumpSession::setDump(LoadedDumpPtr dump) {
    m_dump = std::move(dump);
    m_op = m_tensor = dl::kNoIndex;
    emit dumpChanged();
}

void DumpSession::updateDump(LoadedDumpPtr dump) {
    const dl::DumpIndex* old = index();
    if (!dump || !dump->index || !old || m_op >= old->ops.size()) return setDump(std::move(dump));
    const dl::OpRecord was = old->ops[m_op];
    const std::string name = old->strings.str(was.name);
    const bool hadTensor = m_tensor < old->tensors.size();
    const dl::TensorRecord wasTensor = hadTensor ? old->tensors[m_tensor] : dl::TensorRecord{};
    setDump(std::move(dump));
    const dl::DumpIndex* ix = index();
    for (quint32 op = 0; op < ix->ops.size(); ++op) {
        const dl::OpRecord& o = ix->ops[op];
        if (o.rank != was.rank || o.graph != was.graph || o.iteration != was.iteration || o.execPos != was.execPos ||
            ix->strings.view(o.name) != name)
            continue;
        quint32 tensor = dl::kNoIndex;
        if (hadTensor)
            for (quint32 t = o.firstTensor; t < o.firstTensor + o.tensorCount; ++t)
                if (ix->tensors[t].io == wasTensor.io && ix->tensors[t].slot == wasTensor.slot) tensor = t;
        select(op, tensor);
        return;
    }
}

void DumpSession::select(quint32 op, quint32 tensor) {
    const dl::DumpIndex* ix = index();
    if (!ix || op >= ix->ops.size()) return;
    const dl::OpRecord& o = ix->ops[op];
    if (tensor == dl::kNoIndex || tensor >= ix->tensors.size() || ix->tensors[tensor].op != op) {
        tensor = o.tensorCount ? o.firstTensor : dl::kNoIndex;
        for (quint32 t = o.firstTensor; t < o.firstTensor + o.tensorCount; ++t)
            if (ix->tensors[t].io == dl::Io::Output) {
                tensor = t;
                break;
            }
    }
    if (op == m_op && tensor == m_tensor) return;
    m_op = op;
    m_tensor = tensor;
    emit selectionChanged(op, tensor);
}

void DumpSession::clearSelection() {
    if (m_op == dl::kNoIndex && m_tensor == dl::kNoIndex) return;
    m_op = m_tensor = dl::kNoIndex;
    emit selectionChanged(m_op, m_tensor);
}

int DumpSession::stageOfOp(quint32 op) const {
    const dl::DumpIndex* ix = index();
    if (!ix || op >= ix->ops.size() || !analysis()) return -1;
    return analysis()->stages.stageOf(ix->ops[op].rank);
}

QString DumpSession::opLabel(quint32 op) const {
    const dl::DumpIndex* ix = index();
    if (!ix || op >= ix->ops.size()) return {};
    const dl::OpRecord& o = ix->ops[op];
    return QStringLiteral("%1 (%2) rank %3")
        .arg(opNames(*ix, o).shortName, QString::fromStdString(ix->strings.str(o.type)))
        .arg(o.rank);
}

}  // namespace dlui
