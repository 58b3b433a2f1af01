// _quantscope: the compiled half of the Python module `quantscope` (quantscope/__init__.py is what users call).
// It hands numpy arrays to the core as views, without a copy, writes results straight into numpy arrays, and
// returns the command line's own JSON texts (cli/reports.hpp): every number is the program's, bit for bit.
// The options arrive as the command line's words ("--dtype", "int4"), parsed by the command line's parser, so
// that a bad option gets the program's one line, as a ValueError.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>
#include <omp.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <exception>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "cli/format_output.hpp"
#include "cli/lessons.hpp"
#include "cli/options.hpp"
#include "cli/reports.hpp"
#include "python/interruptible.hpp"
#include "quantscope/error.hpp"
#include "quantscope/format.hpp"
#include "quantscope/format_table.hpp"
#include "quantscope/ggml_blocks.hpp"
#include "quantscope/lesson.hpp"
#include "quantscope/tensor_io.hpp"
#include "quantscope/text.hpp"

namespace py = pybind11;

namespace qs::python {
namespace {

using cli::OptionSpec;
using cli::ParsedArgs;

// A qs::Error met while reading a file: Python's OSError. Every other qs::Error (an option, a value) is a
// ValueError.
class FileError : public std::runtime_error {
public:
    explicit FileError(const std::string& message) : std::runtime_error(message) {}
};

template <class Work>
auto reading_file(Work&& work) -> decltype(work()) {
    try {
        return work();
    } catch (const MethodCancelled&) {
        throw;
    } catch (const Error& e) {
        throw FileError(e.what());
    }
}

std::string shape_text(const py::array& a) {
    std::string out = "(";
    for (py::ssize_t k = 0; k < a.ndim(); ++k) out += (k ? ", " : "") + std::to_string(a.shape(k));
    return out + (a.ndim() == 1 ? ",)" : ")");
}

// Reads of an array's bytes under a guard, as the core reads a mapped file's: a numpy.memmap (or
// quantscope.open(mmap=True)) whose file shrinks faults with SIGBUS on the pages past its new end, which
// would end the interpreter. The guard maps zeros there instead, and the pass then fails with a ValueError.
class ArrayGuard final : public ReadGuard {
public:
    ArrayGuard(const py::array& a, std::string name) : name_(std::move(name)) {
        range_.begin = static_cast<const std::uint8_t*>(a.data());
        range_.size = static_cast<std::size_t>(a.nbytes());
    }
    void run(const std::function<void()>& work) const override {
        const detail::ShrinkGuard guard(&range_);
        try {
            work();
        } catch (...) {
            check();
            throw;
        }
        check();
    }

private:
    void check() const {
        if (range_.shrank.load())
            throw Error(name_ + ": the file under this memory-mapped array shrank while it was read (the lost part now "
                                "reads as zeros: load the file again)");
    }

    mutable detail::MappedRange range_;
    std::string name_;
};

// Whether the array's bytes are plain memory: it or the array it views owns them, or they are a bytes or
// bytearray object's. Anything else (numpy.memmap, an mmap.mmap buffer, quantscope.open(mmap=True), a
// buffer of unknown origin) may be a file's mapping and is read under an ArrayGuard, which costs the passes
// their direct float32 path (2.5x on 4096² in memory, measured): the common case must not pay for it.
bool in_plain_memory(const py::array& a) {
    PyObject* at = a.ptr();
    for (int depth = 0; depth < 64; ++depth) {  // numpy collapses view chains; the bound is for a hostile chain
        if (PyBytes_Check(at) || PyByteArray_Check(at)) return true;
        if (!py::isinstance<py::array>(py::handle(at))) return false;
        const py::array link = py::reinterpret_borrow<py::array>(at);
        if (link.owndata()) return true;  // (a numpy.memmap owns nothing: its base is the mmap.mmap)
        const py::object base = link.base();
        if (base.is_none()) return false;
        at = base.ptr();
    }
    return false;
}

// A TensorView of a numpy array with the guard its reads go through (kept on the heap, where the view
// points, so that the ArrayView may move).
struct ArrayView : TensorView {
    std::unique_ptr<ArrayGuard> owned_guard;
};

// The array as the core reads a tensor: float16/32/64 in native (little-endian) order, C-contiguous, rank 1
// to 3, no dimension 0. The Python side converts what it can (lists, integers, other orders); what reaches
// here otherwise is refused, not read past its end.
ArrayView array_view(const py::array& a, const std::string& name) {
    if (a.ndim() == 0) throw Error(name + " is a 0-d array (a scalar); QuantScope takes arrays of rank 1 to 3");
    if (a.ndim() > 3)
        throw Error(name + " has rank " + std::to_string(a.ndim()) + " (shape " + shape_text(a) +
                    "); QuantScope takes arrays of rank 1 to 3: reshape it, e.g. x.reshape(-1, *x.shape[-2:])");
    ArrayView view;
    for (py::ssize_t k = 0; k < a.ndim(); ++k) {
        if (a.shape(k) == 0) throw Error(name + " has shape " + shape_text(a) + ", which is empty (a dimension is 0)");
        view.shape.push_back(a.shape(k));
    }
    if (!(a.flags() & py::array::c_style)) throw Error(name + " is not C-contiguous (numpy.ascontiguousarray)");
    const py::dtype type = a.dtype();
    const bool native = type.byteorder() == '=' || type.byteorder() == '<' || type.byteorder() == '|';
    if (type.kind() != 'f' || !native)
        throw Error(name + " must hold float16, float32 or float64 values in native byte order");
    switch (type.itemsize()) {
        case 2: view.type = ElementType::F16; break;
        case 4: view.type = ElementType::F32; break;
        case 8: view.type = ElementType::F64; break;
        default: throw Error(name + " must hold float16, float32 or float64 values (not float" + std::to_string(8 * type.itemsize()) + ")");
    }
    view.data = static_cast<const std::uint8_t*>(a.data());
    view.name = name;
    if (!in_plain_memory(a)) {
        view.owned_guard = std::make_unique<ArrayGuard>(a, name);
        view.guard = view.owned_guard.get();
    }
    return view;
}

// The digest of bytes [first, last) of `data`, pieces of 1 MiB each seeded by its index: in a piece four
// independent multiply-xor lanes, so that the pass runs at memory speed rather than at one multiplication's
// latency per word.
std::uint64_t digest_pieces(const std::uint8_t* data, std::int64_t size, std::int64_t first, std::int64_t last) {
    constexpr std::int64_t kPiece = 1 << 20;
    constexpr std::uint64_t kPrime = 0x100000001B3ull;
    std::uint64_t combined = 0;
    for (std::int64_t piece = first; piece < last; ++piece) {
        const std::uint8_t* bytes = data + piece * kPiece;
        const std::int64_t count = std::min(kPiece, size - piece * kPiece);
        std::uint64_t lane[4] = {0x9E3779B97F4A7C15ull ^ static_cast<std::uint64_t>(piece), 0xC2B2AE3D27D4EB4Full,
                                 0x165667B19E3779F9ull, 0x27D4EB2F165667C5ull};
        std::int64_t at = 0;
        for (; at + 32 <= count; at += 32)
            for (int k = 0; k < 4; ++k) {
                std::uint64_t word;
                std::memcpy(&word, bytes + at + 8 * k, 8);
                lane[k] = ((lane[k] ^ word) * kPrime) ^ (lane[k] >> 31);
            }
        for (; at < count; ++at) lane[0] = (lane[0] ^ bytes[at]) * kPrime;
        combined ^= (((lane[0] * kPrime ^ lane[1]) * kPrime ^ lane[2]) * kPrime ^ lane[3]) * kPrime;
    }
    return combined;
}

// A 64-bit digest of the array's bytes that depends on their order: a Result compares it before it makes its
// arrays, because an x changed in place by a permutation (sort, shuffle) keeps every metric of the JSON.
// Large arrays on as many plain threads as the core's passes use (not OpenMP: its idle workers would spin
// on the cores the next pass needs).
std::uint64_t digest(const py::array& x) {
    const ArrayView view = array_view(x, "x");
    const std::int64_t size = view.numel() * static_cast<std::int64_t>(element_size(view.type));
    const std::int64_t pieces = (size + (1 << 20) - 1) >> 20;
    const std::int64_t threads = std::min<std::int64_t>(pieces / 4 + 1, omp_get_max_threads());
    std::vector<std::uint64_t> parts(static_cast<std::size_t>(threads));
    std::vector<std::exception_ptr> failures(static_cast<std::size_t>(threads));
    py::gil_scoped_release release;
    const auto part = [&](std::int64_t t) {  // under the guard: x may be a memmap whose file shrank
        try {
            view.guarded([&] {
                parts[static_cast<std::size_t>(t)] =
                    digest_pieces(view.data, size, pieces * t / threads, pieces * (t + 1) / threads);
            });
        } catch (...) {
            failures[static_cast<std::size_t>(t)] = std::current_exception();
        }
    };
    std::vector<std::thread> others;
    for (std::int64_t t = 1; t < threads; ++t) others.emplace_back(part, t);
    part(0);
    for (std::thread& other : others) other.join();
    for (const std::exception_ptr& failure : failures)
        if (failure) std::rethrow_exception(failure);
    std::uint64_t combined = static_cast<std::uint64_t>(size);
    for (const std::uint64_t p : parts) combined ^= p;
    return combined;
}

ParsedArgs parse_options(const std::vector<std::string>& args, const std::vector<OptionSpec>& specs) {
    ParsedArgs parsed = cli::parse_args(args, specs);
    if (!parsed.positionals.empty()) throw Error("unexpected argument " + quoted_text(parsed.positionals[0]));
    return parsed;
}

// quantize's config for these values, as the program makes it for a file (load_input without a preset), with
// `importance` (None or a float32 row of one weight per column) in place of --importance's file.
QuantConfig array_config(const ParsedArgs& parsed, const TensorView& values, const py::object& importance) {
    QuantConfig config;
    cli::apply_quantize_options(parsed, config);
    cli::apply_recipe(parsed, values, config);
    if (!importance.is_none()) {
        const py::array given = importance.cast<py::array>();
        if (given.ndim() != 1) throw Error("importance must be a 1-D array: one weight per column of the last axis");
        // decoded as x is: a float64 beyond float32's range is named as such (a cast would make it Inf)
        auto row = std::make_shared<std::vector<float>>(materialize(array_view(given, "importance")).values);
        try {
            check_importance(*row, values.shape.back());
        } catch (const Error& e) {
            throw Error(std::string("importance: ") + e.what());
        }
        config.importance = std::move(row);
    }
    check_config(config, values.shape);
    return config;
}

py::dtype code_dtype(NpyDtype type) {
    switch (type) {
        case NpyDtype::I1: return py::dtype::of<std::int8_t>();
        case NpyDtype::U1: return py::dtype::of<std::uint8_t>();
        case NpyDtype::I2: return py::dtype::of<std::int16_t>();
        case NpyDtype::U2: return py::dtype::of<std::uint16_t>();
        case NpyDtype::F4: break;
    }
    return py::dtype::of<float>();
}

template <class Code>
void store_codes(void* out, std::int64_t first, std::int64_t count, const std::int32_t* codes) {
    Code* to = static_cast<Code*>(out) + first;
    for (std::int64_t i = 0; i < count; ++i) to[i] = static_cast<Code>(codes[i]);
}

// Every block's s and z as `quantize --all-params` lists them: int<N> s (float64) and z (int32); a format's s
// as used (float32) and Q4_1's m (empty for the others).
void add_pairs(py::dict& out, const QuantConfig& config, const Quantization& q) {
    if (is_int_format(config.format)) {
        py::array_t<double> scale(q.params.block_count);
        py::array_t<std::int32_t> zero_point(q.params.block_count);
        double* s = scale.mutable_data();
        std::int32_t* z = zero_point.mutable_data();
        cli::for_each_pair(q.params, [&](double sb, std::int32_t zb) { *s++ = sb, *z++ = zb; });
        out["scale"] = scale;
        out["zero_point"] = zero_point;
        return;
    }
    const FormatParams& p = q.format_params;
    if (p.on_demand()) {
        py::array_t<float> scale(q.params.block_count);
        float* s = scale.mutable_data();
        cli::for_each_pair(q.params, [&](double sb, std::int32_t) { *s++ = static_cast<float>(sb); });
        out["scale"] = scale;
    } else {
        out["scale"] = py::array_t<float>(static_cast<py::ssize_t>(p.scale.size()), p.scale.data());
    }
    out["zero_point"] = py::array_t<float>(static_cast<py::ssize_t>(p.offset.size()), p.offset.data());
}

// quantize(x, args, importance, arrays): the JSON `quantize` prints and, with `arrays`, the codes (the
// program's --out-quantized type), r' and |r - r'| written by the pass straight into new numpy arrays, plus
// every block's s and z.
py::dict quantize(const py::array& x, const std::vector<std::string>& args, const py::object& importance, bool arrays) {
    const ArrayView values = array_view(x, "x");
    const ParsedArgs parsed = parse_options(args, cli::quantize_report_options());
    const QuantConfig config = array_config(parsed, values, importance);
    std::vector<py::ssize_t> shape(values.shape.begin(), values.shape.end());
    py::array codes, dequantized, error;
    void* codes_out = nullptr;
    float* dequantized_out = nullptr;
    float* error_out = nullptr;
    const NpyDtype code_type = cli::code_npy_dtype(config);
    if (arrays) {
        codes = py::array(code_dtype(code_type), shape);
        dequantized = py::array_t<float>(shape);
        error = py::array_t<float>(shape);
        codes_out = codes.mutable_data();
        dequantized_out = static_cast<float*>(dequantized.mutable_data());
        error_out = static_cast<float*>(error.mutable_data());
    }
    std::unique_ptr<ImportanceError> weighted;
    if (config.importance) weighted = std::make_unique<ImportanceError>(config.importance);
    const OutputSelection wanted{arrays, arrays, arrays || weighted != nullptr};
    std::string text;
    Quantization result;
    {
        py::gil_scoped_release release;
        ResultSink sink;
        if (wanted.codes || wanted.error)
            sink = [&](std::int64_t first, std::int64_t count, const QuantOutputs& batch) {
                if (batch.codes) {
                    switch (code_type) {
                        case NpyDtype::I1: store_codes<std::int8_t>(codes_out, first, count, batch.codes); break;
                        case NpyDtype::U1: store_codes<std::uint8_t>(codes_out, first, count, batch.codes); break;
                        case NpyDtype::I2: store_codes<std::int16_t>(codes_out, first, count, batch.codes); break;
                        case NpyDtype::U2: store_codes<std::uint16_t>(codes_out, first, count, batch.codes); break;
                        case NpyDtype::F4: break;
                    }
                }
                if (batch.dequantized) std::memcpy(dequantized_out + first, batch.dequantized, count * sizeof(float));
                if (batch.error && error_out) std::memcpy(error_out + first, batch.error, count * sizeof(float));
                if (batch.error && weighted) weighted->add(batch.error, count);  // error batches come in order
            };
        result = quantize_checked(values, config, wanted, sink);
        const double weighted_mse = weighted ? weighted->mean() : 0.0;
        text = cli::quantize_json(parsed, values, config, result, weighted ? &weighted_mse : nullptr);
    }
    py::dict out;
    out["json"] = text;
    if (arrays) {
        out["codes"] = codes;
        out["dequantized"] = dequantized;
        out["error"] = error;
    }
    add_pairs(out, config, result);
    return out;
}

// The bytes `quantize --out-packed` writes: a ggml type's blocks, or the codes packed end to end and the
// stored scales.
py::bytes packed(const py::array& x, const std::vector<std::string>& args, const py::object& importance) {
    const ArrayView values = array_view(x, "x");
    const ParsedArgs parsed = parse_options(args, cli::quantize_report_options());
    const QuantConfig config = array_config(parsed, values, importance);
    std::string bytes;
    {
        py::gil_scoped_release release;
        const auto append = [&bytes](const std::uint8_t* data, std::size_t size) {
            bytes.append(reinterpret_cast<const char*>(data), size);
        };
        if (format_traits(config.format).ggml != nullptr) {
            ggml_block_bytes(values, config, append);
        } else {
            cli::PackedWriter writer(append, cli::code_bits(config));
            const Quantization q = quantize_checked(values, config, {true, false, false},
                                                    [&](std::int64_t, std::int64_t count, const QuantOutputs& batch) {
                                                        if (batch.codes) writer.append(batch.codes, count);
                                                    });
            writer.finish(config, q);
        }
    }
    return py::bytes(bytes);
}

std::string formats(const py::array& x) {
    const ArrayView values = array_view(x, "x");
    return interruptible<std::string>([&](const std::atomic<bool>& cancel) {
        return cli::formats_json(format_table(values, [&cancel] { return !cancel.load(); }));
    });
}

std::string layer(const py::array& weights, const py::object& inputs, const py::object& bias,
                  const std::vector<std::string>& args) {
    const ParsedArgs parsed = parse_options(args, cli::layer_report_options());
    const cli::LayerRequest request = cli::layer_request(parsed);
    const ArrayView weights_view = array_view(weights, "weights");
    std::optional<ArrayView> inputs_view, bias_view;
    if (!inputs.is_none()) inputs_view.emplace(array_view(inputs.cast<py::array>(), "inputs"));
    if (!bias.is_none()) bias_view.emplace(array_view(bias.cast<py::array>(), "bias"));
    // The float32 copies (the layer works on tensors in memory) and --random-inputs' values are made on the
    // worker, without the GIL: 2^28 random inputs take seconds.
    return interruptible<std::string>([&](const std::atomic<bool>& cancel) {
        const Tensor w = materialize(weights_view);
        const Tensor x = cli::layer_inputs(parsed, w, inputs_view ? materialize(*inputs_view) : Tensor{});
        Tensor b;
        if (bias_view) b = materialize(*bias_view);
        MethodControl control;
        control.cancelled = [&cancel] { return cancel.load(); };
        const MethodResult m = cli::compute_layer(request, x, w, bias_view ? &b : nullptr, false, &control);
        return cli::layer_json(request, m);
    });
}

std::string sweep(const std::string& path, const std::vector<std::string>& args) {
    const ParsedArgs parsed = parse_options(args, cli::sweep_report_options());
    const SweepSettings settings = cli::sweep_settings(parsed);
    const Checkpoint checkpoint = [&] {
        py::gil_scoped_release release;
        return reading_file([&] { return open_checkpoint(path); });
    }();
    return interruptible<std::string>([&](const std::atomic<bool>& cancel) {
        std::vector<std::string> rows;
        const SweepTotal total = reading_file([&] {
            return sweep_checkpoint(checkpoint, settings, [&](const SweepRow& row) { rows.push_back(cli::sweep_row_json(row)); },
                                    nullptr, &cancel);
        });
        return cli::sweep_json(rows, total);
    });
}

// Without the GIL, as every read of a file here: a GGUF's metadata (a tokenizer's vocabulary) is long to walk.
std::string inspect(const std::string& path) {
    py::gil_scoped_release release;
    return reading_file([&] { return cli::inspect_json(path); });
}

// A tensor of a file as numpy: .npy (float16/32/64), .safetensors and .gguf (F16, F32, F64 as stored; BF16 and
// ggml's quantized types decoded to float32), .csv (float32). Copied under the file's read guard (a file that
// shrinks meanwhile is an OSError, not a crash), or, with `mapped`, an array over the file's mapping that keeps
// it open, as numpy.load(mmap_mode="r") (numpy's reads of a file truncated while mapped end the interpreter;
// this module's go through ArrayGuard).
py::array open_tensor(const std::string& path, const std::string& tensor, bool mapped) {
    std::shared_ptr<TensorFile> file;
    {
        py::gil_scoped_release release;  // (a quantized GGUF tensor is decoded here)
        file = reading_file([&] { return std::make_shared<TensorFile>(path, tensor); });
    }
    const TensorView& view = file->view();
    const std::vector<py::ssize_t> shape(view.shape.begin(), view.shape.end());
    py::dtype type = py::dtype::of<float>();
    if (view.type == ElementType::F16) type = py::dtype("float16");
    if (view.type == ElementType::F64) type = py::dtype::of<double>();
    if (mapped && view.type != ElementType::BF16) {
        auto* owner = new std::shared_ptr<TensorFile>(file);
        py::capsule keep(owner, [](void* p) { delete static_cast<std::shared_ptr<TensorFile>*>(p); });
        py::array mapped_array(type, shape, view.data, keep);
        mapped_array.attr("setflags")(py::arg("write") = false);  // the mapping is PROT_READ: a write would crash
        return mapped_array;
    }
    py::array out(type, shape);
    std::uint8_t* to = static_cast<std::uint8_t*>(out.mutable_data());
    const std::int64_t n = view.numel();
    {
        py::gil_scoped_release release;
        reading_file([&] {
            if (view.type == ElementType::BF16) {
                constexpr std::int64_t kPiece = 1 << 16;
                std::vector<float> scratch(kPiece);
                view.guarded([&] {  // floats_at reads the mapping: a file that shrinks meanwhile is an OSError
                    for (std::int64_t at = 0; at < n; at += kPiece) {
                        const std::int64_t count = std::min(kPiece, n - at);
                        std::memcpy(to + at * 4, floats_at(view, at, count, scratch.data()), count * sizeof(float));
                    }
                });
            } else {
                view.guarded([&] { std::memcpy(to, view.data, static_cast<std::size_t>(n) * element_size(view.type)); });
            }
        });
    }
    return out;
}

// Raises `type` with the message; bytes that are not UTF-8 (a file name's, an option's) are shown as \xNN
// rather than failing the decoding, which would replace the error by a UnicodeDecodeError.
void raise_with(PyObject* type, const char* message) {
    PyObject* text = PyUnicode_DecodeUTF8(message, static_cast<Py_ssize_t>(std::strlen(message)), "backslashreplace");
    if (text == nullptr) return;  // (out of memory: that error stays set)
    PyErr_SetObject(type, text);
    Py_DECREF(text);
}

// The lessons' headers (a folder or file that cannot be read is an OSError, as any file).
py::list lessons() {
    py::list out;
    const std::string dir = reading_file([] { return cli::lessons_dir(); });
    if (dir.empty())
        throw FileError("no lessons folder found (set QUANTSCOPE_LESSONS to the folder of the lesson files)");
    for (const std::string& file : reading_file([&] { return lesson_files(dir); })) {
        const LessonHeader lesson = reading_file([&] { return read_lesson_header(file); });
        py::dict row;
        row["name"] = lesson.name;
        row["steps"] = lesson.steps;
        row["title"] = lesson.title;
        row["source"] = lesson.source;
        out.append(row);
    }
    return out;
}

}  // namespace
}  // namespace qs::python

PYBIND11_MODULE(_quantscope, m) {
    using namespace qs::python;
    m.doc() = "The compiled half of quantscope: use the functions of the quantscope package.";
    py::register_exception_translator([](std::exception_ptr p) {
        try {
            if (p) std::rethrow_exception(p);
        } catch (const FileError& e) {
            raise_with(PyExc_OSError, e.what());
        } catch (const qs::Error& e) {
            raise_with(PyExc_ValueError, e.what());
        }
    });
    m.attr("version") = QS_VERSION;
    m.attr("executable") = QS_EXECUTABLE;
    m.attr("max_elements") = qs::kMaxElements;           // a tensor copied in memory (formats, layer, render)
    m.attr("max_view_elements") = qs::kMaxViewElements;  // a tensor read in place (quantize)
    m.def("check", [](const py::array& x, const std::string& name) { array_view(x, name); }, py::arg("x"), py::arg("name"));
    m.def("quantize", &quantize, py::arg("x"), py::arg("args"), py::arg("importance"), py::arg("arrays"));
    m.def("digest", &digest, py::arg("x"));
    m.def("packed", &packed, py::arg("x"), py::arg("args"), py::arg("importance"));
    m.def("formats", &formats, py::arg("x"));
    m.def("layer", &layer, py::arg("weights"), py::arg("inputs"), py::arg("bias"), py::arg("args"));
    m.def("sweep", &sweep, py::arg("path"), py::arg("args"));
    m.def("inspect", &inspect, py::arg("path"));
    m.def("open", &open_tensor, py::arg("path"), py::arg("tensor"), py::arg("mapped"));
    m.def("lessons", &lessons);
}
