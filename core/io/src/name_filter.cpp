// NameFilter: a small parser for the regular part of ECMAScript into a tree, Thompson's construction of
// an NFA program from the tree, and a simulation that carries the set of live states along the name (one
// pass, no backtracking). Each error's wording follows std::regex's where it had one, so a message a user
// saw before stays the same.
#include "quantscope/name_filter.hpp"

#include <algorithm>
#include <cctype>
#include <optional>

#include "quantscope/error.hpp"

namespace qs {
namespace {

using ByteSet = std::bitset<256>;

// The tree: Set (one byte of a set), Empty, Concat and Alt (of `kids`), Repeat (kid 0, min to max,
// max -1 without bound) and the zero-width assertions.
struct Node {
    enum Kind : std::uint8_t { Set, Empty, Concat, Alt, Repeat, Assert } kind = Empty;
    std::uint32_t set = 0;
    NameFilter::Op assertion = NameFilter::Op::Match;
    int min = 0, max = 0;
    std::vector<std::uint32_t> kids;
};

constexpr int kMaxCount = 100000;  // a {n,m} bound above this cannot fit the program cap anyway

ByteSet class_of(int (*is)(int)) {
    ByteSet set;
    for (int c = 0; c < 128; ++c)  // ASCII only, as std::regex in the "C" locale
        if (is(c)) set.set(static_cast<std::size_t>(c));
    return set;
}

// Plain functions: the address of a <cctype> function is not one to take.
int is_word(int c) { return std::isalnum(c) || c == '_'; }
int is_digit(int c) { return std::isdigit(c); }
int is_space(int c) { return std::isspace(c); }
int is_alnum(int c) { return std::isalnum(c); }
int is_alpha(int c) { return std::isalpha(c); }
int is_blank(int c) { return std::isblank(c); }
int is_cntrl(int c) { return std::iscntrl(c); }
int is_graph(int c) { return std::isgraph(c); }
int is_lower(int c) { return std::islower(c); }
int is_print(int c) { return std::isprint(c); }
int is_punct(int c) { return std::ispunct(c); }
int is_upper(int c) { return std::isupper(c); }
int is_xdigit(int c) { return std::isxdigit(c); }

ByteSet single(unsigned char c) {
    ByteSet set;
    set.set(c);
    return set;
}

int hex_value(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

[[noreturn]] void refuse(const std::string& why) { throw Error(why); }

}  // namespace

class NameFilterCompiler {
public:
    NameFilterCompiler(std::string_view pattern, NameFilter& out) : p_(pattern), out_(out) {}

    void run() {
        if (p_.size() > kMaxFilterPatternBytes)
            refuse("longer than " + std::to_string(kMaxFilterPatternBytes) + " bytes");
        const std::uint32_t root = disjunction(0);
        if (at_ < p_.size()) refuse("Mismatched '(' and ')' in regular expression");  // a ')' with no '('
        emit(root);
        add({NameFilter::Op::Match, 0, 0});
    }

private:
    // ---- parsing ----
    bool more() const { return at_ < p_.size(); }
    char peek(std::size_t ahead = 0) const { return at_ + ahead < p_.size() ? p_[at_ + ahead] : '\0'; }

    std::uint32_t node(Node n) {
        nodes_.push_back(std::move(n));
        return static_cast<std::uint32_t>(nodes_.size() - 1);
    }
    std::uint32_t set_node(const ByteSet& set) {
        out_.sets_.push_back(set);
        Node n;
        n.kind = Node::Set;
        n.set = static_cast<std::uint32_t>(out_.sets_.size() - 1);
        return node(std::move(n));
    }

    std::uint32_t disjunction(std::size_t depth) {
        if (depth > kMaxFilterNesting)
            refuse("groups nested deeper than " + std::to_string(kMaxFilterNesting));
        Node alt;
        alt.kind = Node::Alt;
        alt.kids.push_back(alternative(depth));
        while (peek() == '|' && more()) {
            ++at_;
            alt.kids.push_back(alternative(depth));
        }
        return alt.kids.size() == 1 ? alt.kids[0] : node(std::move(alt));
    }

    std::uint32_t alternative(std::size_t depth) {
        Node seq;
        seq.kind = Node::Concat;
        while (more() && peek() != '|' && peek() != ')') seq.kids.push_back(term(depth));
        return node(std::move(seq));
    }

    bool at_quantifier() const { return peek() == '*' || peek() == '+' || peek() == '?' || peek() == '{'; }

    std::uint32_t term(std::size_t depth) {
        if (const std::optional<NameFilter::Op> assertion = take_assertion()) {
            if (more() && at_quantifier()) refuse("nothing to repeat before '" + std::string(1, peek()) + "'");
            Node n;
            n.kind = Node::Assert;
            n.assertion = *assertion;
            return node(std::move(n));
        }
        std::uint32_t atom_node = atom(depth);
        for (std::size_t stacked = 0; more() && at_quantifier(); ++stacked) {
            if (depth + stacked > kMaxFilterNesting)
                refuse("quantifiers stacked deeper than " + std::to_string(kMaxFilterNesting));
            Node rep;
            rep.kind = Node::Repeat;
            quantifier(rep.min, rep.max);
            if (peek() == '?' && more()) ++at_;  // lazy: the same yes/no answer
            rep.kids.push_back(atom_node);
            atom_node = node(std::move(rep));
        }
        return atom_node;
    }

    std::optional<NameFilter::Op> take_assertion() {
        if (peek() == '^') return ++at_, NameFilter::Op::LineStart;
        if (peek() == '$') return ++at_, NameFilter::Op::LineEnd;
        if (peek() == '\\' && peek(1) == 'b') return at_ += 2, NameFilter::Op::WordBoundary;
        if (peek() == '\\' && peek(1) == 'B') return at_ += 2, NameFilter::Op::NotWordBoundary;
        return std::nullopt;
    }

    void quantifier(int& min, int& max) {
        const char c = p_[at_++];
        if (c == '*') min = 0, max = -1;
        if (c == '+') min = 1, max = -1;
        if (c == '?') min = 0, max = 1;
        if (c != '{') return;
        const std::optional<int> low = count();
        if (!low) refuse("Invalid range in '{}' in regular expression");
        min = max = *low;
        if (peek() == ',' && more()) {
            ++at_;
            const std::optional<int> high = count();
            max = high ? *high : -1;
        }
        if (!more()) refuse("Mismatched '{' and '}' in regular expression");
        if (p_[at_++] != '}' || (max >= 0 && max < min)) refuse("Invalid range in '{}' in regular expression");
    }

    std::optional<int> count() {
        std::optional<int> value;
        while (more() && peek() >= '0' && peek() <= '9') {
            value = std::min(kMaxCount, value.value_or(0) * 10 + (p_[at_++] - '0'));
        }
        return value;
    }

    std::uint32_t atom(std::size_t depth) {
        const char c = p_[at_++];
        switch (c) {
            case '(': return group(depth);
            case '[': return set_node(bracket());
            case '.': {
                ByteSet any;
                any.set();
                any.reset('\n');
                any.reset('\r');
                return set_node(any);
            }
            case '\\': return set_node(escape(false));
            case '*': case '+': case '?': case '{':
                refuse("nothing to repeat before '" + std::string(1, c) + "'");
            default: return set_node(single(static_cast<unsigned char>(c)));
        }
    }

    std::uint32_t group(std::size_t depth) {
        if (peek() == '?' && more()) {
            if (peek(1) == '=' || peek(1) == '!') refuse("lookahead (?= ) and (?! ) are not supported");
            if (peek(1) != ':') refuse("'(?' is followed by neither ':', '=' nor '!'");
            at_ += 2;
        }
        const std::uint32_t inside = disjunction(depth + 1);
        if (!more() || p_[at_] != ')') refuse("Mismatched '(' and ')' in regular expression");
        ++at_;
        return inside;
    }

    // After '\' outside or inside a bracket (where \b is a backspace and \B refused).
    ByteSet escape(bool in_bracket) {
        if (!more()) refuse("a trailing '\\' escapes nothing");
        const char c = p_[at_++];
        switch (c) {
            case 'd': return class_of(is_digit);
            case 'D': return ~class_of(is_digit);
            case 'w': return class_of(is_word);
            case 'W': return ~class_of(is_word);
            case 's': return class_of(is_space);
            case 'S': return ~class_of(is_space);
            case 't': return single('\t');
            case 'n': return single('\n');
            case 'v': return single('\v');
            case 'f': return single('\f');
            case 'r': return single('\r');
            case '0': return single('\0');
            case 'c': {
                if (!std::isalpha(static_cast<unsigned char>(peek())) || !more()) refuse("'\\c' needs a letter");
                return single(static_cast<unsigned char>(p_[at_++] % 32));
            }
            case 'x': return single(static_cast<unsigned char>(hex_escape(2)));
            case 'u': {
                const int value = hex_escape(4);
                if (value > 0x7f) refuse("'\\u' above 007F is not supported (names are matched byte by byte)");
                return single(static_cast<unsigned char>(value));
            }
            default: break;
        }
        if (c >= '1' && c <= '9') refuse("back-references are not supported");
        if (in_bracket && c == 'b') return single('\b');
        if (in_bracket && c == 'B') refuse("'\\B' inside a bracket");
        return single(static_cast<unsigned char>(c));
    }

    int hex_escape(int digits) {
        int value = 0;
        for (int i = 0; i < digits; ++i) {
            const int d = more() ? hex_value(peek()) : -1;
            if (d < 0) refuse("'\\x' needs 2 and '\\u' 4 hexadecimal digits");
            value = value * 16 + d;
            ++at_;
        }
        return value;
    }

    ByteSet bracket();
    std::optional<unsigned char> bracket_atom(ByteSet& set);

    // ---- Thompson's construction ----
    std::uint32_t add(NameFilter::Step step) {
        if (out_.program_.size() >= kMaxFilterProgram)
            refuse("more than " + std::to_string(kMaxFilterProgram) + " steps once its repeats are spelled out");
        out_.program_.push_back(step);
        return static_cast<std::uint32_t>(out_.program_.size() - 1);
    }
    std::uint32_t here() const { return static_cast<std::uint32_t>(out_.program_.size()); }

    void emit(std::uint32_t index);
    bool spells_nothing(std::uint32_t index) const;
    void emit_alt(const Node& n);
    void emit_repeat(const Node& n);

    std::string_view p_;
    std::size_t at_ = 0;
    NameFilter& out_;
    std::vector<Node> nodes_;
};

// Inside [...]: an optional '^', then characters, ranges a-z, escapes and [:name:] classes up to ']'. A ']'
// right after '[' or '[^' closes it (std::regex: [] matches nothing, [^] anything).
ByteSet NameFilterCompiler::bracket() {
    const bool negated = peek() == '^' && more();
    if (negated) ++at_;
    ByteSet set;
    while (true) {
        if (!more()) refuse("Mismatched '[' and ']' in regular expression");
        if (p_[at_] == ']') break;
        const std::optional<unsigned char> low = bracket_atom(set);
        if (peek() != '-' || !more() || peek(1) == ']' || at_ + 1 >= p_.size()) continue;
        ++at_;  // a range
        ByteSet ignored;
        const std::optional<unsigned char> high = bracket_atom(ignored);
        if (!low || !high) refuse("Invalid start of '[x-x]' range in regular expression");
        // std::regex compares char, which is signed here: the same order, the same refusals.
        const int lo = static_cast<signed char>(*low), hi = static_cast<signed char>(*high);
        if (lo > hi) refuse("Invalid range in bracket expression.");
        for (int c = lo; c <= hi; ++c) set.set(static_cast<unsigned char>(static_cast<signed char>(c)));
    }
    ++at_;
    return negated ? ~set : set;
}

// One element of a bracket: adds it to `set`, returns it when it is a single character (a range's end).
std::optional<unsigned char> NameFilterCompiler::bracket_atom(ByteSet& set) {
    const char c = p_[at_++];
    if (c == '[' && (peek() == '.' || peek() == '=')) refuse("'[.' and '[=' in a bracket are not supported");
    if (c == '[' && peek() == ':') {
        static const struct { const char* name; int (*is)(int); } kClasses[] = {
            {"alnum", is_alnum}, {"alpha", is_alpha}, {"blank", is_blank}, {"cntrl", is_cntrl},
            {"digit", is_digit}, {"graph", is_graph}, {"lower", is_lower}, {"print", is_print},
            {"punct", is_punct}, {"space", is_space}, {"upper", is_upper}, {"xdigit", is_xdigit},
            {"w", is_word},          {"d", is_digit},     {"s", is_space}};
        const std::size_t end = p_.find(":]", at_ + 1);
        if (end == std::string_view::npos) refuse("Mismatched '[' and ']' in regular expression");
        const std::string_view name = p_.substr(at_ + 1, end - at_ - 1);
        for (const auto& k : kClasses)
            if (name == k.name) {
                set |= class_of(k.is);
                at_ = end + 2;
                return std::nullopt;
            }
        refuse("unknown character class name in '[:" + std::string(name.substr(0, 20)) + ":]'");
    }
    if (c != '\\') {
        set.set(static_cast<unsigned char>(c));
        return static_cast<unsigned char>(c);
    }
    const ByteSet escaped = escape(true);
    set |= escaped;
    if (escaped.count() != 1) return std::nullopt;
    for (std::size_t b = 0; b < 256; ++b)
        if (escaped.test(b)) return static_cast<unsigned char>(b);
    return std::nullopt;
}

// Whether emit(index) adds no step: an empty pattern, or only such parts, or a repeat of at most zero.
bool NameFilterCompiler::spells_nothing(std::uint32_t index) const {
    const Node& n = nodes_[index];
    switch (n.kind) {
        case Node::Empty: return true;
        case Node::Concat:
            return std::all_of(n.kids.begin(), n.kids.end(), [this](std::uint32_t k) { return spells_nothing(k); });
        case Node::Alt: return n.kids.size() == 1 && spells_nothing(n.kids[0]);  // two or more: a split
        case Node::Repeat: return n.max == 0 || spells_nothing(n.kids[0]);
        default: return false;  // a byte or an assertion is a step
    }
}

void NameFilterCompiler::emit(std::uint32_t index) {
    const Node& n = nodes_[index];
    switch (n.kind) {
        case Node::Set: add({NameFilter::Op::Byte, n.set, 0}); break;
        case Node::Empty: break;
        case Node::Concat:
            for (const std::uint32_t kid : n.kids) emit(kid);
            break;
        case Node::Alt: emit_alt(n); break;
        case Node::Repeat: emit_repeat(n); break;
        case Node::Assert: add({n.assertion, 0, 0}); break;
    }
}

// a|b|c: split to a or to the rest; each branch jumps past the others.
void NameFilterCompiler::emit_alt(const Node& n) {
    std::vector<std::uint32_t> jumps;
    for (std::size_t i = 0; i + 1 < n.kids.size(); ++i) {
        const std::uint32_t split = add({NameFilter::Op::Split, 0, 0});
        out_.program_[split].x = here();
        emit(n.kids[i]);
        jumps.push_back(add({NameFilter::Op::Jump, 0, 0}));
        out_.program_[split].y = here();
    }
    emit(n.kids.back());
    for (const std::uint32_t j : jumps) out_.program_[j].x = here();
}

// e{min,max}: e spelled out min times, then either a loop (no max) or max - min optional copies, each
// skipping to the end.
void NameFilterCompiler::emit_repeat(const Node& n) {
    const std::uint32_t kid = n.kids[0];
    // A kid that spells out to no step (`()`, `a{0}`) adds nothing however often it is repeated, and
    // repeating it would cost time the step cap cannot see (`((){99999}){99999}`): spelled out not at all.
    if (spells_nothing(kid)) return;
    for (int i = 0; i < n.min; ++i) emit(kid);
    if (n.max < 0) {
        const std::uint32_t split = add({NameFilter::Op::Split, 0, 0});
        out_.program_[split].x = here();
        emit(kid);
        add({NameFilter::Op::Jump, split, 0});
        out_.program_[split].y = here();
        return;
    }
    std::vector<std::uint32_t> splits;
    for (int i = n.min; i < n.max; ++i) {
        splits.push_back(add({NameFilter::Op::Split, 0, 0}));
        out_.program_[splits.back()].x = here();
        emit(kid);
    }
    for (const std::uint32_t s : splits) out_.program_[s].y = here();
}

NameFilter::NameFilter(std::string_view pattern) { NameFilterCompiler(pattern, *this).run(); }

bool NameFilter::search(std::string_view name) const {
    const std::size_t n = program_.size();
    std::vector<std::uint32_t> mark(n, 0);  // the generation in which a step joined a list
    std::vector<std::uint32_t> live, next, stack;
    live.reserve(n);
    next.reserve(n);
    stack.reserve(n);
    std::uint32_t generation = 0;
    const auto word_at = [&](std::size_t i) {
        return i < name.size() && is_word(static_cast<unsigned char>(name[i])) && static_cast<unsigned char>(name[i]) < 128;
    };
    // Adds `start` and every step it reaches without reading a byte at position `pos`; true on Match.
    const auto add_closure = [&](std::vector<std::uint32_t>& list, std::uint32_t start, std::size_t pos) {
        stack.push_back(start);
        bool matched = false;
        const bool boundary = (pos > 0 && word_at(pos - 1)) != word_at(pos);
        while (!stack.empty()) {
            const std::uint32_t pc = stack.back();
            stack.pop_back();
            if (mark[pc] == generation) continue;
            mark[pc] = generation;
            const Step& s = program_[pc];
            switch (s.op) {
                case Op::Byte: list.push_back(pc); break;
                case Op::Match: matched = true; break;
                case Op::Jump: stack.push_back(s.x); break;
                case Op::Split: stack.push_back(s.y), stack.push_back(s.x); break;
                case Op::LineStart: if (pos == 0) stack.push_back(pc + 1); break;
                case Op::LineEnd: if (pos == name.size()) stack.push_back(pc + 1); break;
                case Op::WordBoundary: if (boundary) stack.push_back(pc + 1); break;
                case Op::NotWordBoundary: if (!boundary) stack.push_back(pc + 1); break;
            }
        }
        return matched;
    };
    ++generation;
    if (add_closure(live, 0, 0)) return true;
    for (std::size_t i = 0; i < name.size(); ++i) {
        const unsigned char c = static_cast<unsigned char>(name[i]);
        ++generation;
        next.clear();
        for (const std::uint32_t pc : live)
            if (sets_[program_[pc].x].test(c) && add_closure(next, pc + 1, i + 1)) return true;
        if (add_closure(next, 0, i + 1)) return true;  // a match may start at any position
        live.swap(next);
    }
    return false;
}

}  // namespace qs
