#pragma once
// A one-line progress bar on stderr, only when stderr is a terminal.
#include <unistd.h>

#include <chrono>
#include <cstdio>

#include "core/util/progress.h"

namespace dlcli {

class TerminalProgress {
public:
    TerminalProgress() : m_enabled(::isatty(2) != 0), m_start(std::chrono::steady_clock::now()) {}
    bool enabled() const { return m_enabled; }
    void update(const dl::Progress& p) {
        const double f = p.bytesTotal ? double(p.bytesDone) / double(p.bytesTotal)
            : p.filesTotal            ? double(p.filesDone) / double(p.filesTotal)
                                      : 1.0;
        const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - m_start).count();
        const double left = f > 0.01 ? elapsed * (1 - f) / f : 0;
        const int filled = int(f * 30);
        std::fprintf(stderr, "\r[%-30.*s] %5.1f%%  %s%llu/%llu files  %.0f MiB  %.0fs left ", filled,
                     "##############################", 100 * f, p.phase == dl::ProgressPhase::Listing ? "listing " : "",
                     static_cast<unsigned long long>(p.filesDone), static_cast<unsigned long long>(p.filesTotal),
                     double(p.bytesDone) / (1 << 20), left);
        m_drawn = true;
    }
    void finish() {
        if (m_drawn) std::fprintf(stderr, "\r%80s\r", "");
    }

private:
    bool m_enabled;
    bool m_drawn = false;
    std::chrono::steady_clock::time_point m_start;
};

}  // namespace dlcli
