#include "quantscope/session.hpp"

#include <cmath>
#include <cstdio>
#include <filesystem>

#include "quantscope/atomic_file.hpp"
#include "quantscope/error.hpp"
#include "quantscope/json_reader.hpp"
#include "quantscope/json_writer.hpp"
#include "quantscope/presets.hpp"
#include "quantscope/tensor_io.hpp"

namespace qs {
namespace {

constexpr int kVersion = 1;

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

// Reads members of one JSON object, refusing unknown ones and wrong types, with messages naming the key.
class ObjectReader {
public:
    ObjectReader(const JsonValue& value, std::string where, const std::string& name) : name_(name), where_(std::move(where)) {
        if (!value.is_object()) fail(where_ + " must be an object");
        object_ = &value;
    }
    ~ObjectReader() = default;

    const JsonValue* optional(const std::string& key, JsonValue::Type type) {
        seen_.push_back(key);
        const JsonValue* v = object_->find(key);
        if (v && v->type != type)
            fail(where_ + "." + key + " must be a " + json_type_name(type) + ", not a " + json_type_name(v->type));
        return v;
    }
    const JsonValue& required(const std::string& key, JsonValue::Type type) {
        const JsonValue* v = optional(key, type);
        if (!v) fail(where_ + " lacks \"" + key + "\"");
        return *v;
    }
    std::string string(const std::string& key) { return required(key, JsonValue::Type::String).text; }
    double number(const std::string& key, double fallback) {
        const JsonValue* v = optional(key, JsonValue::Type::Number);
        return v ? v->number : fallback;
    }
    std::int64_t integer(const std::string& key, std::int64_t fallback) {
        const JsonValue* v = optional(key, JsonValue::Type::Number);
        std::int64_t out = fallback;
        if (v && !v->to_int64(out)) fail(where_ + "." + key + " must be an integer");
        return out;
    }
    bool boolean(const std::string& key, bool fallback) {
        const JsonValue* v = optional(key, JsonValue::Type::Bool);
        return v ? v->boolean : fallback;
    }
    // Every member must have been asked for.
    void finish() {
        for (const auto& [key, value] : object_->members) {
            bool known = false;
            for (const auto& k : seen_) known = known || k == key;
            if (!known) fail(where_ + " has an unknown key \"" + key + "\"");
        }
    }
    [[noreturn]] void fail(const std::string& what) const { throw Error(name_ + ": " + what); }

private:
    const JsonValue* object_ = nullptr;
    const std::string& name_;
    std::string where_;
    std::vector<std::string> seen_;
};

Shape read_shape(const JsonValue& value, const std::string& where, const std::string& name) {
    if (!value.is_array()) throw Error(name + ": " + where + " must be an array of dimensions");
    Shape shape;
    for (const JsonValue& d : value.items) {
        std::int64_t dim = 0;
        if (!d.to_int64(dim)) throw Error(name + ": " + where + " must hold integers");
        shape.push_back(dim);
    }
    try {
        checked_numel(shape);
    } catch (const Error& e) {
        throw Error(name + ": " + where + ": " + e.what());
    }
    return shape;
}

// A preset name / enum parser's qs::Error, prefixed with the file and where.
template <class F>
auto with_context(const std::string& name, const std::string& where, F&& parse) {
    try {
        return parse();
    } catch (const Error& e) {
        throw Error(name + ": " + where + ": " + e.what());
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
                .number("mean", src.random.mean)
                .number("std", src.random.std)
                .number("low", src.random.low)
                .number("high", src.random.high)
                .integer("outliers", src.random.outliers);
            break;
    }
    const QuantConfig& c = session.config;
    JsonObject q;
    q.string("dtype", c.dtype.name())
        .string("mode", to_string(c.mode))
        .string("granularity", to_string(c.granularity))
        .integer("axis", c.axis)
        .integer("group_size", c.group_size)
        .string("rounding", to_string(c.rounding))
        .string("overflow", c.overflow == Overflow::Clamp ? "clamp" : "wrap")
        .number("scale", c.manual_scale)
        .integer("zero_point", c.manual_zero_point)
        .string("calibration", to_string(c.calibration))
        .number("percentile", c.percentile)
        .boolean("recompute_scale", c.recompute_scale);
    JsonObject view;
    for (const auto& [key, value] : session.view) view.string(key, value);
    JsonObject root;
    root.integer("quantscope_session", kVersion).raw("tensor", tensor.str()).raw("quantization", q.str()).raw("view", view.str());
    return root.str() + "\n";
}

Session parse_session(const std::string& text, const std::string& name) {
    const JsonValue doc = parse_json(text, name);
    ObjectReader root(doc, "the session", name);
    if (root.integer("quantscope_session", -1) != kVersion)
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
        r.distribution = with_context(name, "tensor.distribution", [&] { return parse_distribution(t.string("distribution")); });
        r.shape = read_shape(t.required("shape", JsonValue::Type::Array), "tensor.shape", name);
        std::uint64_t seed = 0;
        const JsonValue* seed_value = t.optional("seed", JsonValue::Type::Number);
        if (seed_value && !seed_value->to_uint64(seed)) t.fail("tensor.seed must be an integer >= 0");
        r.seed = seed;
        r.mean = t.number("mean", r.mean);
        r.std = t.number("std", r.std);
        r.low = t.number("low", r.low);
        r.high = t.number("high", r.high);
        r.outliers = t.integer("outliers", 0);
    } else {
        t.fail("tensor.kind '" + kind + "' is not inline, file, preset or random");
    }
    t.finish();

    ObjectReader q(root.required("quantization", JsonValue::Type::Object), "quantization", name);
    QuantConfig& c = s.config;
    with_context(name, "quantization", [&] {
        if (const JsonValue* v = q.optional("dtype", JsonValue::Type::String)) c.dtype = IntType::parse(v->text);
        if (const JsonValue* v = q.optional("mode", JsonValue::Type::String)) {
            if (v->text == "manual") c.mode = Mode::Manual;
            else c.mode = parse_mode(v->text);
        }
        if (const JsonValue* v = q.optional("granularity", JsonValue::Type::String)) c.granularity = parse_granularity(v->text);
        c.axis = static_cast<int>(std::max<std::int64_t>(-1, std::min<std::int64_t>(q.integer("axis", 0), 1000)));
        c.group_size = q.integer("group_size", 0);
        if (const JsonValue* v = q.optional("rounding", JsonValue::Type::String)) c.rounding = parse_rounding(v->text);
        if (const JsonValue* v = q.optional("overflow", JsonValue::Type::String)) {
            if (v->text == "clamp") c.overflow = Overflow::Clamp;
            else if (v->text == "wrap") c.overflow = Overflow::Wrap;
            else throw Error("overflow '" + v->text + "' is not clamp or wrap");
        }
        c.manual_scale = q.number("scale", 1.0);
        const std::int64_t z = q.integer("zero_point", 0);
        if (z < -(1 << 20) || z > (1 << 20)) throw Error("zero_point " + std::to_string(z) + " is out of range");
        c.manual_zero_point = static_cast<std::int32_t>(z);
        if (const JsonValue* v = q.optional("calibration", JsonValue::Type::String)) {
            if (v->text == "percentile") c.calibration = Calibration::Percentile;
            else parse_calibration(v->text, c);
        }
        c.percentile = q.number("percentile", c.percentile);
        c.recompute_scale = q.boolean("recompute_scale", false);
        return 0;
    });
    q.finish();
    if (const JsonValue* v = root.optional("view", JsonValue::Type::Object)) {
        for (const auto& [key, value] : v->members) {
            if (!value.is_string()) root.fail("view." + key + " must be a string");
            s.view.emplace_back(key, value.text);
        }
    }
    root.finish();
    if (s.source.kind == TensorSource::Kind::Inline)
        with_context(name, "quantization", [&] { check_config(c, s.tensor.shape); return 0; });
    return s;
}

Session read_session(const std::string& path) {
    return parse_session(read_small_file(path, std::size_t{256} << 20), path);
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
        case TensorSource::Kind::Preset: tensor = make_preset(session.source.preset).tensor; break;
        case TensorSource::Kind::Random: tensor = generate_random(session.source.random); break;
    }
    check_tensor(tensor);
    try {
        check_config(session.config, tensor.shape);
    } catch (const Error& e) {
        throw Error(session_path + ": " + e.what());
    }
    return tensor;
}

}  // namespace qs
