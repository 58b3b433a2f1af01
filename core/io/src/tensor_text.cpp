#include "quantscope/tensor_text.hpp"

#include <array>
#include <charconv>
#include <cmath>
#include <vector>

#include "quantscope/csv.hpp"
#include "quantscope/error.hpp"
#include "quantscope/text.hpp"

namespace qs {
namespace {

bool is_blank(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'; }
bool is_name_char(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '.';
}

constexpr int kMaxDepth = 3;

class BracketParser {
public:
    BracketParser(std::string_view text, const std::string& name) : s_(text), name_(name) {}

    Tensor parse() {
        std::size_t i = skip_blanks(0);
        const bool wrapped = s_[i] != '[';
        if (wrapped) {  // `tensor(`, `array(`, `np.array(`: a name, then '('
            while (i < s_.size() && is_name_char(s_[i])) ++i;
            i = skip_blanks(i);
            if (i >= s_.size() || s_[i] != '(') fail(i, "expected '(' after the name");
            i = skip_blanks(i + 1);
            if (i >= s_.size() || s_[i] != '[') {
                if (i < s_.size() && (s_[i] == '-' || s_[i] == '+' || (s_[i] >= '0' && s_[i] <= '9')))
                    fail(i, "a single number, not a tensor (give at least one row in brackets)");
                fail(i, "expected '[' (a list of values)");
            }
        }
        i = parse_lists(i);
        i = skip_blanks(i);
        if (wrapped) i = parse_keywords(i);
        if (skip_blanks(i) != s_.size()) fail(i, "unexpected " + quoted_text(s_.substr(i, 20)) + " after the tensor");
        Tensor t;
        for (int d = 0; d < leaf_depth_; ++d) t.shape.push_back(dims_[static_cast<std::size_t>(d)]);
        t.values = std::move(values_);
        try {
            check_tensor(t);
        } catch (const Error& e) {
            throw Error(printable(name_) + ": " + e.what());
        }
        return t;
    }

private:
    [[noreturn]] void fail(std::size_t at, const std::string& what) const {
        throw Error(printable(name_) + ": at character " + std::to_string(at + 1) + ": " + what);
    }
    std::size_t skip_blanks(std::size_t i) const {
        while (i < s_.size() && is_blank(s_[i])) ++i;
        return i;
    }

    // The nested lists from the '[' at `i` to its matching ']'; returns the position after it.
    std::size_t parse_lists(std::size_t i) {
        int depth = 0;
        std::array<std::int64_t, kMaxDepth + 1> count{};  // items so far in the open list at each depth
        bool need_item = false;  // right after a comma
        do {
            const char c = s_[i];
            if (c == '[') {
                if (depth == kMaxDepth) fail(i, "nested deeper than 3 levels (a tensor here has rank 1 to 3)");
                if (depth > 0 && leaf_depth_ > 0 && depth >= leaf_depth_) fail(i, "a list where a number was expected (rows of different depth)");
                count[static_cast<std::size_t>(++depth)] = 0;
                need_item = false;
                ++i;
            } else if (c == ']') {  // after a comma too: Python's [1, 2,]
                close_list(i, depth, count[static_cast<std::size_t>(depth)]);
                --depth;
                if (depth > 0) ++count[static_cast<std::size_t>(depth)];
                ++i;
            } else if (c == ',') {
                if (need_item || count[static_cast<std::size_t>(depth)] == 0) fail(i, "a comma with no value before it");
                need_item = true;
                ++i;
            } else if (is_blank(c)) {
                ++i;
            } else {
                if (leaf_depth_ == 0) leaf_depth_ = depth;
                if (depth != leaf_depth_) fail(i, "a number where a list was expected (rows of different depth)");
                i = number(i);
                ++count[static_cast<std::size_t>(depth)];
                need_item = false;
            }
            if (depth > 0 && i >= s_.size()) fail(s_.size() - 1, "unbalanced brackets: " + std::to_string(depth) + " '[' not closed");
        } while (depth > 0);
        return i;
    }

    // A list at `depth` closes with `n` items: its length must match its siblings' (a ragged print is refused).
    void close_list(std::size_t at, int depth, std::int64_t n) {
        if (n == 0) fail(at, "an empty list (a tensor needs at least one value in every row)");
        if (leaf_depth_ == 0) fail(at, "a list of lists with no numbers");
        const std::size_t d = static_cast<std::size_t>(depth - 1);
        if (dims_[d] == 0) dims_[d] = n;
        else if (dims_[d] != n)
            fail(at, "rows of different lengths: this one has " + std::to_string(n) + " item" + (n == 1 ? "" : "s") +
                         ", the first had " + std::to_string(dims_[d]));
    }

    std::size_t number(std::size_t i) {
        const std::size_t start = i;
        while (i < s_.size() && !is_blank(s_[i]) && s_[i] != ',' && s_[i] != '[' && s_[i] != ']') ++i;
        const std::string_view token = s_.substr(start, i - start);
        if (token.find("...") != std::string_view::npos || token.find("\xE2\x80\xA6") != std::string_view::npos)
            fail(start,
                 "'...' leaves values out (a printed summary of a big tensor): print it in full "
                 "(torch.set_printoptions(profile='full'), np.set_printoptions(threshold=sys.maxsize)) or save it "
                 "with np.save and open the .npy");
        if (static_cast<std::int64_t>(values_.size()) >= kMaxElements)
            fail(start, "more than " + std::to_string(kMaxElements) + " values");
        const char* first = token.data();
        const char* end = token.data() + token.size();
        if (first < end && *first == '+') ++first;
        double v = 0;
        const auto r = std::from_chars(first, end, v);
        // numpy prints "1." for 1.0: from_chars stops before a trailing dot.
        const bool trailing_dot = r.ec == std::errc() && r.ptr + 1 == end && *r.ptr == '.';
        if (r.ec == std::errc::result_out_of_range) fail(start, quoted_text(token) + " is out of range");
        if (r.ec != std::errc() || (r.ptr != end && !trailing_dot)) fail(start, quoted_text(token) + " is not a number");
        if (!std::isfinite(v)) fail(start, quoted_text(token) + " is not a finite number (NaN and Inf are not allowed)");
        const float f = static_cast<float>(v);
        if (!std::isfinite(f)) fail(start, quoted_text(token) + " is outside the float32 range");
        values_.push_back(f);
        return i;
    }

    // `, dtype=torch.int8, device='cuda:0')` after the list: names and values are skipped, the ')' is required.
    std::size_t parse_keywords(std::size_t i) {
        while (i < s_.size() && s_[i] == ',') {
            i = skip_blanks(i + 1);
            const std::size_t key = i;
            while (i < s_.size() && is_name_char(s_[i])) ++i;
            if (i == key) fail(i, "expected a keyword such as dtype=... after ','");
            i = skip_blanks(i);
            if (i >= s_.size() || s_[i] != '=') fail(i, "expected '=' after " + quoted_text(s_.substr(key, i - key)));
            // The value: up to the next ',' or ')' outside quotes and <...> (grad_fn=<AddBackward0>).
            char quote = 0;
            for (++i; i < s_.size(); ++i) {
                const char c = s_[i];
                if (quote) {
                    if (c == quote) quote = 0;
                } else if (c == '\'' || c == '"' || c == '<') {
                    quote = c == '<' ? '>' : c;
                } else if (c == ',' || c == ')') {
                    break;
                } else if (c == '[' || c == '(') {
                    fail(i, "unexpected " + quoted_text(std::string_view(&s_[i], 1)) + " in a keyword argument");
                }
            }
        }
        if (i >= s_.size() || s_[i] != ')') fail(std::min(i, s_.size() - 1), "expected ')' to close the tensor");
        return i + 1;
    }

    std::string_view s_;
    const std::string& name_;
    std::vector<float> values_;
    std::array<std::int64_t, kMaxDepth> dims_{};  // the length of the lists at each depth, from the first
    int leaf_depth_ = 0;                          // the depth of the numbers (the rank)
};

}  // namespace

bool is_bracketed_tensor_text(std::string_view text) {
    std::size_t i = 0;
    while (i < text.size() && is_blank(text[i])) ++i;
    if (i < text.size() && text[i] == '[') return true;
    const std::size_t name = i;
    while (i < text.size() && is_name_char(text[i])) ++i;
    if (i == name || (text[name] >= '0' && text[name] <= '9') || text[name] == '.') return false;
    while (i < text.size() && is_blank(text[i])) ++i;
    return i < text.size() && text[i] == '(';
}

Tensor parse_tensor_text(std::string_view text, const std::string& name) {
    if (text.size() > kMaxTensorTextBytes)
        throw Error(printable(name) + ": " + std::to_string(text.size() >> 20) + " MB of text is more than the " +
                    std::to_string(kMaxTensorTextBytes >> 20) + " MB a typed or pasted tensor may have; save it as a .npy file");
    if (!is_bracketed_tensor_text(text)) return parse_csv(text.data(), text.size(), name);
    return BracketParser(text, name).parse();
}

}  // namespace qs
