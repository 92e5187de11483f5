#pragma once
// Everything the CLI prints to std::cout and std::cerr (reports, errors naming files, CLI11's
// messages) passes through dl::printable: an escape sequence in a file name reaches the terminal
// as text, never as a command. Newlines and tabs pass; output is forwarded to the stream's
// original buffer, so ordering with C stdio (the progress bar) is kept.
#include <iostream>
#include <streambuf>
#include <string>

#include "core/util/printable.h"

namespace dlcli {

class TerminalSafeBuf : public std::streambuf {
public:
    explicit TerminalSafeBuf(std::ostream& stream) : m_stream(stream), m_target(stream.rdbuf()) { stream.rdbuf(this); }
    ~TerminalSafeBuf() override {
        flush(true);
        m_stream.rdbuf(m_target);
    }
    TerminalSafeBuf(const TerminalSafeBuf&) = delete;
    TerminalSafeBuf& operator=(const TerminalSafeBuf&) = delete;

protected:
    // Unbuffered here (the original buffer does the buffering): each piece goes out at once, so
    // output interleaves with the other stream as it did before.
    int_type overflow(int_type c) override {
        if (traits_type::eq_int_type(c, traits_type::eof())) return traits_type::not_eof(c);
        const char ch = traits_type::to_char_type(c);
        write(&ch, 1, false);
        return c;
    }
    std::streamsize xsputn(const char* s, std::streamsize n) override {
        write(s, std::size_t(n), false);
        return n;
    }
    int sync() override { return m_target->pubsync(); }

private:
    void write(const char* s, std::size_t n, bool last) {
        if (n) m_pending.append(s, n);
        m_out.clear();
        m_pending.erase(0, dl::appendPrintable(m_pending, last, m_out));  // at most a split C1 byte waits
        m_target->sputn(m_out.data(), std::streamsize(m_out.size()));
    }
    void flush(bool last) { write(nullptr, 0, last); }
    std::ostream& m_stream;
    std::streambuf* m_target;
    std::string m_pending, m_out;
};

}  // namespace dlcli
