// load_yaml_bounded: plans and waiver files parsed with their expanded size bounded (yaml_load.h).
#include "ibf/yaml_load.h"

#include <yaml-cpp/eventhandler.h>

#include <sstream>
#include <vector>

#include "ibf/error.h"

namespace ibf {
namespace {

std::string too_many(std::string_view what, const YamlLimits& l) {
    return "the " + std::string(what) + " has more than " + std::to_string(l.max_nodes) +
           " YAML nodes (aliases counted as what they stand for); split it, or write repeated parts compactly";
}

std::string too_deep(std::string_view what, const YamlLimits& l) {
    return "the " + std::string(what) + " nests sequences and maps more than " + std::to_string(l.max_depth) + " deep";
}

// Pass 1: a byte scan of flow collections, where yaml-cpp's scanner holds every item in memory
// (~280 bytes each) before the parser sees one. Counts the collections and their commas: a lower
// bound on the nodes they hold, so nothing within the limit is refused.
class FlowScan {
public:
    FlowScan(std::string_view t, const std::string& file, std::string_view what, const YamlLimits& l)
        : t_(t), file_(file), what_(what), l_(l) {}

    void run() {
        while (i_ < t_.size()) step();
    }

private:
    [[noreturn]] void fail(const std::string& msg) const { throw InputError(file_, line_, col_, msg); }

    void advance() {
        if (t_[i_] == '\n') ++line_, col_ = 1, line_start_ = true, at_start_ = depth_ == 0 || at_start_;
        else ++col_;
        ++i_;
    }
    char peek(size_t k = 1) const { return i_ + k < t_.size() ? t_[i_ + k] : '\0'; }
    static bool blank(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\0'; }

    void skip_line() {
        while (i_ < t_.size() && t_[i_] != '\n') advance();
    }
    void skip_quoted(char q) {
        advance();  // the opening quote
        while (i_ < t_.size()) {
            const char ch = t_[i_];
            if (q == '"' && ch == '\\') {
                advance();
                if (i_ < t_.size()) advance();
            } else if (ch == q && q == '\'' && peek() == '\'') {
                advance(), advance();
            } else if (ch == q) {
                return advance();
            } else {
                advance();
            }
        }
    }
    // A block scalar (`key: |` or `- >-`): its lines, indented deeper than the line that opens it.
    void skip_block_scalar() {
        skip_line();
        while (i_ < t_.size()) {
            advance();  // the newline
            size_t ind = 0;
            while (i_ + ind < t_.size() && t_[i_ + ind] == ' ') ++ind;
            const char c = i_ + ind < t_.size() ? t_[i_ + ind] : '\0';
            if (c != '\n' && c != '\0' && ind <= indent_) return;
            skip_line();
        }
    }
    void count(size_t n) {
        items_ += n;
        if (items_ > l_.max_nodes) fail(too_many(what_, l_));
    }

    void step() {
        const char c = t_[i_];
        if (line_start_ && c != ' ') indent_ = col_ - 1, line_start_ = false;
        if (c == ' ' || c == '\t' || c == '\r' || c == '\n') return advance();
        if (c == '#' && (i_ == 0 || blank(t_[i_ - 1]))) return skip_line();
        if (at_start_) {
            if (c == '"' || c == '\'') {
                skip_quoted(c);
                at_start_ = false;
                return;
            }
            if (c == '&' || c == '!') {  // an anchor or tag before the node
                while (i_ < t_.size() && !blank(t_[i_])) advance();
                return;
            }
            if (c == '[' || c == '{') {
                if (++depth_ > l_.max_depth) fail(too_deep(what_, l_));
                count(1);
                return advance();
            }
            if (depth_ == 0 && (c == '|' || c == '>')) return skip_block_scalar();
            if (depth_ == 0 && (c == '-' || c == '?') && blank(peek())) return advance();  // still at a node's start
        }
        if (depth_ > 0 && (c == ']' || c == '}')) {
            --depth_;
            at_start_ = false;
            return advance();
        }
        if (depth_ > 0 && c == ',') {
            count(1);
            at_start_ = true;
            return advance();
        }
        const bool after_quote = i_ > 0 && (t_[i_ - 1] == '"' || t_[i_ - 1] == '\'');  // {"a":"b"}
        at_start_ = c == ':' && (blank(peek()) || (depth_ > 0 && after_quote));
        advance();
    }

    std::string_view t_;
    const std::string& file_;
    std::string_view what_;
    const YamlLimits& l_;
    size_t i_ = 0, items_ = 0, depth_ = 0, indent_ = 0;
    int line_ = 1, col_ = 1;
    bool line_start_ = true, at_start_ = true;
};

// Pass 2: yaml-cpp's events, every node counted and every alias as the size of its anchor's node.
class Counter : public YAML::EventHandler {
public:
    Counter(const std::string& file, std::string_view what, const YamlLimits& l) : file_(file), what_(what), l_(l) {}

    void OnDocumentStart(const YAML::Mark&) override {}
    void OnDocumentEnd() override {}
    void OnNull(const YAML::Mark& m, YAML::anchor_t a) override { leaf(m, a); }
    void OnScalar(const YAML::Mark& m, const std::string&, YAML::anchor_t a, const std::string&) override { leaf(m, a); }
    void OnAlias(const YAML::Mark& m, YAML::anchor_t a) override { add(m, a < sizes_.size() ? sizes_[a] : 1); }
    void OnSequenceStart(const YAML::Mark& m, const std::string&, YAML::anchor_t a, YAML::EmitterStyle::value) override {
        open(m, a);
    }
    void OnMapStart(const YAML::Mark& m, const std::string&, YAML::anchor_t a, YAML::EmitterStyle::value) override {
        open(m, a);
    }
    void OnSequenceEnd() override { close(); }
    void OnMapEnd() override { close(); }

private:
    struct Open {
        YAML::anchor_t anchor;
        size_t start;
    };
    [[noreturn]] void fail(const YAML::Mark& m, const std::string& msg) const {
        throw InputError(file_, m.line >= 0 ? m.line + 1 : 0, m.column >= 0 ? m.column + 1 : 0, msg);
    }
    void add(const YAML::Mark& m, size_t n) {
        nodes_ = n > l_.max_nodes - std::min(nodes_, l_.max_nodes) ? l_.max_nodes + 1 : nodes_ + n;
        if (nodes_ > l_.max_nodes) fail(m, too_many(what_, l_));
    }
    void remember(YAML::anchor_t a, size_t size) {
        if (a == YAML::NullAnchor) return;
        if (sizes_.size() <= a) sizes_.resize(a + 1, 1);
        sizes_[a] = size;
    }
    void leaf(const YAML::Mark& m, YAML::anchor_t a) {
        add(m, 1);
        remember(a, 1);
    }
    void open(const YAML::Mark& m, YAML::anchor_t a) {
        add(m, 1);
        if (stack_.size() >= l_.max_depth) fail(m, too_deep(what_, l_));
        stack_.push_back({a, nodes_ - 1});
    }
    void close() {
        if (stack_.empty()) return;
        remember(stack_.back().anchor, nodes_ - stack_.back().start);
        stack_.pop_back();
    }

    const std::string& file_;
    std::string_view what_;
    const YamlLimits& l_;
    size_t nodes_ = 0;
    std::vector<size_t> sizes_;  // by anchor id: the nodes its node stands for
    std::vector<Open> stack_;
};

[[noreturn]] void syntax_error(const std::string& file, const YAML::Exception& e) {
    throw InputError(file, e.mark.line >= 0 ? e.mark.line + 1 : 0, e.mark.column >= 0 ? e.mark.column + 1 : 0,
                     "YAML syntax error: " + e.msg);
}

}  // namespace

YAML::Node load_yaml_bounded(std::string_view text, const std::string& file, std::string_view what,
                             const YamlLimits& limits) {
    FlowScan(text, file, what, limits).run();
    std::string copy(text);
    try {
        std::istringstream in(copy);
        YAML::Parser parser(in);
        Counter c(file, what, limits);
        parser.HandleNextDocument(c);
    } catch (const YAML::Exception& e) {
        syntax_error(file, e);
    }
    try {
        return YAML::Load(copy);
    } catch (const YAML::Exception& e) {
        syntax_error(file, e);
    }
}

}  // namespace ibf
