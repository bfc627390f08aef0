// Internal helpers shared by the dump readers: line splitting that tolerates CRLF, a UTF-8 BOM and a
// missing final newline, and a cursor over one line that throws ibf::InputError with file:line:column.
// No regex, no allocation per line.
#pragma once

#include <charconv>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>

#include "ibf/error.h"
#include "ibf/text.h"

namespace ibf::detail {

inline bool is_space(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f'; }
inline bool is_digit(char c) { return c >= '0' && c <= '9'; }
inline bool is_hex(char c) { return is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); }

using ibf::trim;  // ibf/text.h

inline bool starts_with(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }

// Splits text into lines. Strips a leading UTF-8 BOM, a trailing '\r' per line; the last line needs no '\n'.
class Lines {
public:
    explicit Lines(std::string_view text) : rest_(text) {
        if (starts_with(rest_, "\xEF\xBB\xBF")) rest_.remove_prefix(3);
    }
    bool next(std::string_view& line, int& number) {
        if (done_) return false;
        const char* nl = static_cast<const char*>(std::memchr(rest_.data(), '\n', rest_.size()));
        if (nl) {
            line = rest_.substr(0, static_cast<size_t>(nl - rest_.data()));
            rest_.remove_prefix(line.size() + 1);
        } else {
            line = rest_;
            rest_ = {};
            done_ = true;
            if (line.empty()) return false;
        }
        while (!line.empty() && line.back() == '\r') line.remove_suffix(1);
        number = ++number_;
        return true;
    }

private:
    std::string_view rest_;
    int number_ = 0;
    bool done_ = false;
};

// A position in one line. Every failure names the file, line and 1-based column.
class Cursor {
public:
    Cursor(std::string_view line, const std::string& file, int lineno) : s_(line), file_(file), line_(lineno) {}

    size_t pos() const { return pos_; }
    void set_pos(size_t p) { pos_ = p; }
    int column() const { return static_cast<int>(pos_) + 1; }
    int column_at(size_t p) const { return static_cast<int>(p) + 1; }
    bool at_end() const { return pos_ >= s_.size(); }
    char peek() const { return pos_ < s_.size() ? s_[pos_] : '\0'; }
    std::string_view line() const { return s_; }
    std::string_view rest() const { return pos_ < s_.size() ? s_.substr(pos_) : std::string_view(); }
    int lineno() const { return line_; }
    const std::string& file() const { return file_; }

    [[noreturn]] void fail(const std::string& msg) const { fail_at(pos_, msg); }
    [[noreturn]] void fail_at(size_t p, const std::string& msg) const {
        throw InputError(file_, line_, column_at(p), msg);
    }

    void skip_ws() {
        while (pos_ < s_.size() && is_space(s_[pos_])) ++pos_;
    }
    bool eat(char c) {
        if (peek() != c) return false;
        ++pos_;
        return true;
    }
    bool eat(std::string_view w) {
        if (s_.substr(pos_, w.size()) != w) return false;
        pos_ += w.size();
        return true;
    }
    void expect(char c, std::string_view what) {
        if (!eat(c)) fail("expected " + std::string(what) + found());
    }
    // A word: a run of non-space characters.
    std::string_view word() {
        size_t b = pos_;
        while (pos_ < s_.size() && !is_space(s_[pos_])) ++pos_;
        return s_.substr(b, pos_ - b);
    }
    // Unsigned decimal in [0, max].
    uint64_t number(std::string_view what, uint64_t max) {
        size_t b = pos_;
        uint64_t v = 0;
        auto [p, ec] = std::from_chars(s_.data() + pos_, s_.data() + s_.size(), v, 10);
        if (ec != std::errc() || p == s_.data() + b) fail("expected " + std::string(what) + found());
        if (v > max) fail_at(b, std::string(what) + " " + std::to_string(v) + " is out of range (at most " + std::to_string(max) + ")");
        pos_ = static_cast<size_t>(p - s_.data());
        return v;
    }
    // Hex number (optional 0x prefix), 1..16 digits.
    uint64_t hex(std::string_view what) {
        size_t b = pos_;
        if (s_.substr(pos_, 2) == "0x" || s_.substr(pos_, 2) == "0X") pos_ += 2;
        size_t d = pos_;
        while (pos_ < s_.size() && is_hex(s_[pos_])) ++pos_;
        if (pos_ == d || pos_ - d > 16) {
            pos_ = b;
            fail("expected " + std::string(what) + " (hex, up to 16 digits)" + found());
        }
        uint64_t v = 0;
        std::from_chars(s_.data() + d, s_.data() + pos_, v, 16);
        return v;
    }
    // "..." up to the next quote; returns the content.
    std::string_view quoted(std::string_view what) {
        size_t b = pos_;
        if (!eat('"')) fail("expected " + std::string(what) + " in double quotes" + found());
        size_t e = s_.find('"', pos_);
        if (e == std::string_view::npos) fail_at(b, "unterminated quoted " + std::string(what));
        auto v = s_.substr(pos_, e - pos_);
        pos_ = e + 1;
        return v;
    }
    // "..." up to the LAST quote on the line (descriptions may contain quotes).
    std::string_view quoted_to_last(std::string_view what) {
        size_t b = pos_;
        if (!eat('"')) fail("expected " + std::string(what) + " in double quotes" + found());
        size_t e = s_.rfind('"');
        if (e == std::string_view::npos || e < pos_) fail_at(b, "unterminated quoted " + std::string(what));
        auto v = s_.substr(pos_, e - pos_);
        pos_ = e + 1;
        return v;
    }
    std::string found() const {
        if (at_end()) return ", found end of line";
        std::string_view w = s_.substr(pos_, 12);
        std::string out = ", found '";
        for (char c : w) out += (static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) >= 0x7f) ? '?' : c;
        return out + (s_.size() - pos_ > 12 ? "...'" : "'");
    }

private:
    std::string_view s_;
    size_t pos_ = 0;
    const std::string& file_;
    int line_;
};

// "[root@mgmt ~]# ibnetdiscover", "user@host:~$ iblinkinfo", "$ cat dump", "> ..." : shell-prompt lines.
inline bool looks_like_prompt(std::string_view t) {
    t = trim(t);
    if (t.empty()) return false;
    if (t[0] == '$' || t[0] == '>' || t[0] == '%') return true;
    size_t at = t.find('@');
    if (at == std::string_view::npos || at > 64) return false;
    for (std::string_view end : {"]#", "]$", "$ ", "# ", ":~", "]%"})
        if (t.find(end, at) != std::string_view::npos) return true;
    return t.back() == '$' || t.back() == '#';
}

}  // namespace ibf::detail
