#include "ui/jobs/dump_watcher.h"

#include <QFileInfo>

#include "core/watch/dump_watch.h"
#include "ui/jobs/background_task.h"
#include "ui/jobs/dump_loader.h"

namespace dlui {

namespace {

QString qs(const std::string& s) { return QString::fromStdString(s); }

WatchProgress progressOf(const nlohmann::json& j) {
    WatchProgress p;
    p.filesIndexed = j.value("files", 0ull);
    p.filesBeingWritten = j.value("files_being_written", 0ull);
    p.tensors = j.value("tensors", 0ull);
    p.ops = j.value("ops", 0ull);
    p.behindMs = j.value("behind_ms", 0ll);
    std::set<std::uint32_t> ranks;
    if (j.contains("ranks") && j["ranks"].is_array())
        for (const auto& r : j["ranks"]) ranks.insert(r.get<std::uint32_t>());
    p.ranks = ranks.empty() ? QStringLiteral("none") : qs(dl::numberRanges(ranks));
    const std::uint64_t count = j.value("iterations", 0ull);
    if (!count || !j["first_iteration"].is_number()) {
        p.iterations = QStringLiteral("none");
    } else {
        const auto first = j["first_iteration"].get<std::uint32_t>(), last = j["last_iteration"].get<std::uint32_t>();
        p.iterations = first == last    ? QString::number(first)
            : count == last - first + 1 ? QStringLiteral("%1-%2").arg(first).arg(last)
                                        : QStringLiteral("%1 of %2-%3").arg(count).arg(first).arg(last);
    }
    return p;
}

}  // namespace

DumpWatcher::DumpWatcher(QObject* parent)
    : QObject(parent), m_watch(new BackgroundTask(this)), m_analysis(new BackgroundTask(this)) {
    qRegisterMetaType<dlui::WatchProgress>();
}

DumpWatcher::~DumpWatcher() {
    // The tasks stop their jobs as they go; the watch thread returns within its poll (100 ms).
    m_watch->cancel();
    m_analysis->cancel();
}

void DumpWatcher::start(const QString& dir, const WatchSettings& settings) {
    const quint64 gen = ++m_generation;
    m_dir = dir;
    m_watching = true;
    m_found = m_analysing = m_final = false;
    m_pending.reset();
    m_last.reset();
    m_analysis->cancel();
    if (!QFileInfo(dir).isDir()) emit waitingForFolder(dir);
    m_watch->start([this, dir, settings, gen](std::stop_token stop, const BackgroundTask::Post& post) {
        // The job itself never touches `this`: only what it posts does, on the GUI thread.
        dl::WatchOptions o;
        o.dir = dir.toStdString();
        o.settleMs = settings.settleMs;
        o.useInotify = settings.useInotify;
        o.progressIntervalMs = settings.progressIntervalMs;
        o.snapshotIntervalMs = settings.snapshotIntervalMs;
        o.stop = stop;
        o.onSnapshot = [this, post, gen](std::shared_ptr<const dl::DumpIndex> index) {
            post([this, index, gen] {
                if (gen == m_generation) onSnapshot(index);
            });
        };
        const auto sink = [this, post](const dl::WatchEvent& e) {
            switch (e.kind) {
                case dl::WatchEventKind::Watching: {
                    const QString abs = qs(e.json.value("dir", std::string())),
                                  mode = qs(e.json.value("mode", std::string()));
                    post([this, abs, mode] {
                        m_found = true;
                        emit watching(abs, mode);
                    });
                    break;
                }
                case dl::WatchEventKind::Progress: {
                    const WatchProgress p = progressOf(e.json);
                    post([this, p] { emit progress(p); });
                    break;
                }
                case dl::WatchEventKind::Overflow: {
                    const QString text = qs(e.text);
                    const bool moved = !e.json["moved_from"].is_null();
                    post([this, text, moved] { emit overflowFound(text, moved); });
                    break;
                }
                case dl::WatchEventKind::Warning: {
                    const QString path = qs(e.json.value("path", std::string())),
                                  reason = qs(e.json.value("reason", std::string()));
                    const bool unreadable = e.json.value("severity", std::string()) == "unreadable";
                    post([this, path, reason, unreadable] { emit warning(path, reason, unreadable); });
                    break;
                }
                case dl::WatchEventKind::Note: {
                    // "waiting for DIR to appear": said by start() already (waitingForFolder).
                    if (e.text.starts_with("waiting for ")) break;
                    const QString text = qs(e.text);
                    post([this, text] { emit note(text); });
                    break;
                }
                case dl::WatchEventKind::Stopped:
                    break;  // the summary below says it, also when the folder was not usable
            }
        };
        const dl::WatchSummary s = dl::watchDump(o, sink);
        const QString summary = qs(s.text), error = s.ok ? QString() : qs(s.error);
        post([this, summary, error, gen] {
            if (gen != m_generation) return;
            m_watching = false;
            emit stopped(summary, error);
            // The last index once more, with the full analysis an Open gives.
            m_final = true;
            if (m_last) m_pending = m_last;
            analyseNext();
        });
    });
}

void DumpWatcher::stop() {
    if (m_watching) m_watch->cancel();
}

void DumpWatcher::cancel() {
    ++m_generation;
    m_watching = m_analysing = false;
    m_pending.reset();
    m_last.reset();
    m_watch->cancel();
    m_analysis->cancel();
}

void DumpWatcher::onSnapshot(std::shared_ptr<const dl::DumpIndex> index) {
    m_last = index;
    m_pending = std::move(index);  // a newer one replaces one still waiting
    analyseNext();
}

void DumpWatcher::analyseNext() {
    if (m_analysing || !m_pending) return;
    std::shared_ptr<const dl::DumpIndex> index = std::move(m_pending);
    m_pending.reset();
    const bool live = !m_final;
    const QString path = m_dir;
    const quint64 gen = m_generation;
    m_analysing = true;
    m_analysis->start([this, index, live, path, gen](std::stop_token stop, const BackgroundTask::Post& post) {
        auto dump = std::make_shared<LoadedDump>();
        dump->path = path;
        dump->ok = true;
        dump->live = live;
        dump->index = index;
        dl::AnalysisOptions options;
        if (live) {  // as the watcher analyses: nothing but the index is read
            options.replay = false;
            options.readGraphIr = false;
        }
        const bool done = analyseDump(*dump, stop, options);
        post([this, dump, done, gen] {
            if (gen != m_generation) return;
            m_analysing = false;
            if (done) emit dumpUpdated(dump);
            analyseNext();
        });
    });
}

}  // namespace dlui
