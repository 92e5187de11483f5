#include "core/watch/folder_watcher.h"

#include <poll.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>
#include <xxhash.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <thread>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include "core/index/dump_scanner.h"
#include "core/watch/file_completeness.h"

namespace dl {
namespace {

using Clock = std::chrono::steady_clock;

constexpr std::uint32_t kDirMask = IN_CREATE | IN_MODIFY | IN_CLOSE_WRITE | IN_MOVED_TO | IN_MOVED_FROM | IN_DELETE |
    IN_DELETE_SELF | IN_MOVE_SELF | IN_ONLYDIR;

std::int64_t stampOf(const struct stat& st) {
    return fileStamp(std::int64_t(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec,
                     std::int64_t(st.st_ctim.tv_sec) * 1000000000 + st.st_ctim.tv_nsec, std::uint64_t(st.st_ino));
}

// File systems whose files other machines write: inotify sees only this machine's writes there.
const char* networkFileSystem(const std::string& path) {
    struct statfs fs {};
    if (::statfs(path.c_str(), &fs) != 0) return nullptr;
    switch (static_cast<unsigned long>(fs.f_type)) {
        case 0x6969:
            return "NFS";
        case 0xFF534D42:
            return "CIFS";
        case 0xFE534D42:
            return "SMB2";
        case 0x0BD00BD0:
            return "Lustre";
        case 0x47504653:
            return "GPFS";
        case 0x00C36400:
            return "CephFS";
        case 0x65735546:
            return "FUSE";
        default:
            return nullptr;
    }
}

}  // namespace

struct FolderWatcher::Impl {
    struct Tracked {
        std::uint64_t size = 0;
        std::int64_t mtimeNs = 0, stamp = 0;
        Clock::time_point stillSince;
        bool closed = false;        // closed (or renamed in) after the last change we saw
        bool reported = false;      // handed on at this size and stamp
        bool everReported = false;  // its removal is news
        int completeAt = -1;        // looksComplete() of this size and stamp: -1 not asked yet
        bool statFresh = false;     // size and stamp taken during this poll: collectComplete need not again
        bool stated = false;        // looked at once: a name only created (no stat yet) is not
    };
    std::string root;
    FolderWatcherOptions opt;
    bool present = false;
    int fd = -1;                                      // inotify, -1 when rescanning
    std::unordered_map<int, std::string> dirOfWatch;  // watch descriptor -> folder rel
    std::unordered_map<std::string, Tracked> files;
    std::unordered_set<std::string> incomplete;  // rels not reported at their current state
    std::vector<std::string> notes;
    std::vector<std::string> removed, removedFolders;
    Clock::time_point lastRescan{};
    std::chrono::milliseconds rescanTook{0};  // the walk of a large tree is paced by its own cost

    std::string abs(const std::string& rel) const { return rel.empty() ? root : root + "/" + rel; }

    enum class Seen { Scan, Write, Close };
    // A file event or a scan found `rel`: its size and stamp now; a change restarts the settling.
    // A write event means a writer holds it open, whatever the size says (its close comes later).
    void touch(const std::string& rel, Seen how, Clock::time_point now) {
        // A write event needs no stat: the file stays incomplete until its close (which stats
        // it), or until collectComplete sees its size and stamp stay still. A file created and
        // closed between two polls is so looked at once, not three times (~9 us a file on ext4).
        if (how == Seen::Write) {
            const auto it = files.find(rel);
            if (it == files.end()) {
                Tracked& t = files[rel];
                if (fd >= 0) t.everReported = true;  // forgotten after it was handed on: its removal is news
                t.stillSince = now;
                incomplete.insert(rel);
                return;
            }
            if (!it->second.reported) {
                it->second.closed = false;
                it->second.stillSince = now;
                return;
            }
        }
        struct stat st {};
        if (::stat(abs(rel).c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return;
        const bool known = files.count(rel) != 0;
        Tracked& t = files[rel];
        if (!known && fd >= 0) t.everReported = true;  // forgotten after it was handed on: its removal is news
        const std::int64_t stamp = stampOf(st);
        t.statFresh = t.stated = true;
        if (t.stamp != stamp || t.size != std::uint64_t(st.st_size) || t.stillSince == Clock::time_point{}) {
            t.size = std::uint64_t(st.st_size);
            t.mtimeNs = std::int64_t(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec;
            t.stamp = stamp;
            t.stillSince = now;
            t.reported = false;
            t.completeAt = -1;
            t.closed = false;
            incomplete.insert(rel);
        }
        if (how == Seen::Write) t.closed = false;
        if (how == Seen::Close) t.closed = true;
    }

    void forget(const std::string& rel) {
        const auto it = files.find(rel);
        if (it == files.end()) {
            if (fd >= 0) removed.push_back(rel);  // forgotten once handed on (or never seen: harmless)
            return;
        }
        if (it->second.everReported) removed.push_back(rel);
        incomplete.erase(rel);
        files.erase(it);
    }

    // Watches `rel` and every folder below it, and looks at the files already there (made before
    // the watch was in place: a folder created with its files in it).
    void addTree(const std::string& rel, Clock::time_point now, int depth = 0) {
        if (depth > 32) return;
        watchFolder(rel);
        // A subfolder the scan finds is watched only after the scan read it: a file made there in
        // between has no event. So scan again until a pass finds no folder that was not watched
        // yet; then every folder was read after its watch existed (seen missing 10 of 1,701
        // files under a loaded test suite).
        for (int pass = 0; pass < 16; ++pass) {
            const std::size_t watched = dirOfWatch.size();
            const ScanResult scan = scanFolder(abs(rel), {}, 32 - depth);
            for (const ScannedFile& f : scan.files) {
                const std::string fileRel = rel.empty() ? f.rel : rel + "/" + f.rel;
                touch(fileRel, Seen::Scan, now);
                if (fd >= 0) {  // the folders of this file: watched too (made before our watch)
                    for (std::size_t at = f.rel.find('/'); at != std::string::npos; at = f.rel.find('/', at + 1)) {
                        const std::string dir = rel.empty() ? f.rel.substr(0, at) : rel + "/" + f.rel.substr(0, at);
                        if (!watchFolder(dir)) break;
                    }
                }
            }
            // Empty folders have no file to name them: scan lists files only.
            if (fd >= 0) addEmptyFolders(rel, depth);
            if (fd < 0 || dirOfWatch.size() == watched) break;
        }
    }

    // One inotify watch per folder. A folder that cannot be watched would hear of no file: the
    // watcher goes over to rescanning, and says why. ENOSPC: a long run's iteration folders pass
    // the per-user limit (fs.inotify.max_user_watches, ~190k on this 24 GiB machine).
    bool watchFolder(const std::string& rel) {
        if (fd < 0) return false;
        const int wd = ::inotify_add_watch(fd, abs(rel).c_str(), kDirMask);
        if (wd >= 0) {
            dirOfWatch[wd] = rel;
            return true;
        }
        if (errno == ENOENT || errno == ENOTDIR) return false;  // removed meanwhile: nothing to hear of
        const std::string why = errno == ENOSPC ? "the per-user limit of watched folders is reached; raise it with "
                                                  "`sysctl fs.inotify.max_user_watches=1048576`"
                                                : std::string(std::strerror(errno));
        notes.push_back("inotify cannot watch " + abs(rel) + " (" + why + "); rescanning the folder instead");
        stopInotify();
        return false;
    }

    void addEmptyFolders(const std::string& rel, int depth) {
        if (depth > 32 || fd < 0) return;
        std::error_code ec;
        for (std::filesystem::directory_iterator it(abs(rel), ec), end; !ec && it != end; it.increment(ec)) {
            if (!it->is_directory(ec) || it->is_symlink(ec)) continue;
            const std::string child =
                rel.empty() ? it->path().filename().string() : rel + "/" + it->path().filename().string();
            if (!watchFolder(child)) return;
            addEmptyFolders(child, depth + 1);
        }
    }

    void stopInotify() {
        if (fd >= 0) ::close(fd);
        fd = -1;
        dirOfWatch.clear();
    }

    // Without events: every file of the tree, compared with what we knew.
    void rescan(Clock::time_point now) {
        lastRescan = now;
        const ScanResult scan = scanFolder(root);
        rescanTook = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - now);
        std::unordered_set<std::string> seen;
        seen.reserve(scan.files.size());
        for (const ScannedFile& f : scan.files) {
            seen.insert(f.rel);
            const auto it = files.find(f.rel);
            if (it == files.end() || it->second.size != f.size || it->second.stamp != f.stamp)
                touch(f.rel, Seen::Scan, now);
        }
        std::vector<std::string> gone;
        for (const auto& [rel, t] : files)
            if (!seen.count(rel)) gone.push_back(rel);
        for (const auto& rel : gone) forget(rel);
    }

    void readEvents(Clock::time_point now) {
        alignas(struct inotify_event) char buf[64 * 1024];
        while (fd >= 0) {
            const ssize_t n = ::read(fd, buf, sizeof buf);
            if (n <= 0) return;  // EAGAIN: drained
            for (char* p = buf; p < buf + n;) {
                const auto* e = reinterpret_cast<const struct inotify_event*>(p);
                p += sizeof(struct inotify_event) + e->len;
                if (e->mask & IN_Q_OVERFLOW) {  // events were lost: look at everything again
                    notes.push_back("inotify queue overflowed; rescanned " + root);
                    addTree("", now);
                    rescan(now);
                    continue;
                }
                const auto dir = dirOfWatch.find(e->wd);
                if (dir == dirOfWatch.end()) continue;
                if (e->mask & IN_IGNORED) {
                    dirOfWatch.erase(dir);
                    continue;
                }
                if (!e->len) continue;
                const std::string rel = dir->second.empty() ? std::string(e->name) : dir->second + "/" + e->name;
                if (e->mask & IN_ISDIR) {
                    if (e->mask & (IN_CREATE | IN_MOVED_TO)) addTree(rel, now);
                    if (e->mask & (IN_MOVED_FROM | IN_DELETE)) {
                        std::vector<std::string> gone;
                        for (const auto& [f, t] : files)
                            if (f.starts_with(rel + "/")) gone.push_back(f);
                        for (const auto& f : gone) {
                            incomplete.erase(f);
                            files.erase(f);
                        }
                        removedFolders.push_back(rel);
                    }
                    continue;
                }
                if (e->mask & (IN_DELETE | IN_MOVED_FROM))
                    forget(rel);
                else if (e->mask & (IN_CREATE | IN_MODIFY))
                    touch(rel, Seen::Write, now);
                else if (e->mask & (IN_CLOSE_WRITE | IN_MOVED_TO))
                    touch(rel, Seen::Close, now);
            }
        }
    }

    int grace() const { return opt.graceMs >= 0 ? opt.graceMs : std::max(4 * opt.settleMs, 2000); }

    void collectComplete(Clock::time_point now, WatchChanges& out) {
        std::vector<std::string> done, dropped;
        for (const std::string& rel : incomplete) {
            Tracked& t = files[rel];
            // A change the events have not told yet (or no events at all) restarts the settling.
            // A file looked at by this poll's events is as it was then.
            if (!std::exchange(t.statFresh, false)) {
                struct stat st {};
                const bool statted = ::stat(abs(rel).c_str(), &st) == 0;
                // A name only created, never seen as a file: a symbolic link (dangling, or to a
                // folder), a FIFO or a socket is no file to follow, and would wait here for ever.
                if (!t.stated && (!statted || !S_ISREG(st.st_mode))) {
                    dropped.push_back(rel);
                    continue;
                }
                if (!statted) continue;  // its removal is seen next
                if (std::uint64_t(st.st_size) != t.size || stampOf(st) != t.stamp) {
                    touch(rel, Seen::Scan, now);
                    t.statFresh = false;
                    continue;
                }
            }
            const auto still = std::chrono::duration_cast<std::chrono::milliseconds>(now - t.stillSince).count();
            if (!t.closed && still < opt.settleMs) continue;
            if (t.completeAt < 0) t.completeAt = looksComplete(abs(rel), t.size) ? 1 : 0;
            if (!t.completeAt && still < grace()) continue;
            t.reported = t.everReported = true;
            out.complete.push_back({rel, t.size, t.mtimeNs, t.stamp});
            done.push_back(rel);
        }
        for (const auto& rel : dropped) {
            incomplete.erase(rel);
            files.erase(rel);
        }
        for (const auto& rel : done) {
            incomplete.erase(rel);
            // With inotify, a file handed on is forgotten: a later write, close or removal has an
            // event that brings it back (a close after it settled hands it on again, unchanged,
            // and IncrementalIndex passes over it). A rescan needs every file to compare.
            if (fd >= 0) files.erase(rel);
        }
    }
};

FolderWatcher::FolderWatcher(std::string root, FolderWatcherOptions options) : m(std::make_unique<Impl>()) {
    while (root.size() > 1 && root.back() == '/') root.pop_back();
    m->root = std::move(root);
    m->opt = options;
}

FolderWatcher::~FolderWatcher() { m->stopInotify(); }

WatchChanges FolderWatcher::poll(int timeoutMs) {
    WatchChanges out;
    auto now = Clock::now();
    if (!m->present) {
        struct stat st {};
        if (::stat(m->root.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
            std::this_thread::sleep_for(std::chrono::milliseconds(std::min(timeoutMs, 100)));
            return out;
        }
        m->present = true;
        out.appeared = true;
        const char* network = m->opt.useInotify ? networkFileSystem(m->root) : nullptr;
        if (network)
            m->notes.push_back(m->root + " is on " + network +
                               ": other machines' writes give no inotify events there; "
                               "rescanning the folder instead");
        if (m->opt.useInotify && !network) {
            m->fd = ::inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
            if (m->fd < 0)
                m->notes.push_back(std::string("inotify unavailable (") + std::strerror(errno) +
                                   "); rescanning the folder instead");
        }
        if (m->fd >= 0)
            m->addTree("", now);
        else
            m->rescan(now);
    } else if (m->fd >= 0) {
        // Wait for events, but not past the moment the next incomplete file may settle.
        pollfd p{m->fd, POLLIN, 0};
        const int wait = m->incomplete.empty() ? timeoutMs : std::min(timeoutMs, std::max(5, m->opt.settleMs / 4));
        ::poll(&p, 1, wait);
        now = Clock::now();
        m->readEvents(now);
    } else {
        // Every settle/4, but never more than a tenth of a core on the walk itself.
        const auto interval =
            std::max(std::chrono::milliseconds(std::max(20, m->opt.settleMs / 4)), 10 * m->rescanTook);
        const auto due = m->lastRescan + interval;
        std::this_thread::sleep_until(std::min(due, now + std::chrono::milliseconds(timeoutMs)));
        now = Clock::now();
        if (now >= due) m->rescan(now);
    }
    m->collectComplete(now, out);
    out.removed = std::move(m->removed);
    m->removed.clear();
    out.removedFolders = std::move(m->removedFolders);
    m->removedFolders.clear();
    out.notes = std::move(m->notes);
    m->notes.clear();
    return out;
}

bool FolderWatcher::exists() const { return m->present; }
bool FolderWatcher::usingInotify() const { return m->fd >= 0; }
std::size_t FolderWatcher::incompleteFiles() const { return m->incomplete.size(); }
std::size_t FolderWatcher::trackedFiles() const { return m->files.size(); }
const std::string& FolderWatcher::root() const { return m->root; }
bool FolderWatcher::isIncomplete(const std::string& rel) const { return m->incomplete.count(rel) != 0; }

std::chrono::milliseconds FolderWatcher::oldestIncomplete() const {
    const auto now = Clock::now();
    std::chrono::milliseconds worst{0};
    for (const std::string& rel : m->incomplete) {
        const auto it = m->files.find(rel);
        if (it != m->files.end())
            worst = std::max(worst, std::chrono::duration_cast<std::chrono::milliseconds>(now - it->second.stillSince));
    }
    return worst;
}

}  // namespace dl
