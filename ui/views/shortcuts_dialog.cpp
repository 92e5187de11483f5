#include "ui/views/shortcuts_dialog.h"

#include <QDialogButtonBox>
#include <QLabel>
#include <QVBoxLayout>

namespace dlui {

QString ShortcutsDialog::shortcutsHtml() {
    const char* rows[][2] = {
        {"W / S, Ctrl+wheel", "zoom the timeline in / out"},
        {"A / D, drag, Shift+wheel", "pan the timeline"},
        {"Shift+drag or right-drag", "zoom to the dragged time range"},
        {"Ctrl+drag, or drag on the ruler", "select an area: its summary and ops in the Details panel, sortable"},
        {"click the ruler, or M", "count the ruler from a mark there (again: remove it)"},
        {"F", "fit the selected op"},
        {"Enter / Shift+Enter in the filter, F3 / Shift+F3",
         "next / previous op the filter matches, centred on the timeline"},
        {"click a stage header", "fold or unfold the stage's lanes"},
        {"Backspace", "undo the last range zoom"},
        {"0 or Home", "show the whole iteration"},
        {"Esc", "clear the selection (timeline, table, tensor, chain)"},
        {"wheel", "scroll lanes"},
        {"click overview strip", "jump there"},
        {"Ctrl+O", "open a dump folder"},
        {"Ctrl+Alt+O", "open a .dlx index file"},
        {"Ctrl+Shift+W", "watch a folder while training writes it"},
        {"Ctrl+E", "export the PDF report"},
        {"Ctrl+C", "copy the selected table rows (tab-separated)"},
        {"right-click an op or a row", "copy its name or file path, open its folder, compare it, export its histogram"},
        {"Ctrl+J", "jump to the first overflow"},
        {"Ctrl+F", "filter the op table"},
        {"Ctrl+Shift+O", "compare the open run with another run"},
        {"Ctrl+J (compare window)", "jump to the first divergence"},
        {"? or F1", "this help"},
    };
    QString html = QStringLiteral("<table cellspacing=6>");
    for (const auto& r : rows)
        html += QStringLiteral("<tr><td><b>%1</b></td><td>%2</td></tr>").arg(QLatin1String(r[0]), QObject::tr(r[1]));
    return html + QStringLiteral("</table>");
}

ShortcutsDialog::ShortcutsDialog(QWidget* parent) : QDialog(parent) {
    setWindowTitle(tr("Keyboard shortcuts"));
    auto* label = new QLabel(shortcutsHtml(), this);
    label->setTextFormat(Qt::RichText);
    auto* buttons = new QDialogButtonBox(QDialogButtonBox::Close, this);
    auto* lay = new QVBoxLayout(this);
    lay->addWidget(label);
    lay->addWidget(buttons);
    connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
}

}  // namespace dlui
