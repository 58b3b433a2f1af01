// Text from outside the program (file contents, JSON strings, tensor names, paths) on its way into a
// message: one function makes it short, printable and one line, whatever its bytes. And the one UTF-8
// validity test the readers, writers and messages share.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace qs {

// How many characters of untrusted text a message quotes.
constexpr std::size_t kQuotedChars = 80;
// The longest message a qs::Error (and so the command line's error line) holds.
constexpr std::size_t kMaxMessageChars = 400;

// `text` as it may appear in a message: valid UTF-8 characters as they are; \n \r \t, every other control
// character (C0, DEL, C1), invalid UTF-8 bytes and NUL as visible escapes (\x1b, \x00, \xff, \u009b), and the
// characters that make a terminal reorder or break a line (U+2028, U+2029, bidirectional overrides) as \uXXXX.
// At most `max_chars` characters (escapes count their length, max_chars >= 5): longer text keeps its start
// and its end around one "…", so a long path still shows its file name. Idempotent: printable(printable(t))
// == printable(t) (backslashes are kept as they are).
std::string printable(std::string_view text, std::size_t max_chars = kQuotedChars);
// printable(text) in single quotes: how messages quote a name or value.
std::string quoted_text(std::string_view text);

// The length of the valid UTF-8 sequence at text[pos] (1 for ASCII), or 0 when the bytes there are not one
// (RFC 3629: no overlong forms, no surrogates, nothing above U+10FFFF, not cut short by the end).
std::size_t utf8_sequence_length(std::string_view text, std::size_t pos);
// The code point of the valid UTF-8 sequence of `length` bytes at text[pos] (see utf8_sequence_length).
unsigned utf8_code_point(std::string_view text, std::size_t pos, std::size_t length);
// Whether the valid UTF-8 sequence of `length` bytes at text[pos] is a character that acts on a terminal
// (C1 controls, U+2028/U+2029, bidirectional controls such as U+202E): printable() and the JSON writer escape
// these as \uXXXX. Every such character is below U+10000.
bool acts_on_terminal(std::string_view text, std::size_t pos, std::size_t length);
// Characters of printable() output (or any valid UTF-8): what a terminal column count needs, not bytes.
std::size_t character_count(std::string_view text);

}  // namespace qs
