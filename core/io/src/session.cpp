#include "quantscope/session.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <limits>

#include "quantscope/atomic_file.hpp"
#include "quantscope/error.hpp"
#include "quantscope/json_reader.hpp"
#include "quantscope/json_writer.hpp"
#include "json_object_reader.hpp"
#include "quantscope/presets.hpp"
#include "quantscope/tensor_io.hpp"

namespace qs {
namespace {

constexpr int kVersion = 1;

// What a session holds besides its inline values and view pairs: the objects, the settings, a shape's
// dimensions, a random spec. Fixed by session_to_json; generous, so that a hand-edited file still fits.
constexpr std::size_t kMaxOtherValues = 256;

// The reader's limits follow from what the writer may write (kMaxInlineValues, kMaxSessionViewEntries,
// kMaxSessionBytes): a session the program wrote always reads back.
JsonLimits session_json_limits() {
    JsonLimits limits;
    limits.max_values = static_cast<std::size_t>(kMaxInlineValues) + kMaxSessionViewEntries + kMaxOtherValues;
    limits.max_bytes = kMaxSessionBytes;
    limits.byte_escapes = true;
    return limits;
}

// Numbers a session stores must read back as numbers (the JSON writer turns NaN and Inf into null).
double finite(const char* key, double value) {
    if (!std::isfinite(value)) throw Error(std::string("cannot save a session whose ") + key + " is not finite");
    return value;
}

std::string float_list(const std::vector<float>& values) {
    std::string out = "[";
    char buf[32];
    for (std::size_t i = 0; i < values.size(); ++i) {
        std::snprintf(buf, sizeof buf, "%.9g", static_cast<double>(values[i]));  // float32 round trip
        out += (i ? ", " : "");
        out += buf;
    }
    return out + "]";
}

const char* kind_name(TensorSource::Kind kind) {
    switch (kind) {
        case TensorSource::Kind::Inline: return "inline";
        case TensorSource::Kind::File: return "file";
        case TensorSource::Kind::Preset: return "preset";
        case TensorSource::Kind::Random: return "random";
    }
    return "?";
}

Shape read_shape(const JsonValue& value, const std::string& where, const std::string& name) {
    if (!value.is_array()) throw Error(printable(name) + ": " + where + " must be an array of dimensions");
    Shape shape;
    for (const JsonValue& d : value.items) {
        std::int64_t dim = 0;
        if (!d.to_int64(dim)) throw Error(printable(name) + ": " + where + " must hold integers, not " + printable(d.text));
        shape.push_back(dim);
    }
    try {
        checked_numel(shape);
    } catch (const Error& e) {
        throw Error(printable(name) + ": " + where + ": " + e.what());
    }
    return shape;
}

// A preset name / enum parser's qs::Error, prefixed with the file and where. Only for messages without the
// file's name: an ObjectReader's own errors already start with it.
template <class F>
auto with_context(const std::string& name, const std::string& where, F&& parse) {
    try {
        return parse();
    } catch (const Error& e) {
        throw Error(printable(name) + ": " + where + ": " + e.what());
    }
}

}  // namespace

std::string session_to_json(const Session& session) {
    JsonObject tensor;
    const TensorSource& src = session.source;
    tensor.string("kind", kind_name(src.kind));
    switch (src.kind) {
        case TensorSource::Kind::Inline:
            if (session.tensor.numel() > kMaxInlineValues)
                throw Error("a session holds at most " + std::to_string(kMaxInlineValues) + " inline values");
            tensor.raw("shape", shape_to_json(session.tensor.shape)).raw("values", float_list(session.tensor.values));
            break;
        case TensorSource::Kind::File:
            tensor.string("path", src.path);
            if (!src.tensor_name.empty()) tensor.string("tensor", src.tensor_name);
            break;
        case TensorSource::Kind::Preset: tensor.string("name", src.preset); break;
        case TensorSource::Kind::Random:
            tensor.string("distribution", src.random.distribution == Distribution::Normal ? "normal" : "uniform")
                .raw("shape", shape_to_json(src.random.shape))
                .raw("seed", std::to_string(src.random.seed))
                .number("mean", finite("random mean", src.random.mean))
                .number("std", finite("random std", src.random.std))
                .number("low", finite("random low", src.random.low))
                .number("high", finite("random high", src.random.high))
                .integer("outliers", src.random.outliers)
                .number("outlier_scale", finite("random outlier scale", src.random.outlier_scale))
                .integer("pin_range", src.random.pin_range);
            break;
    }
    const QuantConfig& c = session.config;
    JsonObject q;
    q.string("dtype", dtype_name(c))
        .string("mode", to_string(c.mode))
        .string("granularity", to_string(c.granularity))
        .integer("axis", c.axis)
        .integer("group_size", c.group_size)
        .string("rounding", to_string(c.rounding))
        .string("overflow", c.overflow == Overflow::Clamp ? "clamp" : "wrap")
        .number("scale", finite("scale", c.manual_scale))
        .integer("zero_point", c.manual_zero_point)
        .string("calibration", to_string(c.calibration))
        .number("percentile", finite("percentile", c.percentile))
        .boolean("recompute_scale", c.recompute_scale);
    if (c.naive_norm != 0) q.number("naive_norm", finite("naive_norm", c.naive_norm));
    if (session.view.size() > kMaxSessionViewEntries)
        throw Error("a session holds at most " + std::to_string(kMaxSessionViewEntries) + " view settings");
    // The reader refuses duplicate keys: refuse to write them.
    std::vector<const std::string*> keys;
    for (const auto& entry : session.view) keys.push_back(&entry.first);
    std::sort(keys.begin(), keys.end(), [](const std::string* a, const std::string* b) { return *a < *b; });
    for (std::size_t i = 1; i < keys.size(); ++i)
        if (*keys[i] == *keys[i - 1]) throw Error("a session cannot hold the view setting " + quoted_text(*keys[i]) + " twice");
    JsonObject view;
    for (const auto& [key, value] : session.view) view.string(key, value);
    JsonObject root;
    root.integer("quantscope_session", kVersion).raw("tensor", tensor.str()).raw("quantization", q.str()).raw("view", view.str());
    std::string text = root.str() + "\n";
    if (text.size() > kMaxSessionBytes)
        throw Error("the session would be " + std::to_string(text.size() >> 20) + " MB, more than the " +
                    std::to_string(kMaxSessionBytes >> 20) + " MB a session file may have");
    // The last word on "whatever the program writes, it reads back" is the reader's: a session it would refuse
    // (a value that is not finite, a configuration that does not fit the tensor, a name or limit the checks
    // above missed) is refused now, before anything is written.
    try {
        parse_session(text, "the session");
    } catch (const Error& e) {
        throw Error(std::string("cannot save: ") + e.what());
    }
    return text;
}

Session parse_session(const std::string& text, const std::string& name) {
    const JsonValue doc = parse_json(without_utf8_bom(text), name, session_json_limits());
    ObjectReader root(doc, "the session", name);
    const JsonValue* version = root.optional("quantscope_session", JsonValue::Type::Number);
    if (!version || version->number != kVersion)  // 1, 1.0 or 1e0: the same number
        root.fail("not a QuantScope session of version 1 (\"quantscope_session\": 1)");
    Session s;

    ObjectReader t(root.required("tensor", JsonValue::Type::Object), "tensor", name);
    const std::string kind = t.string("kind");
    if (kind == "inline") {
        s.source.kind = TensorSource::Kind::Inline;
        s.tensor.shape = read_shape(t.required("shape", JsonValue::Type::Array), "tensor.shape", name);
        const JsonValue& values = t.required("values", JsonValue::Type::Array);
        const std::int64_t n = checked_numel(s.tensor.shape);
        if (static_cast<std::int64_t>(values.items.size()) != n)
            t.fail("tensor.values has " + std::to_string(values.items.size()) + " numbers but shape " +
                   shape_to_json(s.tensor.shape) + " needs " + std::to_string(n));
        s.tensor.values.reserve(values.items.size());
        for (const JsonValue& v : values.items) {
            if (!v.is_number()) t.fail("tensor.values must hold numbers only");
            s.tensor.values.push_back(static_cast<float>(v.number));
        }
        with_context(name, "tensor", [&] { check_tensor(s.tensor); return 0; });
    } else if (kind == "file") {
        s.source.kind = TensorSource::Kind::File;
        s.source.path = t.string("path");
        if (const JsonValue* v = t.optional("tensor", JsonValue::Type::String)) s.source.tensor_name = v->text;
    } else if (kind == "preset") {
        s.source.kind = TensorSource::Kind::Preset;
        s.source.preset = t.string("name");
    } else if (kind == "random") {
        s.source.kind = TensorSource::Kind::Random;
        RandomSpec& r = s.source.random;
        const std::string distribution = t.string("distribution");
        r.distribution = with_context(name, "tensor.distribution", [&] { return parse_distribution(distribution); });
        r.shape = read_shape(t.required("shape", JsonValue::Type::Array), "tensor.shape", name);
        std::uint64_t seed = 0;
        const JsonValue* seed_value = t.optional("seed", JsonValue::Type::Number);
        if (seed_value && !seed_value->to_uint64(seed))
            t.fail("tensor.seed " + printable(seed_value->text) + " is not an integer in [0, 2^64)");
        r.seed = seed;
        r.mean = t.number("mean", r.mean);
        r.std = t.number("std", r.std);
        r.low = t.number("low", r.low);
        r.high = t.number("high", r.high);
        r.outliers = t.integer("outliers", 0, 0, kMaxElements);
        // Before outliers were real (sessions without "outlier_scale"), "outliers" named the range-pinning recipe.
        if (!t.optional("outlier_scale", JsonValue::Type::Number)) std::swap(r.outliers, r.pin_range);
        r.outlier_scale = t.number("outlier_scale", r.outlier_scale);
        r.pin_range += t.integer("pin_range", 0, 0, kMaxElements);
    } else {
        t.fail("tensor.kind " + quoted_text(kind) + " is not inline, file, preset or random");
    }
    t.finish();

    ObjectReader q(root.required("quantization", JsonValue::Type::Object), "quantization", name);
    QuantConfig& c = s.config;
    // The enum parsers' own messages, e.g. "unknown dtype 'int99'", after the file and the key.
    const auto parsed = [&](const char* key, auto&& parse) {
        const JsonValue* v = q.optional(key, JsonValue::Type::String);
        if (v) with_context(name, std::string("quantization.") + key, [&] { parse(v->text); return 0; });
    };
    parsed("dtype", [&](const std::string& text) { parse_dtype(text, c); });
    parsed("mode", [&](const std::string& text) { c.mode = text == "manual" ? Mode::Manual : parse_mode(text); });
    parsed("granularity", [&](const std::string& text) { c.granularity = parse_granularity(text); });
    c.axis = static_cast<int>(q.integer("axis", 0, 0, 2));  // a tensor has at most 3 axes
    c.group_size = q.integer("group_size", 0, 0, kMaxElements);
    parsed("rounding", [&](const std::string& text) { c.rounding = parse_rounding(text); });
    parsed("overflow", [&](const std::string& text) {
        if (text == "clamp") c.overflow = Overflow::Clamp;
        else if (text == "wrap") c.overflow = Overflow::Wrap;
        else throw Error("overflow " + quoted_text(text) + " is not clamp or wrap");
    });
    c.manual_scale = q.number("scale", 1.0);
    // Far outside any type's codes; check_config then says which range applies.
    c.manual_zero_point = static_cast<std::int32_t>(q.integer("zero_point", 0, -(1 << 20), 1 << 20));
    parsed("calibration", [&](const std::string& text) {
        if (text == "percentile") c.calibration = Calibration::Percentile;
        else parse_calibration(text, c);
    });
    c.percentile = q.number("percentile", c.percentile);
    c.recompute_scale = q.boolean("recompute_scale", false);
    const double naive_norm = q.number("naive_norm", 0.0);
    // Beyond float32 the cast itself would be undefined; check_config says what a valid norm is.
    c.naive_norm = std::fabs(naive_norm) <= std::numeric_limits<float>::max() ? static_cast<float>(naive_norm) : -1.0f;
    q.finish();
    if (const JsonValue* v = root.optional("view", JsonValue::Type::Object)) {
        for (const auto& [key, value] : v->members) {
            if (!value.is_string()) root.fail("view." + printable(key) + " must be a string");
            s.view.emplace_back(key, value.text);
        }
    }
    root.finish();
    if (s.source.kind == TensorSource::Kind::Inline)
        with_context(name, "quantization", [&] { check_config(c, s.tensor.shape); return 0; });
    return s;
}

Session read_session(const std::string& path) {
    return parse_session(read_small_file(path, kMaxSessionBytes), path);
}

void write_session(const std::string& path, const Session& session) {
    const std::string text = session_to_json(session);
    write_file_atomic(path, text.data(), text.size());
}

Tensor load_session_tensor(const Session& session, const std::string& session_path, std::string* note) {
    if (note) note->clear();
    Tensor tensor;
    switch (session.source.kind) {
        case TensorSource::Kind::Inline: tensor = session.tensor; break;
        case TensorSource::Kind::File: {
            std::filesystem::path p(session.source.path);
            if (p.is_relative()) p = std::filesystem::path(session_path).parent_path() / p;
            tensor = load_tensor(p.string(), session.source.tensor_name, note);
            break;
        }
        // A preset's or random spec's message names neither the session nor the key: say both.
        case TensorSource::Kind::Preset:
            tensor = with_context(session_path, "tensor", [&] { return make_preset(session.source.preset).tensor; });
            break;
        case TensorSource::Kind::Random:
            tensor = with_context(session_path, "tensor", [&] { return generate_random(session.source.random); });
            break;
    }
    check_tensor(tensor);
    with_context(session_path, "quantization", [&] { check_config(session.config, tensor.shape); return 0; });
    return tensor;
}

}  // namespace qs
