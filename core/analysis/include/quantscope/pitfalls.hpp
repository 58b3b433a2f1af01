// The lessons' pitfalls as the command line and the window teach them: the naive "/max * 255, cast to int8"
// recipe, and what a cast without the clamp does to this tensor (SPEC's last golden row).
#pragma once

#include <optional>
#include <string>

#include "quantscope/config.hpp"
#include "quantscope/params.hpp"
#include "quantscope/quantize.hpp"
#include "quantscope/tensor_view.hpp"

namespace qs {

// A fixed way of choosing the whole quantization, as a lesson writes it.
enum class Recipe { NaiveMax255 };
const char* to_string(Recipe recipe);              // "naive-max255"
Recipe parse_recipe(const std::string& text);      // naive-max255, else qs::Error

// torch.round(r / r.abs().max() * 255).to(torch.int8): int8, manual s = max|r| / 255 and z = 0 per tensor,
// no clamp (Overflow::Wrap: 255 is stored as -1). `base` keeps what the recipe does not fix (rounding).
// One pass over the values (checked finite).
QuantConfig recipe_config(Recipe recipe, const TensorView& values, QuantConfig base);

// The element whose rounded r / s + z lies farthest outside [q_min, q_max] (the first such on a tie): the
// one that shows an overflow best. Empty when every element fits. One pass over the values.
std::optional<ElementTrace> farthest_overflow(const TensorView& values, const QuantParams& params,
                                              const QuantConfig& config);

// One sentence about `example` (from farthest_overflow) under `config`'s overflow rule, e.g.
//   "Without the clamp, 728.6 at s = 3.5, z = -70 rounds to 138 and the int8 cast wraps it to -118."
//   "728.6 at s = 3.5, z = -70 rounds to 138, outside int8's [-128, 127]: the clamp stores 127."
// and, without an example, "Every value rounds into int8's [-128, 127] here: nothing wraps on this tensor."
std::string overflow_sentence(const std::optional<ElementTrace>& example, const QuantConfig& config);

// What a result of `--overflow wrap` carries (quantize's JSON, each sweep row): the cast without the clamp is
// wrong, and overflow_sentence of its farthest overflow. One pass over the values.
std::string wrap_warning(const TensorView& values, const QuantParams& params, const QuantConfig& config);

}  // namespace qs
