// The table of formats: one line per built-in row, in FormatId's order (FORMATS.md's), then the rows
// registered at run time. Every question about a format is asked of its row here.
#include <algorithm>
#include <cctype>
#include <deque>

#include "format_rows.hpp"
#include "quantscope/error.hpp"
#include "quantscope/text.hpp"

namespace qs {
namespace {

constexpr FloatSpec kFp16{5, 10, 15, FloatSpecials::Ieee};
constexpr FloatSpec kBf16{8, 7, 127, FloatSpecials::Ieee};
constexpr FloatSpec kE4M3{4, 3, 7, FloatSpecials::E4M3Fn};
constexpr FloatSpec kE5M2{5, 2, 15, FloatSpecials::Ieee};
constexpr FloatSpec kE3M2{3, 2, 3, FloatSpecials::None};
constexpr FloatSpec kE2M3{2, 3, 1, FloatSpecials::None};
constexpr FloatSpec kE2M1{2, 1, 1, FloatSpecials::None};

// The built-in rows; row i has FormatId i.
std::vector<FormatTraits> builtin_rows() {
    using namespace detail;
    return {
        int_format_row(),
        float_format_row("fp16", kFp16),
        float_format_row("bf16", kBf16),
        float_format_row("fp8-e4m3", kE4M3),
        float_format_row("fp8-e5m2", kE5M2),
        float_format_row("fp6-e3m2", kE3M2),
        float_format_row("fp6-e2m3", kE2M3),
        float_format_row("fp4-e2m1", kE2M1),
        nf4_format_row(),
        mx_format_row("mxfp8-e4m3", "fp8-e4m3", kE4M3),
        mx_format_row("mxfp8-e5m2", "fp8-e5m2", kE5M2),
        mx_format_row("mxfp6-e3m2", "fp6-e3m2", kE3M2),
        mx_format_row("mxfp6-e2m3", "fp6-e2m3", kE2M3),
        mx_format_row("mxfp4", "fp4-e2m1", kE2M1),
        nvfp4_format_row(),
        q8_0_format_row(),
        q4_0_format_row(),
        q4_1_format_row(),
    };
}

struct Table {
    std::deque<FormatTraits> rows;  // a deque: a registered row leaves the others' addresses alone
    std::vector<FormatId> formats;  // every row but int<N>'s

    Table() {
        for (FormatTraits& row : builtin_rows()) add(std::move(row));
    }
    FormatId add(FormatTraits row) {
        row.id = static_cast<FormatId>(rows.size());
        rows.push_back(std::move(row));
        if (!rows.back().is_int()) formats.push_back(rows.back().id);
        return rows.back().id;
    }
};

Table& table() {
    static Table t;
    return t;
}

std::string lower_case(std::string text) {
    std::transform(text.begin(), text.end(), text.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return text;
}

}  // namespace

const FormatTraits& format_traits(FormatId id) {
    const Table& t = table();
    const auto index = static_cast<std::size_t>(id);
    return index < t.rows.size() ? t.rows[index] : t.rows.front();  // an id no row has: int<N>'s
}

const FormatTraits& format_info(FormatId id) { return format_traits(id); }

const std::vector<FormatId>& all_formats() { return table().formats; }

const std::vector<FormatKind>& format_kinds() {
    static const std::vector<FormatKind> kinds = {FormatKind::Int, FormatKind::Float, FormatKind::Codebook,
                                                  FormatKind::Block};
    return kinds;
}

const char* to_string(FormatKind kind) {
    switch (kind) {
        case FormatKind::Int: return "int";
        case FormatKind::Float: return "float";
        case FormatKind::Codebook: return "codebook";
        case FormatKind::Block: return "block";
    }
    return "int";
}

std::vector<FormatId> formats_of_kind(FormatKind kind) {
    std::vector<FormatId> ids;
    for (FormatId id : all_formats())
        if (format_traits(id).kind == kind) ids.push_back(id);
    return ids;
}

std::optional<FormatId> parse_format_name(const std::string& text) {
    const std::string lower = lower_case(text);
    for (FormatId id : all_formats())
        if (lower == format_traits(id).name) return id;
    return std::nullopt;
}

FormatId register_format(FormatTraits row) {
    const std::string name = row.name;
    if (name.empty() || lower_case(name) != name || name.rfind("int", 0) == 0 || name.rfind("uint", 0) == 0 ||
        parse_format_name(name))
        throw Error("cannot register a format named " + quoted_text(name) + ": taken, or not a lower-case name");
    if (table().rows.size() > 255) throw Error("the table of formats is full");
    return table().add(std::move(row));
}

void unregister_format(FormatId id) {
    Table& t = table();
    if (static_cast<std::size_t>(id) < builtin_rows().size()) throw Error("a built-in format cannot be removed");
    t.formats.erase(std::remove(t.formats.begin(), t.formats.end(), id), t.formats.end());
}

}  // namespace qs
