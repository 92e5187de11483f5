#pragma once
// The app's identity from the embedded resources (resources/dumplens.qrc): its icon and the
// About box, with the version from CMake's project(VERSION).
#include <QIcon>
#include <QString>

class QWidget;

namespace dlui {

QIcon appIcon();      // every embedded PNG size; null icon if the resources are missing
QString aboutText();  // resources/about.html with the version and Qt version filled in
void showAboutDialog(QWidget* parent);

}  // namespace dlui
