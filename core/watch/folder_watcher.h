#pragma once
// Follows every file under a folder while a writer fills it and says when each file is complete.
// Events from inotify (IN_CREATE, IN_MODIFY, IN_CLOSE_WRITE, IN_MOVED_TO; every sub-folder,
// including those made later) where the kernel gives them; otherwise (inotify refused, a
// watch limit reached) a rescan of the tree every poll. A file is complete when
//   - it looks whole (file_completeness.h) and was closed after its last write, or kept the same
//     size and stamp for `settleMs` (writers that keep a file open, file systems without events);
//   - or, looking broken, kept still for `graceMs`: then it is handed on and its reader says why.
// The folder itself may not exist yet: it is looked for on every poll until it appears.
// Nothing is ever written under the folder.
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace dl {

struct WatchedFile {
    std::string rel;  // relative to the root, '/'-separated
    std::uint64_t size = 0;
    std::int64_t mtimeNs = 0;
    std::int64_t stamp = 0;  // as ScannedFile::stamp: what tells an unchanged file
};

struct FolderWatcherOptions {
    int settleMs = 500;
    int graceMs = -1;        // -1: 4 x settleMs, at least 2 s
    bool useInotify = true;  // false: rescan every poll (what a file system without events gets)
};

struct WatchChanges {
    bool appeared = false;              // the root exists from this poll on (once)
    std::vector<WatchedFile> complete;  // new, or changed since they were last complete
    std::vector<std::string> removed;   // gone since they were complete
    // Folders gone (deleted or moved away), '/'-separated rels: every file that was complete under
    // them is gone too. With inotify a file handed on and closed is forgotten (its state would be
    // a map entry per file for ever): its folder's removal is said here instead of file by file.
    std::vector<std::string> removedFolders;
    std::vector<std::string> notes;  // e.g. inotify unavailable: rescanning instead
};

class FolderWatcher {
public:
    FolderWatcher(std::string root, FolderWatcherOptions options);
    ~FolderWatcher();
    FolderWatcher(const FolderWatcher&) = delete;
    FolderWatcher& operator=(const FolderWatcher&) = delete;

    // Waits up to `timeoutMs` for something to happen, then reports what became complete.
    WatchChanges poll(int timeoutMs);
    bool exists() const;
    bool usingInotify() const;
    std::size_t incompleteFiles() const;  // seen, not complete yet
    std::size_t trackedFiles() const;     // files whose state is kept (incomplete, or rescanning)
    bool isIncomplete(const std::string& rel) const;
    // How long the oldest incomplete file has waited: how far behind the writer the watch is.
    std::chrono::milliseconds oldestIncomplete() const;
    const std::string& root() const;

private:
    struct Impl;
    std::unique_ptr<Impl> m;
};

}  // namespace dl
