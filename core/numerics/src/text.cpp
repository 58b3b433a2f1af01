#include "quantscope/text.hpp"

#include <algorithm>
#include <cstdio>
#include <vector>

namespace qs {

std::size_t utf8_sequence_length(std::string_view text, std::size_t pos) {
    if (pos >= text.size()) return 0;
    const auto byte = [&](std::size_t i) { return static_cast<unsigned char>(text[pos + i]); };
    const unsigned char lead = byte(0);
    if (lead < 0x80) return 1;
    std::size_t length;
    unsigned char lo = 0x80, hi = 0xbf;  // the range of the second byte
    if (lead >= 0xc2 && lead <= 0xdf) {
        length = 2;
    } else if (lead >= 0xe0 && lead <= 0xef) {
        length = 3;
        if (lead == 0xe0) lo = 0xa0;  // overlong
        if (lead == 0xed) hi = 0x9f;  // surrogates
    } else if (lead >= 0xf0 && lead <= 0xf4) {
        length = 4;
        if (lead == 0xf0) lo = 0x90;  // overlong
        if (lead == 0xf4) hi = 0x8f;  // above U+10FFFF
    } else {
        return 0;
    }
    if (text.size() - pos < length) return 0;
    if (byte(1) < lo || byte(1) > hi) return 0;
    for (std::size_t i = 2; i < length; ++i) {
        if (byte(i) < 0x80 || byte(i) > 0xbf) return 0;
    }
    return length;
}

std::size_t character_count(std::string_view text) {
    // Every byte that does not continue a UTF-8 sequence starts a character.
    return static_cast<std::size_t>(
        std::count_if(text.begin(), text.end(), [](char c) { return (static_cast<unsigned char>(c) & 0xc0) != 0x80; }));
}

unsigned utf8_code_point(std::string_view text, std::size_t pos, std::size_t length) {
    const auto byte = [&](std::size_t i) { return static_cast<unsigned>(static_cast<unsigned char>(text[pos + i])); };
    if (length == 1) return byte(0);
    unsigned code = byte(0) & (0x7fu >> length);
    for (std::size_t i = 1; i < length; ++i) code = (code << 6) | (byte(i) & 0x3f);
    return code;
}

namespace {

struct Piece {
    std::size_t bytes;  // of the input
    std::size_t width;  // characters shown
};

// Characters that are valid text but act on the terminal: C1 controls (U+009B is CSI on some terminals), line
// and paragraph separators, and the bidirectional controls that can make a line read differently.
bool code_acts_on_terminal(unsigned code) {
    return (code >= 0x80 && code <= 0x9f) || code == 0x061c || code == 0x200e || code == 0x200f ||
           (code >= 0x2028 && code <= 0x202e) || (code >= 0x2066 && code <= 0x2069);
}

// The visible form of the character (or stray byte) at text[pos], appended to `out`.
Piece append_piece(std::string_view text, std::size_t pos, std::string& out) {
    char escape[8];
    const auto c = static_cast<unsigned char>(text[pos]);
    if (c == '\n' || c == '\r' || c == '\t') {
        out += '\\';
        out += c == '\n' ? 'n' : c == '\r' ? 'r' : 't';
        return {1, 2};
    }
    const std::size_t length = utf8_sequence_length(text, pos);
    if (length == 0 || c < 0x20 || c == 0x7f) {
        std::snprintf(escape, sizeof escape, "\\x%02x", c);
        out += escape;
        return {1, 4};
    }
    const unsigned code = utf8_code_point(text, pos, length);
    if (code_acts_on_terminal(code)) {
        std::snprintf(escape, sizeof escape, "\\u%04x", code);
        out += escape;
        return {length, 6};
    }
    out.append(text.data() + pos, length);
    return {length, 1};
}

constexpr const char* kEllipsis = "\xe2\x80\xa6";  // "…", one character

}  // namespace

bool acts_on_terminal(std::string_view text, std::size_t pos, std::size_t length) {
    return code_acts_on_terminal(utf8_code_point(text, pos, length));
}

std::string printable(std::string_view text, std::size_t max_chars) {
    max_chars = std::max<std::size_t>(max_chars, 5);
    const std::size_t head_budget = (max_chars - 1) / 2;
    std::string out;
    std::size_t width = 0, pos = 0;
    std::size_t head_end = 0, head_size = 0, head_width = 0;  // the longest prefix within head_budget
    std::string piece;
    while (pos < text.size()) {
        piece.clear();
        const Piece p = append_piece(text, pos, piece);
        if (width + p.width > max_chars) break;
        out += piece;
        width += p.width;
        pos += p.bytes;
        if (width <= head_budget) {
            head_end = pos;
            head_size = out.size();
            head_width = width;
        }
    }
    if (pos == text.size()) return out;

    // Too long: the head, "…", and as much of the end as fits. A shown character stands for at most 4 bytes,
    // so the tail is found among the last 4 * budget bytes, whatever the length of the text.
    out.resize(head_size);
    const std::size_t tail_budget = max_chars - 1 - head_width;
    std::size_t tail_start = std::max(head_end, text.size() - std::min(text.size(), 4 * tail_budget));
    for (int i = 0; i < 3 && tail_start > head_end && tail_start < text.size() &&
                    (static_cast<unsigned char>(text[tail_start]) & 0xc0) == 0x80;
         ++i)
        ++tail_start;  // not inside a character
    std::vector<std::string> pieces;
    std::vector<std::size_t> widths;
    for (std::size_t at = tail_start; at < text.size();) {
        pieces.emplace_back();
        const Piece p = append_piece(text, at, pieces.back());
        widths.push_back(p.width);
        at += p.bytes;
    }
    std::size_t first = pieces.size(), tail_width = 0;
    while (first > 0 && tail_width + widths[first - 1] <= tail_budget) tail_width += widths[--first];
    out += kEllipsis;
    for (std::size_t i = first; i < pieces.size(); ++i) out += pieces[i];
    return out;
}

std::string quoted_text(std::string_view text) { return "'" + printable(text) + "'"; }

}  // namespace qs
