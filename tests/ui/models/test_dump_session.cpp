// DumpSession::updateDump, a watched folder's next index: the op picked stays picked though its
// index moved (the files of an earlier rank landed and are merged before it), and so does its
// tensor (by io and slot); an op the new index lacks leaves nothing selected, as setDump does.
#include <QSignalSpy>
#include <QTest>

#include "ui/models/dump_session.h"

using namespace dlui;

namespace {

// Ops Add-op1, Mul-op2 per rank and iteration, each with an input and an output tensor; the
// ranks in the order given (the merged index puts shards in folder order).
LoadedDumpPtr dumpOf(const std::vector<std::uint32_t>& ranks, std::uint32_t iterations) {
    auto ix = std::make_shared<dl::DumpIndex>();
    for (std::uint32_t r : ranks)
        for (std::uint32_t it = 0; it < iterations; ++it)
            for (std::uint32_t k = 0; k < 2; ++k) {
                dl::OpRecord o;
                o.rank = r;
                o.iteration = it;
                o.type = ix->strings.intern(k ? "Mul" : "Add");
                o.name = ix->strings.intern(k ? "Mul-op2" : "Add-op1");
                o.execPos = k;
                o.firstTensor = std::uint32_t(ix->tensors.size());
                o.tensorCount = 2;
                for (int io = 0; io < 2; ++io) {
                    dl::TensorRecord t;
                    t.op = std::uint32_t(ix->ops.size());
                    t.io = io ? dl::Io::Output : dl::Io::Input;
                    ix->tensors.push_back(t);
                }
                ix->ops.push_back(o);
            }
    auto d = std::make_shared<LoadedDump>();
    d->path = QStringLiteral("/watched");
    d->ok = d->live = true;
    d->index = ix;
    return d;
}

}  // namespace

class TstDumpSession : public QObject {
    Q_OBJECT
private slots:
    void thePickedOpSurvivesAGrownIndex() {
        DumpSession s;
        s.setDump(dumpOf({1}, 2));
        // Rank 1, iteration 1, Mul-op2: op 3; its input tensor picked (not the default output).
        s.select(3, 6);
        QCOMPARE(s.currentOp(), quint32(3));
        QCOMPARE(s.currentTensor(), quint32(6));
        QSignalSpy changed(&s, &DumpSession::dumpChanged);
        s.updateDump(dumpOf({0, 1}, 3));  // rank 0 landed: rank 1's ops moved up by 6
        QCOMPARE(changed.count(), 1);
        const dl::DumpIndex& ix = *s.index();
        QVERIFY(s.currentOp() != quint32(3));
        const dl::OpRecord& o = ix.ops[s.currentOp()];
        QCOMPARE(o.rank, 1u);
        QCOMPARE(o.iteration, 1u);
        QCOMPARE(ix.strings.str(o.name), std::string("Mul-op2"));
        QVERIFY(s.currentTensor() < ix.tensors.size());
        QCOMPARE(ix.tensors[s.currentTensor()].op, s.currentOp());
        QCOMPARE(ix.tensors[s.currentTensor()].io, dl::Io::Input);
    }

    void anOpTheNewIndexLacksLeavesNoSelection() {
        DumpSession s;
        s.setDump(dumpOf({0, 1}, 2));
        s.select(7);                   // rank 1, iteration 1, Mul-op2
        s.updateDump(dumpOf({0}, 2));  // rank 1's files were removed
        QCOMPARE(s.currentOp(), dl::kNoIndex);
        QCOMPARE(s.currentTensor(), dl::kNoIndex);
    }

    void withoutASelectionItIsSetDump() {
        DumpSession s;
        s.setDump(dumpOf({0}, 1));
        s.updateDump(dumpOf({0, 1}, 1));
        QCOMPARE(s.currentOp(), dl::kNoIndex);
        QCOMPARE(s.index()->ops.size(), std::size_t(4));
    }
};

QTEST_GUILESS_MAIN(TstDumpSession)
#include "test_dump_session.moc"
