#include "quantscope/lesson.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <functional>
#include <map>

#include "json_object_reader.hpp"
#include "quantscope/atomic_file.hpp"
#include "quantscope/error.hpp"
#include "quantscope/params.hpp"
#include "quantscope/pitfalls.hpp"
#include "quantscope/layer.hpp"
#include "quantscope/layer_inputs.hpp"
#include "quantscope/presets.hpp"
#include "quantscope/tensor_io.hpp"
#include "quantscope/tensor_text.hpp"
#include "quantscope/tensor_view.hpp"
#include "quantscope/text.hpp"

namespace qs {
namespace {

constexpr int kVersion = 1;

struct QuantityName {
    LessonQuantity quantity;
    const char* name;
    bool per_element;  // takes "at", or one value per element
};
constexpr QuantityName kQuantities[] = {
    {LessonQuantity::Scale, "scale", false},
    {LessonQuantity::ZeroPoint, "zero_point", false},
    {LessonQuantity::ZeroPointUnrounded, "zero_point_unrounded", false},
    {LessonQuantity::RMin, "r_min", false},
    {LessonQuantity::RMax, "r_max", false},
    {LessonQuantity::QMin, "q_min", false},
    {LessonQuantity::QMax, "q_max", false},
    {LessonQuantity::Original, "original", true},
    {LessonQuantity::Code, "q", true},
    {LessonQuantity::PreClamp, "pre_clamp", true},
    {LessonQuantity::Dequantized, "dequantized", true},
    {LessonQuantity::Error, "error", true},
    {LessonQuantity::Mse, "mse", false},
    {LessonQuantity::Rmse, "rmse", false},
    {LessonQuantity::Mae, "mae", false},
    {LessonQuantity::MaxAbsError, "max_abs_error", false},
    {LessonQuantity::L2Error, "l2_error", false},
    {LessonQuantity::SqnrDb, "sqnr_db", false},
    {LessonQuantity::Clipped, "clipped", false},
    {LessonQuantity::LevelsUsed, "levels_used", false},
};
constexpr const char* kPanelNames[4] = {"original", "quantized", "dequantized", "error"};

const QuantityName* find_quantity(const std::string& name) {
    for (const QuantityName& q : kQuantities)
        if (name == q.name) return &q;
    return nullptr;
}

std::string quantity_list() {
    std::string out;
    for (const QuantityName& q : kQuantities) out += std::string(out.empty() ? "" : ", ") + q.name;
    return out;
}

// Half a unit of the literal's last digit ("170.8753" -> 0.00005, "138" -> 0.5, "2.3408e-05" -> 5e-10): what
// "agrees with what was printed" means when the lesson gives no tolerance. The exponent is read saturated (a
// written "e-4294967295" must not wrap into a small one): +inf when the unit is beyond a double ("0.0e400").
double printed_tolerance(const std::string& literal) {
    constexpr long long kBeyondAnyDouble = 100000;
    const std::size_t e = literal.find_first_of("eE");
    long long exponent = 0;
    if (e != std::string::npos) {
        std::size_t i = e + 1;
        const bool negative = i < literal.size() && literal[i] == '-';
        if (i < literal.size() && (literal[i] == '-' || literal[i] == '+')) ++i;
        for (; i < literal.size(); ++i) exponent = std::min(exponent * 10 + (literal[i] - '0'), kBeyondAnyDouble);
        if (negative) exponent = -exponent;
    }
    const std::string mantissa = literal.substr(0, e);
    const std::size_t dot = mantissa.find('.');
    const long long decimals = dot == std::string::npos ? 0 : static_cast<long long>(mantissa.size() - dot - 1);
    return 0.5 * std::pow(10.0, static_cast<double>(exponent - decimals));
}

// A literal whose digits are not all zero but whose double is 0 ("9e-4294967295"): below any double.
bool underflows(const JsonValue& number) {
    if (number.number != 0) return false;
    for (const char c : number.text) {
        if (c == 'e' || c == 'E') break;
        if (c >= '1' && c <= '9') return true;
    }
    return false;
}

// Flat values of a JSON number or nested arrays (depth <= 3), with the shape they form.
void flatten_numbers(const JsonValue& v, std::vector<const JsonValue*>& out, Shape& shape, std::size_t depth,
                     const std::function<void(const std::string&)>& fail) {
    if (v.is_number()) {
        if (depth != shape.size()) fail("rows of different depth");
        out.push_back(&v);
        return;
    }
    if (!v.is_array()) fail(std::string("a ") + json_type_name(v.type) + " where a number was expected");
    if (depth >= 3) fail("nested deeper than 3 levels");
    if (v.items.empty()) fail("an empty list");
    if (shape.size() == depth) {
        if (!out.empty()) fail("rows of different depth");
        shape.push_back(static_cast<std::int64_t>(v.items.size()));
    } else if (shape[depth] != static_cast<std::int64_t>(v.items.size())) {
        fail("rows of different lengths");
    }
    for (const JsonValue& item : v.items) flatten_numbers(item, out, shape, depth + 1, fail);
}

// Reads a lesson file's steps, carrying the state from step to step.
class LessonReader {
public:
    LessonReader(const std::string& name) : name_(name) {}

    // The top level: the version, title, source and the steps' array (at least one, at most kMaxLessonSteps).
    const JsonValue& read_header(const JsonValue& doc, LessonHeader& header) {
        ObjectReader root(doc, "the lesson", name_);
        const JsonValue* version = root.optional("quantscope_lesson", JsonValue::Type::Number);
        if (!version || version->number != kVersion)  // 1, 1.0 or 1e0: the same number
            root.fail("not a QuantScope lesson of version 1 (\"quantscope_lesson\": 1)");
        header.title = root.string("title");
        header.source = root.string("source");
        const JsonValue& steps = root.required("steps", JsonValue::Type::Array);
        root.finish();
        if (steps.items.empty()) root.fail("steps is empty: a lesson needs at least one step");
        if (steps.items.size() > kMaxLessonSteps)
            root.fail("more than " + std::to_string(kMaxLessonSteps) + " steps");
        header.steps = steps.items.size();
        return steps;
    }

    Lesson read(const JsonValue& doc, const std::string& lesson_name) {
        LessonHeader header;
        const JsonValue& steps = read_header(doc, header);
        Lesson lesson;
        lesson.name = lesson_name;
        lesson.title = header.title;
        lesson.source = header.source;
        for (std::size_t k = 0; k < steps.items.size(); ++k) {
            step_ = k + 1;
            lesson.steps.push_back(read_step(steps.items[k]));
        }
        return lesson;
    }

private:
    std::string where() const { return "step " + std::to_string(step_); }
    [[noreturn]] void fail(const std::string& what) const { throw Error(printable(name_) + ": " + where() + ": " + what); }
    // A core parser's qs::Error (an unknown dtype, a config that does not fit) after the file, step and key.
    template <class F>
    auto context(const std::string& key, F&& f) {
        try {
            return f();
        } catch (const Error& e) {
            fail(key + ": " + e.what());
        }
    }

    LessonStep read_step(const JsonValue& value) {
        ObjectReader r(value, where(), name_);
        LessonStep step;
        step.title = r.string("title");
        step.text = r.string("text");
        if (const JsonValue* s = r.optional("state", JsonValue::Type::Object)) apply_state(*s);
        if (!state_.tensor) fail("no tensor yet: the first step's state needs \"preset\" or \"tensor\"");
        step.state = state_;
        state_.hidden = {};  // "hide", "hide_code" and "tab" last one step
        state_.hidden_code = -1;
        state_.tab.clear();
        if (const JsonValue* p = r.optional("printed", JsonValue::Type::Array))
            for (const JsonValue& item : p->items) step.printed.push_back(read_number(item, step.state));
        r.finish();
        return step;
    }

    void apply_state(const JsonValue& value) {
        ObjectReader r(value, where() + ".state", name_);
        QuantConfig& c = state_.config;
        if (const JsonValue* v = r.optional("preset", JsonValue::Type::String)) {
            Preset preset = context("state.preset", [&] { return make_preset(v->text); });
            state_.tensor = std::make_shared<const Tensor>(std::move(preset.tensor));
            state_.tensor_label = preset.name;
            c = preset.config;  // as on the command line: the preset's settings, then the step's
            state_.selected = -1;
        }
        if (const JsonValue* given = value.find("tensor")) {
            if (!given->is_string() && !given->is_array())
                fail("state.tensor must be nested lists of numbers or a notebook's printed tensor (a string)");
            const JsonValue* v = r.optional("tensor", given->type);
            if (value.find("preset")) fail("state has both \"preset\" and \"tensor\": give one");
            state_.tensor = std::make_shared<const Tensor>(read_tensor(*v));
            state_.tensor_label = "lesson tensor " + shape_to_string(state_.tensor->shape);
            c = QuantConfig{};
            state_.selected = -1;
        }
        // Everything below reads the tensor (its shape, its range, a cell): a first step that sets only a
        // dtype, a recipe or a cell has none yet.
        if (!state_.tensor) fail("no tensor yet: the first step's state needs \"preset\" or \"tensor\"");
        // Any other choice of how to quantize leaves the naive recipe (as the window's controls do); the
        // overflow rule and the rounding do not: "the same cast, with a clamp" is a step of its own.
        for (const char* key : {"dtype", "mode", "granularity", "calibrate", "axis", "group_size", "recompute_scale", "scale"})
            if (value.find(key)) c.naive_norm = 0;
        const auto text = [&](const char* key, auto&& apply) {
            if (const JsonValue* v = r.optional(key, JsonValue::Type::String))
                context(std::string("state.") + key, [&] { apply(v->text); return 0; });
        };
        text("dtype", [&](const std::string& t) {
            QuantConfig parsed = c;
            parse_dtype(t, parsed);
            const IntType dtype = parsed.dtype;
            c = with_format(c, parsed.format);
            c.dtype = dtype;
        });
        text("mode", [&](const std::string& t) { c.mode = t == "manual" ? Mode::Manual : parse_mode(t); });
        text("granularity", [&](const std::string& t) { c.granularity = parse_granularity(t); });
        text("rounding", [&](const std::string& t) { c.rounding = parse_rounding(t); });
        text("overflow", [&](const std::string& t) { c.overflow = parse_overflow(t); });
        text("calibrate", [&](const std::string& t) { parse_calibration(t, c); });
        c.axis = static_cast<int>(r.integer("axis", c.axis, 0, 2));
        c.group_size = r.integer("group_size", c.group_size, 0, kMaxElements);
        c.recompute_scale = r.boolean("recompute_scale", c.recompute_scale);
        const JsonValue* scale = r.optional("scale", JsonValue::Type::Number);
        const JsonValue* zero = r.optional("zero_point", JsonValue::Type::Number);
        if (scale || zero) {  // as --scale --zero-point: manual, per tensor
            if (!scale || !zero) fail("state: \"scale\" and \"zero_point\" go together (manual mode)");
            c.mode = Mode::Manual;
            c.manual_scale = scale->number;
            c.manual_zero_point = static_cast<std::int32_t>(r.integer("zero_point", 0, -(1 << 20), 1 << 20));
        }
        // "importance": one weight per column (the ggml types that take it quantize weighted by it), or null to
        // stop weighing; carried to the next steps with the rest of the config.
        if (const JsonValue* v = value.find("importance")) {
            r.optional("importance", v->is_null() ? JsonValue::Type::Null : JsonValue::Type::Array);
            if (v->is_null()) {
                c.importance = nullptr;
            } else {
                std::vector<float> weights;
                for (const JsonValue& w : v->items) {
                    if (!w.is_number()) fail("state.importance: expected a list of numbers (one weight per column) or null");
                    weights.push_back(static_cast<float>(w.number));
                }
                context("state.importance", [&] { check_importance(weights, state_.tensor->shape.back()); return 0; });
                c.importance = std::make_shared<const std::vector<float>>(std::move(weights));
            }
        }
        state_.recipe.clear();
        text("recipe", [&](const std::string& t) {
            c = recipe_config(parse_recipe(t), view_of(*state_.tensor), c);
            state_.recipe = t;
        });
        context("state", [&] { check_config(c, state_.tensor->shape); return 0; });
        if (const JsonValue* v = r.optional("select", JsonValue::Type::Array)) state_.selected = read_cell(*v, "state.select");
        if (const JsonValue* v = r.optional("hide", JsonValue::Type::Array)) {
            for (const JsonValue& p : v->items) {
                int found = -1;
                for (int i = 0; i < 4; ++i)
                    if (p.is_string() && p.text == kPanelNames[i]) found = i;
                if (found < 0) fail("state.hide: expected panel names: original, quantized, dequantized, error");
                state_.hidden[static_cast<std::size_t>(found)] = true;
            }
        }
        if (const JsonValue* v = r.optional("hide_code", JsonValue::Type::Array)) state_.hidden_code = read_cell(*v, "state.hide_code");
        if (const JsonValue* v = r.optional("tab", JsonValue::Type::String)) {
            const std::vector<std::string>& words = lesson_tab_words();
            if (std::find(words.begin(), words.end(), v->text) == words.end()) {
                std::string list;
                for (const std::string& w : words) list += (list.empty() ? "" : ", ") + w;
                fail("state.tab: " + printable(v->text) + " is not one of " + list);
            }
            state_.tab = v->text;
        }
        bool gives_act_option = false;
        if (const JsonValue* v = value.find("layer")) {
            r.optional("layer", v->is_bool() ? JsonValue::Type::Bool : JsonValue::Type::Object);
            if (v->is_bool() && v->boolean) fail("state.layer: give the layer's settings (an object), or false to leave it");
            if (v->is_bool()) state_.layer.reset(); else gives_act_option = read_layer(*v);
        }
        if (state_.layer) check_layer_state(gives_act_option);
        r.finish();
    }

    // "layer": { "inputs", "tokens", "seed", "outlier_channels", "outlier_scale", "activations", "act_granularity",
    // "act_mode", "outlier_threshold", "smooth_alpha", "method", "act_order", "columns" } over the previous step's
    // layer (null ends a threshold, an alpha or the method).
    // True when it gives a threshold or an alpha (not null).
    bool read_layer(const JsonValue& value) {
        ObjectReader r(value, where() + ".state.layer", name_);
        LessonLayer l = state_.layer.value_or(LessonLayer{});
        const auto text = [&](const char* key, auto&& apply) {
            if (const JsonValue* v = r.optional(key, JsonValue::Type::String))
                context(std::string("state.layer.") + key, [&] { apply(v->text); return 0; });
        };
        text("inputs", [&](const std::string& t) { l.inputs.distribution = parse_input_distribution(t); });
        text("activations", [&](const std::string& t) {
            const IntType type = t == "none" ? IntType{} : IntType::parse(t);
            if (!type.is_signed) throw Error("activations are none or a signed type (int8, int4, ...)");
            l.activation_bits = t == "none" ? 0 : type.bits;
        });
        text("act_granularity", [&](const std::string& t) { l.act_granularity = parse_act_granularity(t); });
        text("act_mode", [&](const std::string& t) { l.act_mode = parse_mode(t); });
        l.inputs.tokens = r.integer("tokens", l.inputs.tokens, 1, 4096);
        l.inputs.seed = static_cast<std::uint64_t>(r.integer("seed", static_cast<std::int64_t>(l.inputs.seed), 0, 1 << 30));
        l.inputs.outlier_channels = r.integer("outlier_channels", l.inputs.outlier_channels, 0, kMaxElements);
        l.inputs.outlier_scale = r.number("outlier_scale", l.inputs.outlier_scale);
        if (const JsonValue* v = value.find("method")) {
            r.optional("method", v->is_null() ? JsonValue::Type::Null : JsonValue::Type::String);
            if (v->is_null()) l.method.reset();
            else context("state.layer.method", [&] { l.method = parse_layer_method(v->text); return 0; });
        }
        if (const JsonValue* v = r.optional("act_order", JsonValue::Type::Bool)) l.act_order = v->boolean;
        l.columns = r.integer("columns", l.columns, 0, kMaxElements);
        bool gives_act_option = false;
        for (const char* key : {"outlier_threshold", "smooth_alpha"}) {
            std::optional<double>& field = std::string(key) == "smooth_alpha" ? l.smooth_alpha : l.outlier_threshold;
            const JsonValue* v = value.find(key);
            if (!v) continue;
            r.optional(key, v->is_null() ? JsonValue::Type::Null : JsonValue::Type::Number);
            if (v->is_null()) field.reset(); else field = v->number;
            gives_act_option = gives_act_option || !v->is_null();
        }
        r.finish();
        state_.layer = l;
        return gives_act_option;
    }

    // The layer must run on this step's tensor: W 2-D, inputs that fit, options the core accepts. A threshold or
    // alpha carried from an earlier step is dropped when this step turns the activations off (make_layer_config,
    // as the window does); one this step gives itself (`gives_act_option`) with float activations is a mistake.
    // Each step of a layer lesson is checked, but the values only when they change: W's were checked when the
    // step read it, x is generated and checked once per inputs (a 200-step lesson over a 2048x1000 W drew and
    // checked both at every step: 16 s for `lesson check`).
    void check_layer_state(bool gives_act_option) {
        context("state.layer", [&] {
            const Tensor& w = *state_.tensor;
            if (w.rank() != 2) throw Error("the layer's W is the step's tensor and must be 2-D [out, in]");
            check_layer_size(state_.layer->inputs.tokens, w.cols(), w.rows());
            const LayerInputSpec& spec = state_.layer->inputs;
            if (!inputs_ || inputs_cols_ != w.cols() || !same_inputs(inputs_spec_, spec)) {
                Tensor x = generate_layer_inputs(spec, w.cols());
                try {
                    check_tensor(x);
                } catch (const Error& e) {
                    throw Error(std::string("inputs: ") + e.what());
                }
                inputs_ = std::make_shared<const Tensor>(std::move(x));
                inputs_spec_ = spec;
                inputs_cols_ = w.cols();
            }
            LayerConfig config = lesson_layer_config(*state_.layer, state_.config);
            if (gives_act_option && !config.quantize_activations) {
                config.outlier_threshold = state_.layer->outlier_threshold;  // check_layer refuses them, as before
                config.smooth_alpha = state_.layer->smooth_alpha;
            }
            check_layer_setup(*inputs_, w, nullptr, config);
            if (state_.layer->method) {
                // The Method view runs on W alone: the method's own checks (format, calibration, rotation's 2^k).
                if (config.quantize_activations) throw Error("a method runs on W alone: give \"activations\": \"none\"");
                MethodConfig method;
                method.method = *state_.layer->method;
                method.act_order = state_.layer->act_order;
                check_method(*inputs_, w, nullptr, config, method);
                if (state_.layer->columns > w.cols())
                    throw Error("columns: " + std::to_string(state_.layer->columns) + " is more than W's " + std::to_string(w.cols()));
            }
            return 0;
        });
    }

    static bool same_inputs(const LayerInputSpec& a, const LayerInputSpec& b) {
        return a.distribution == b.distribution && a.tokens == b.tokens && a.seed == b.seed &&
               a.outlier_channels == b.outlier_channels && a.outlier_scale == b.outlier_scale;
    }

    Tensor read_tensor(const JsonValue& v) {
        if (v.is_string()) return context("state.tensor", [&] { return parse_tensor_text(v.text, "the tensor text"); });
        std::vector<const JsonValue*> numbers;
        Tensor t;
        flatten_numbers(v, numbers, t.shape, 0, [&](const std::string& what) { fail("state.tensor: " + what); });
        for (const JsonValue* n : numbers) t.values.push_back(static_cast<float>(n->number));
        context("state.tensor", [&] { check_tensor(t); return 0; });
        return t;
    }

    // [i, j] (or [k, i, j], or [i] for rank 1): a cell of the current tensor as a flat index.
    std::int64_t read_cell(const JsonValue& v, const std::string& key) {
        const Shape& shape = state_.tensor->shape;
        if (v.items.size() != shape.size())
            fail(key + ": give " + std::to_string(shape.size()) + " indices for a tensor of shape " + shape_to_string(shape));
        std::int64_t flat = 0;
        for (std::size_t d = 0; d < shape.size(); ++d) {
            const JsonValue& index = v.items[d];
            if (!index.is_number() || index.text.find_first_of(".eE") != std::string::npos)
                fail(key + ": index " + printable(index.is_number() ? index.text : "a " + std::string(json_type_name(index.type))) +
                     " is not an integer");
            std::int64_t i = 0;
            if (!index.to_int64(i) || i < 0 || i >= shape[d])
                fail(key + ": index " + printable(v.items[d].text) + " is outside 0.." + std::to_string(shape[d] - 1));
            flat = flat * shape[d] + i;
        }
        return flat;
    }

    LessonNumber read_number(const JsonValue& value, const LessonState& state) {
        ObjectReader r(value, where() + ".printed", name_);
        LessonNumber n;
        n.label = r.string("label");
        const std::string what = r.string("quantity");
        const QuantityName* q = find_quantity(what);
        if (!q) fail("printed: unknown quantity " + quoted_text(what) + ": expected one of " + quantity_list());
        n.quantity = q->quantity;
        if (const JsonValue* at = r.optional("at", JsonValue::Type::Array)) {
            if (!q->per_element) fail("printed " + quoted_text(n.label) + ": \"at\" applies to per-element quantities only");
            n.at = read_cell(*at, "printed " + printable(n.label) + ".at");
        }
        const JsonValue* v = value.find("value");
        if (!v) fail("printed " + quoted_text(n.label) + " lacks \"value\"");
        r.optional("value", v->type);
        std::vector<const JsonValue*> numbers;
        Shape shape;
        flatten_numbers(*v, numbers, shape, 0, [&](const std::string& w) { fail("printed " + printable(n.label) + ": " + w); });
        for (const JsonValue* x : numbers) {
            if (underflows(*x))
                fail("printed " + quoted_text(n.label) + ": " + printable(x->text) + " is below the smallest double: write it as 0");
            n.values.push_back(x->number);
            n.printed.push_back(x->text);
            n.tolerance.push_back(printed_tolerance(x->text));
        }
        if (const JsonValue* tol = r.optional("tolerance", JsonValue::Type::Number)) {
            if (!(tol->number >= 0) || !std::isfinite(tol->number)) fail("printed " + printable(n.label) + ": tolerance must be >= 0");
            std::fill(n.tolerance.begin(), n.tolerance.end(), tol->number);
        }
        // A tolerance nobody gave must still mean something: "0.0e400" would agree with any value.
        for (std::size_t i = 0; i < n.tolerance.size(); ++i)
            if (!std::isfinite(n.tolerance[i]))
                fail("printed " + quoted_text(n.label) + ": " + printable(n.printed[i]) +
                     ": the unit of its last digit is beyond a double: write it plainly or give a \"tolerance\"");
        if (const JsonValue* note = r.optional("note", JsonValue::Type::String)) n.note = note->text;
        r.finish();
        check_count(n, q->per_element, state);
        return n;
    }

    // As many values as the quantity has in this step's state.
    void check_count(const LessonNumber& n, bool per_element, const LessonState& state) {
        std::size_t expected = 1;
        if (per_element && n.at < 0) expected = static_cast<std::size_t>(state.tensor->numel());
        if (n.quantity == LessonQuantity::Scale || n.quantity == LessonQuantity::ZeroPoint) {
            QuantParams layout;
            set_block_layout(state.tensor->shape, state.config, layout);
            expected = static_cast<std::size_t>(layout.block_count);
        }
        if (n.values.size() != expected)
            fail("printed " + quoted_text(n.label) + " has " + std::to_string(n.values.size()) + " value" +
                 (n.values.size() == 1 ? "" : "s") + ", the step's state has " + std::to_string(expected));
    }

    const std::string& name_;
    std::size_t step_ = 0;
    LessonState state_;
    std::shared_ptr<const Tensor> inputs_;  // the layer's x as last generated (checked), for inputs_spec_ and cols
    LayerInputSpec inputs_spec_;
    std::int64_t inputs_cols_ = 0;
};

}  // namespace

const char* to_string(LessonQuantity quantity) {
    for (const QuantityName& q : kQuantities)
        if (q.quantity == quantity) return q.name;
    return "?";
}

LayerConfig lesson_layer_config(const LessonLayer& layer, const QuantConfig& weights) {
    return make_layer_config(weights, {layer.activation_bits, layer.act_granularity, layer.act_mode,
                                       layer.outlier_threshold, layer.smooth_alpha});
}

const std::vector<std::string>& lesson_tab_words() {
    static const std::vector<std::string> words = {"histograms", "landscape", "calibrators", "compare",
                                                   "bits", "formats", "model", "layer"};
    return words;
}

bool is_lesson_path(const std::string& path) { return lower_extension(path) == ".json"; }

Lesson parse_lesson(std::string_view text, const std::string& name, const std::string& lesson_name) {
    JsonLimits limits;
    limits.max_bytes = kMaxLessonBytes;
    const JsonValue doc = parse_json(without_utf8_bom(text), name, limits);
    return LessonReader(name).read(doc, lesson_name);
}

Lesson read_lesson(const std::string& path) {
    return parse_lesson(read_small_file(path, kMaxLessonBytes), path, std::filesystem::path(path).stem().string());
}

LessonHeader read_lesson_header(const std::string& path) {
    JsonLimits limits;
    limits.max_bytes = kMaxLessonBytes;
    const JsonValue doc = parse_json(without_utf8_bom(read_small_file(path, kMaxLessonBytes)), path, limits);
    LessonHeader header;
    LessonReader(path).read_header(doc, header);
    header.name = std::filesystem::path(path).stem().string();
    return header;
}

std::vector<std::string> lesson_files(const std::string& dir) {
    std::vector<std::string> files;
    std::error_code ec;
    std::filesystem::directory_iterator it(dir, ec);
    if (ec) throw Error("the lessons folder " + quoted_text(dir) + " cannot be read: " + ec.message());
    // Every entry is looked at before the sort (a cap that stopped early would lose names past it at random).
    for (const std::filesystem::directory_iterator end; it != end; it.increment(ec)) {
        if (ec) throw Error("the lessons folder " + quoted_text(dir) + " cannot be read: " + ec.message());
        if (!is_lesson_path(it->path().string())) continue;
        if (files.size() == kMaxLessonFiles)
            throw Error("the lessons folder " + quoted_text(dir) + " holds more than " + std::to_string(kMaxLessonFiles) +
                        " lesson files");
        files.push_back(it->path().string());
    }
    std::sort(files.begin(), files.end());
    return files;
}

}  // namespace qs
