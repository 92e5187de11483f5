#include "ui/views/loading_page.h"

#include <QLabel>
#include <QLocale>
#include <QProgressBar>
#include <QPushButton>
#include <QVBoxLayout>

#include "core/util/progress.h"

namespace dlui {

LoadingPage::LoadingPage(QWidget* parent)
    : QWidget(parent),
      m_title(new QLabel(this)),
      m_stage(new QLabel(this)),
      m_detail(new QLabel(this)),
      m_bar(new QProgressBar(this)),
      m_cancel(new QPushButton(tr("Cancel"), this)) {
    m_title->setWordWrap(true);
    m_bar->setRange(0, 0);  // busy until the first real figure
    auto* col = new QVBoxLayout;
    col->addStretch(1);
    col->addWidget(m_title);
    col->addWidget(m_stage);
    col->addWidget(m_bar);
    col->addWidget(m_detail);
    col->addWidget(m_cancel, 0, Qt::AlignLeft);
    col->addStretch(2);
    auto* outer = new QHBoxLayout(this);
    outer->addStretch(1);
    outer->addLayout(col, 3);
    outer->addStretch(1);
    connect(m_cancel, &QPushButton::clicked, this, &LoadingPage::cancelRequested);
}

void LoadingPage::begin(const QString& path) {
    m_title->setText(tr("<b>Opening</b> %1").arg(path.toHtmlEscaped()));
    m_stage->clear();
    m_detail->clear();
    m_bar->setRange(0, 0);
    m_timer.start();
    m_phase = -1;
}

void LoadingPage::setStage(const QString& text) {
    m_stage->setText(text);
    if (!text.startsWith(tr("Indexing"))) m_bar->setRange(0, 0);
}

bool LoadingPage::isDeterminate() const { return m_bar->maximum() > 0; }

int LoadingPage::barValue() const { return isDeterminate() ? m_bar->value() : -1; }

void LoadingPage::setProgress(quint64 filesDone, quint64 filesTotal, quint64 bytesDone, quint64 bytesTotal, int phase) {
    const QLocale loc;
    if (phase != m_phase) {
        m_phase = phase;
        m_timer.start();  // the time left counts from this pass's start
    }
    if (phase == int(dl::ProgressPhase::Listing)) {
        // Names and statistic.csv rows, shard by shard: files are the only measure known yet.
        if (!filesTotal) return;
        m_bar->setRange(0, 1000);
        m_bar->setValue(static_cast<int>(double(filesDone) / double(filesTotal) * 1000));
        m_detail->setText(
            tr("Listing names and statistics: %1 of %2 files").arg(loc.toString(filesDone), loc.toString(filesTotal)));
        return;
    }
    // Bytes drive the bar (files differ wildly in size); files only when no byte total is known.
    const double frac =
        bytesTotal ? double(bytesDone) / double(bytesTotal) : (filesTotal ? double(filesDone) / double(filesTotal) : 0);
    m_bar->setRange(0, 1000);
    m_bar->setValue(static_cast<int>(frac * 1000));
    QString detail = tr("%1 of %2 files · %3 of %4")
                         .arg(loc.toString(filesDone), loc.toString(filesTotal),
                              loc.formattedDataSize(static_cast<qint64>(bytesDone)),
                              loc.formattedDataSize(static_cast<qint64>(bytesTotal)));
    const double elapsed = m_timer.elapsed() / 1000.0;
    if (frac > 0.02 && elapsed > 1)
        detail += tr(" · about %1 s left").arg(static_cast<int>(elapsed * (1 - frac) / frac + 0.5));
    m_detail->setText(detail);
}

}  // namespace dlui
