// The table of formats: one line per built-in row, in FormatId's order (FORMATS.md's), then the rows
// registered at run time. Every question about a format is asked of its row here.
#include <algorithm>
#include <array>
#include <atomic>
#include <cctype>
#include <deque>
#include <mutex>

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
    std::vector<FormatTraits> rows = {
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
    for (FormatTraits& row : ggml_codec_format_rows()) rows.push_back(std::move(row));
    return rows;
}

// Read by passes on worker threads while a test may register a row: rows never move (a fixed array, the
// count published last), and the list of formats is an immutable snapshot replaced whole, the old ones
// kept (a registration is rare: a test's throwaway format), so a reference a reader holds stays valid.
struct Table {
    static constexpr std::size_t kCapacity = 256;  // FormatId is 8 bits
    std::array<FormatTraits, kCapacity> rows{};
    std::atomic<std::size_t> count{0};
    std::mutex writing;
    std::deque<std::vector<FormatId>> snapshots;      // every list of formats given out, the newest last
    std::atomic<const std::vector<FormatId>*> formats{nullptr};  // every row but int<N>'s

    Table() {
        std::vector<FormatId> ids;
        for (FormatTraits& row : builtin_rows()) {
            const FormatId id = place(std::move(row));
            if (!rows[static_cast<std::size_t>(id)].is_int()) ids.push_back(id);
        }
        publish(std::move(ids));
    }
    // The caller holds `writing` (or is the constructor).
    FormatId place(FormatTraits row) {
        const std::size_t index = count.load(std::memory_order_relaxed);
        if (index >= kCapacity) throw Error("the table of formats is full");
        row.id = static_cast<FormatId>(index);
        if (row.own_blocks() && !row.kernels.element_in_block) row.kernels.element_in_block = detail::element_at_block_scale;
        rows[index] = std::move(row);
        count.store(index + 1, std::memory_order_release);
        return static_cast<FormatId>(index);
    }
    void publish(std::vector<FormatId> ids) {
        snapshots.push_back(std::move(ids));
        formats.store(&snapshots.back(), std::memory_order_release);
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
    return index < t.count.load(std::memory_order_acquire) ? t.rows[index] : t.rows.front();  // no row: int<N>'s
}

const FormatTraits& format_info(FormatId id) { return format_traits(id); }

const std::vector<FormatId>& all_formats() { return *table().formats.load(std::memory_order_acquire); }

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

// What a pass needs of a registered row, so that a row missing one fails here and not in a pass.
void check_registered_row(const FormatTraits& row, const std::string& name) {
    const auto refuse = [&](const char* why) { throw Error("cannot register " + quoted_text(name) + ": " + why); };
    if (row.is_int()) refuse("int<N> is a built-in row");
    if (!row.grid || !row.code_space || !row.check || !row.stored_scale_bits || !row.kernels.chunk ||
        !row.kernels.element)
        refuse("its row lacks a grid, code space, check, cost or kernel");
    if (row.own_blocks()) {
        // The passes cut the values into chunks of 4096 and give each chunk whole blocks.
        if (4096 % row.block_size != 0) refuse("its block size does not divide 4096");
        if (!row.kernels.block_scale || !row.kernels.block_scales) refuse("its row lacks a block scale kernel");
    }
}

FormatId register_format(FormatTraits row) {
    const std::string name = row.name;
    if (name.empty() || lower_case(name) != name || name.rfind("int", 0) == 0 || name.rfind("uint", 0) == 0 ||
        parse_format_name(name))
        throw Error("cannot register a format named " + quoted_text(name) + ": taken, or not a lower-case name");
    check_registered_row(row, name);
    Table& t = table();
    const std::lock_guard<std::mutex> lock(t.writing);
    const FormatId id = t.place(std::move(row));
    std::vector<FormatId> ids = all_formats();
    ids.push_back(id);
    t.publish(std::move(ids));
    return id;
}

void unregister_format(FormatId id) {
    Table& t = table();
    if (static_cast<std::size_t>(id) < builtin_rows().size()) throw Error("a built-in format cannot be removed");
    const std::lock_guard<std::mutex> lock(t.writing);
    std::vector<FormatId> ids = all_formats();
    ids.erase(std::remove(ids.begin(), ids.end(), id), ids.end());
    t.publish(std::move(ids));
}

}  // namespace qs
