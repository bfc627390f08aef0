// InputError: bad input (a dump, a plan, a wire message, an HTTP request) that the caller
// must report and survive. what() reads "file:line:column: message" (line/column omitted when 0),
// the form every ibfabric error message takes. Tools map it to exit code 2.
#pragma once

#include <stdexcept>
#include <string>

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

}  // namespace ibf
