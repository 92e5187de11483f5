#pragma once
// A dump folder indexed into a LoadedDump outside the app (no cache), for the Qt tests that hand a
// view a dump of their own without the loader: path, ok, error (when not ok), report and index.
#include <QString>
#include <memory>
#include <string>

#include "core/index/dump_indexer.h"
#include "ui/jobs/loaded_dump.h"

namespace dltest {

inline std::shared_ptr<dlui::LoadedDump> indexedDump(const QString& dir) {
    auto d = std::make_shared<dlui::LoadedDump>();
    d->path = dir;
    auto index = std::make_shared<dl::DumpIndex>();
    dl::IndexOptions o;
    o.useCache = false;
    std::string error;
    d->ok = dl::indexDump(dir.toStdString(), o, *index, d->report, error);
    if (!d->ok) d->error = QString::fromStdString(error);
    d->index = index;
    return d;
}

}  // namespace dltest
