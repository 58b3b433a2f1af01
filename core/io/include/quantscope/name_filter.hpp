// A tensor-name filter (`sweep --filter REGEX`, SPEC "Sweep"): a regular expression in ECMAScript syntax,
// searched for anywhere in a name, answered in time linear in the name's length and with a bounded stack
// whatever the pattern or the name (std::regex backtracks and recurses: a long name crashes it, a pattern
// like (a+)+$ takes exponential time).
//
// The subset is the regular part of ECMAScript, with std::regex's (libstdc++) meaning for each:
//   literals, `.` (any byte but \n and \r), [classes] with ranges and [^negation], \d \D \w \W \s \S
//   (ASCII), \b \B, ^ and $ (the name's start and end), groups ( ) and (?: ), |, and the quantifiers
//   * + ? {n} {n,} {n,m} (a trailing ? for a lazy one changes nothing in a yes/no search);
//   escapes \t \n \v \f \r \0 \cX \xHH \uHHHH (up to 7F), and \ before any other character but a digit
//   stands for that character. One exception: \cX is the control character X % 32, as ECMAScript says
//   (libstdc++'s std::regex matched the letter X itself).
// Refused, as they are not regular: back-references (\1) and lookahead ((?= ), (?! )). Also refused: a
// pattern longer than kMaxFilterPatternBytes, groups nested deeper than kMaxFilterNesting, and a pattern
// whose program (counted repeats expanded) passes kMaxFilterProgram steps.
#pragma once

#include <bitset>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace qs {

constexpr std::size_t kMaxFilterPatternBytes = 1000;
constexpr std::size_t kMaxFilterNesting = 100;
constexpr std::size_t kMaxFilterProgram = 5000;

class NameFilter {
public:
    // Throws qs::Error "<why> at ..." (one printable line, without the pattern) when the pattern is malformed,
    // outside the subset or past a cap.
    explicit NameFilter(std::string_view pattern);

    // True when some substring of `name` matches (std::regex_search's answer). Time O(|name| x program size),
    // memory O(program size).
    bool search(std::string_view name) const;

    // The compiled program (a Thompson NFA): public for tests and the curious.
    enum class Op : std::uint8_t { Byte, Split, Jump, LineStart, LineEnd, WordBoundary, NotWordBoundary, Match };
    struct Step {
        Op op = Op::Match;
        std::uint32_t x = 0;  // Byte: the set's index; Split and Jump: the target
        std::uint32_t y = 0;  // Split: the second target
    };
    std::size_t program_size() const { return program_.size(); }

private:
    friend class NameFilterCompiler;
    std::vector<Step> program_;
    std::vector<std::bitset<256>> sets_;
};

}  // namespace qs
