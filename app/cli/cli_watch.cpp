// The `watch` sub-command: core/watch's events on stdout (JSON lines or readable lines), SIGINT /
// SIGTERM as the stop, and --exec run once at the first overflow.
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <iostream>
#include <stop_token>
#include <thread>

#include "app/cli/cli_commands.h"
#include "core/watch/dump_watch.h"

extern char** environ;

namespace dlcli {
namespace {

// Runs `cmd` through /bin/sh with the overflow in DUMPLENS_*; the signals this process blocks
// are unblocked for it. Returns the child's pid, or -1 (after saying why).
pid_t spawnExec(const std::string& cmd, const nlohmann::json& fo, const std::string& dumpAbs) {
    std::vector<std::string> env;
    for (char** e = environ; *e; ++e)
        if (std::strncmp(*e, "DUMPLENS_", 9) != 0 || std::strncmp(*e, "DUMPLENS_CACHE_DIR=", 19) == 0)
            env.emplace_back(*e);
    env.push_back("DUMPLENS_OP=" + fo.value("op_name", std::string()));
    env.push_back("DUMPLENS_OP_TYPE=" + fo.value("op_type", std::string()));
    env.push_back("DUMPLENS_RANK=" + std::to_string(fo.value("rank", 0u)));
    env.push_back("DUMPLENS_ITERATION=" + std::to_string(fo.value("iteration", 0u)));
    env.push_back("DUMPLENS_KIND=" + fo.value("kind", std::string()));
    env.push_back("DUMPLENS_DUMP=" + dumpAbs);
    std::vector<char*> envp;
    for (std::string& s : env) envp.push_back(s.data());
    envp.push_back(nullptr);
    std::string shell = "/bin/sh", dashC = "-c", command = cmd;
    char* argv[] = {shell.data(), dashC.data(), command.data(), nullptr};
    posix_spawnattr_t attr;
    posix_spawnattr_init(&attr);
    sigset_t none, defaults;
    sigemptyset(&none);
    sigemptyset(&defaults);
    sigaddset(&defaults, SIGINT);
    sigaddset(&defaults, SIGTERM);
    posix_spawnattr_setsigmask(&attr, &none);
    posix_spawnattr_setsigdefault(&attr, &defaults);
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
    pid_t pid = -1;
    const int rc = posix_spawn(&pid, "/bin/sh", nullptr, &attr, argv, envp.data());
    posix_spawnattr_destroy(&attr);
    if (rc != 0) {
        std::cerr << "dumplens-cli: --exec: cannot run /bin/sh: " << std::strerror(rc) << "\n";
        return -1;
    }
    return pid;
}

}  // namespace

int runWatch(const WatchArgs& args) {
    if (args.settleMs < 0) {
        std::cerr << "dumplens-cli: --settle-ms must be 0 or more\n";
        return kExitFailed;
    }
    // SIGINT / SIGTERM become a stop request: blocked here (before any thread starts, so every
    // thread inherits it) and taken by one thread with sigtimedwait.
    sigset_t stopSignals;
    sigemptyset(&stopSignals);
    sigaddset(&stopSignals, SIGINT);
    sigaddset(&stopSignals, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &stopSignals, nullptr);
    std::stop_source stop;
    std::atomic<bool> done{false};
    std::thread signals([&] {
        const timespec tick{0, 100'000'000};
        while (!done.load()) {
            if (sigtimedwait(&stopSignals, nullptr, &tick) > 0) {
                stop.request_stop();
                return;
            }
        }
    });

    dl::WatchOptions opt;
    opt.dir = args.dir;
    opt.settleMs = args.settleMs;
    opt.useInotify = !args.noInotify;
    opt.untilOverflow = args.untilOverflow;
    opt.useCache = !args.noCache;
    opt.cacheDir = args.cacheDir;
    opt.threads = args.threads;
    opt.stop = stop.get_token();
    const bool bar = !args.json && ::isatty(2);
    bool barDrawn = false;
    pid_t child = -1;
    bool execDone = false;
    std::string dumpAbs;
    const auto sink = [&](const dl::WatchEvent& e) {
        if (barDrawn && e.kind != dl::WatchEventKind::Progress) {
            std::cerr << "\r\033[K" << std::flush;
            barDrawn = false;
        }
        if (e.kind == dl::WatchEventKind::Watching) dumpAbs = e.json.value("dir", std::string());
        if (e.kind == dl::WatchEventKind::Note) {
            std::cerr << "dumplens-cli: " << e.text << "\n";
        } else if (args.json) {
            std::cout << e.json.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) << "\n" << std::flush;
        } else if (e.kind == dl::WatchEventKind::Progress && bar) {
            std::cerr << "\r\033[K[watch] " << e.text << std::flush;
            barDrawn = true;
        } else {
            std::cout << (e.kind == dl::WatchEventKind::Stopped ? "stopped: " : "") << e.text << "\n" << std::flush;
        }
        if (e.kind == dl::WatchEventKind::Overflow && !args.exec.empty() && !execDone) {
            execDone = true;  // once, at the first overflow: a moved one does not run it again
            child = spawnExec(args.exec, e.json["first_overflow"], dumpAbs);
        }
    };
    const dl::WatchSummary summary = dl::watchDump(opt, sink);
    done = true;
    signals.join();
    if (child > 0) {
        int status = 0;
        while (::waitpid(child, &status, 0) < 0 && errno == EINTR) {}
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
            std::cerr << "dumplens-cli: --exec command "
                      << (WIFEXITED(status) ? "exited with status " + std::to_string(WEXITSTATUS(status))
                                            : "ended by signal " + std::to_string(WTERMSIG(status)))
                      << "\n";
    }
    if (!summary.ok) {
        std::cerr << "dumplens-cli: " << summary.error << "\n";
        return kExitFailed;
    }
    return summary.overflow ? kExitOk : kExitNoMatch;
}

void Commands::addWatch(CLI::App& app) {
    auto* sub = app.add_subcommand(
        "watch", "follow a dump while training writes it: the first overflow as soon as its file is complete");
    sub->add_option("DIR", m_watch.dir, "dump path to watch (may not exist yet)")->required();
    sub->add_flag("--until-overflow", m_watch.untilOverflow, "exit 0 right after the first overflow event");
    sub->add_option("--exec", m_watch.exec,
                    "run CMD once through /bin/sh at the first overflow, with DUMPLENS_OP, DUMPLENS_OP_TYPE, "
                    "DUMPLENS_RANK, DUMPLENS_ITERATION, DUMPLENS_KIND and DUMPLENS_DUMP set");
    sub->add_flag("--json", m_watch.json,
                  "one JSON object per line, each with an \"event\": watching, progress, overflow, warning, stopped");
    sub->add_option("--settle-ms", m_watch.settleMs,
                    "a file without a close event is complete once its size stays still this long (default 500)");
    sub->add_option("--cache-dir", m_watch.cacheDir, "index cache folder (default: ~/.cache/dumplens)");
    sub->add_flag("--no-cache", m_watch.noCache, "neither read nor write the index cache");
    sub->add_flag("--no-inotify", m_watch.noInotify,
                  "rescan the folder instead of kernel events (network file systems)");
    sub->add_option("--threads", m_watch.threads, "worker threads (default: all cores)");
    sub->callback([this] { m_exit = runWatch(m_watch); });
}

}  // namespace dlcli
