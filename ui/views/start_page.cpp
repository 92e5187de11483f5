#include "ui/views/start_page.h"

#include <QLabel>
#include <QListWidget>
#include <QPushButton>
#include <QVBoxLayout>
#include "ui/style/theme.h"

namespace dlui {

StartPage::StartPage(QWidget* parent) : QWidget(parent), m_recent(new QListWidget(this)) {
    auto* title = new QLabel(tr("<h1>DumpLens</h1><p>Find the first fp16 overflow in MindSpore / CANN / msprobe "
                                "tensor dumps, across ranks and pipeline stages.</p>"),
                             this);
    title->setTextFormat(Qt::RichText);
    title->setWordWrap(true);
    auto* open = new QPushButton(tr("Open dump folder…"), this);
    auto* demo = new QPushButton(tr("Open the bundled demo dump"), this);
    demo->setToolTip(tr("A computed Baichuan2-like fp16 run on 4 pipeline stages whose NormHead SqrtGrad overflows"));
    open->setMinimumHeight(34);
    demo->setMinimumHeight(34);
    auto* hint = new QLabel(tr("…or drop a dump folder on this window."), this);
    hint->setForegroundRole(QPalette::PlaceholderText);  // muted in light and dark palettes
    auto* col = new QVBoxLayout;
    col->addWidget(title);
    col->addSpacing(8);
    col->addWidget(open);
    col->addWidget(demo);
    col->addWidget(hint);
    col->addSpacing(16);
    col->addWidget(new QLabel(tr("<b>Recent folders</b>"), this));
    col->addWidget(m_recent, 1);
    auto* center = new QWidget(this);
    center->setLayout(col);
    center->setMaximumWidth(640);
    auto* outer = new QHBoxLayout(this);
    outer->addStretch(1);
    outer->addWidget(center, 3);
    outer->addStretch(1);
    connect(open, &QPushButton::clicked, this, &StartPage::openFolderRequested);
    connect(demo, &QPushButton::clicked, this, &StartPage::openDemoRequested);
    connect(m_recent, &QListWidget::itemActivated, this,
            [this](QListWidgetItem* item) { emit openRecentRequested(item->text()); });
}

void StartPage::setRecent(const QStringList& folders) {
    m_recent->clear();
    m_recent->addItems(folders);
    if (folders.isEmpty()) {
        auto* none = new QListWidgetItem(tr("(none yet)"), m_recent);
        none->setFlags(Qt::NoItemFlags);
    }
}

}  // namespace dlui
