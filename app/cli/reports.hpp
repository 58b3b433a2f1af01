// What the commands print as JSON, apart from reading their inputs and writing their files: the program
// prints these texts, and the Python module (app/python) returns the same texts, parsed, for numpy arrays
// that never were files. One writer for each report, so that both faces give the same bytes.
#pragma once

#include <string>
#include <vector>

#include "cli/options.hpp"
#include "quantscope/config.hpp"
#include "quantscope/format_table.hpp"
#include "quantscope/layer.hpp"
#include "quantscope/layer_methods.hpp"
#include "quantscope/quantize.hpp"
#include "quantscope/sweep.hpp"

namespace qs::cli {

// `quantize`'s options beyond the tensor's source: the quantization, --all-params and --recipe (file outputs
// and the importance's files are the program's own).
std::vector<OptionSpec> quantize_report_options();
// `quantize`'s JSON object for `values` quantized as `result` (SPEC "Command line"). `importance_weighted_mse`
// is printed when given; --all-params and --recipe are read from `args`.
std::string quantize_json(const ParsedArgs& args, const TensorView& values, const QuantConfig& config,
                          const Quantization& result, const double* importance_weighted_mse);

// `formats --json`: {"formats": [rows]}.
std::string formats_json(const std::vector<FormatRow>& rows);

// `inspect FILE --json`: a .safetensors file's tensors, or a .gguf file's metadata and tensors.
std::string inspect_json(const std::string& path);

// `layer`: its options (all but the operands' files and the outputs), what they ask for, and its JSON.
std::vector<OptionSpec> layer_report_options();
struct LayerRequest {
    LayerConfig config;
    MethodConfig method;
    bool with_method = false;  // --method given: the JSON adds `method` and `rtn_output`
    bool all_params = false;
};
LayerRequest layer_request(const ParsedArgs& args);
// The inputs x: `given` (the Python module's array), --inputs X, or made by --random-inputs (with --tokens,
// --seed ...) for `weights`.
Tensor layer_inputs(const ParsedArgs& args, const Tensor& weights, Tensor given = {});
// Runs the layer (with its method, or to keep W's codes: `keep_codes`); `control` may cancel it.
MethodResult compute_layer(const LayerRequest& request, const Tensor& x, const Tensor& w, const Tensor* bias,
                           bool keep_codes, MethodControl* control = nullptr);
std::string layer_json(const LayerRequest& request, const MethodResult& result);

// `sweep PATH --json`: its options (all but the path and the output's form) as settings, checked where they
// do not depend on a tensor; the program then opens the checkpoint and prints rows as they come.
std::vector<OptionSpec> sweep_report_options();
SweepSettings sweep_settings(const ParsedArgs& args);
std::string sweep_row_json(const SweepRow& row);
// The JSON's closing part, {"tensors": [...], "total": {...}}: `rows` the rows' texts.
std::string sweep_json(const std::vector<std::string>& rows, const SweepTotal& total);

}  // namespace qs::cli
