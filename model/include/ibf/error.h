// InputError: bad input (a dump, a plan, a wire message, an HTTP request) that the caller
// must report and survive. what() reads "file:line:column: message" (line/column omitted when 0),
// the form every ibfabric error message takes. Tools map it to exit code 2.
#pragma once

#include <stdexcept>
#include <string>
#include <string_view>

namespace ibf {

class InputError : public std::runtime_error {
public:
    InputError(std::string file, int line, int column, std::string message)
        : std::runtime_error(format(file, line, column, message)),
          file_(std::move(file)), line_(line), column_(column), message_(std::move(message)) {}

    const std::string& file() const { return file_; }
    int line() const { return line_; }
    int column() const { return column_; }
    const std::string& message() const { return message_; }

    static std::string format(const std::string& file, int line, int column, const std::string& message) {
        std::string s = file.empty() ? std::string("<input>") : file;
        if (line > 0) {
            s += ":" + std::to_string(line);
            if (column > 0) s += ":" + std::to_string(column);
        }
        return s + ": " + message;
    }

private:
    std::string file_;
    int line_, column_;
    std::string message_;
};

// A piece of input as an error message may quote it: at most `max` bytes (then "..."), control
// and non-ASCII bytes as \xNN, so garbage input still gives a readable one-line error.
inline std::string printable(std::string_view v, size_t max = 60) {
    static constexpr char kHex[] = "0123456789abcdef";
    std::string out;
    for (size_t i = 0; i < v.size() && i < max; ++i) {
        const auto c = static_cast<unsigned char>(v[i]);
        if (c >= 0x20 && c < 0x7f) {
            out += static_cast<char>(c);
        } else {
            out += "\\x";
            out += kHex[c >> 4];
            out += kHex[c & 15];
        }
    }
    if (v.size() > max) out += "...";
    return out;
}

}  // namespace ibf
