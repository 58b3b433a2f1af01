// A tensor typed or pasted as text: what a notebook prints (torch's `tensor([[...]])`, numpy's
// `array([[...]])` or `print` form `[[1. 2.] [3. 4.]]`, a Python list `[[...]]`) or a plain table of rows
// (parse_csv). Printed summaries with `...` are refused: they leave values out.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "quantscope/tensor.hpp"

namespace qs {

// The longest text accepted (a 2^20-value tensor printed in full is about 12 MB).
constexpr std::size_t kMaxTensorTextBytes = std::size_t{32} << 20;

// Whether `text` is in the bracketed notebook form (starts, after blanks, with '[' or `name(`), not a table.
bool is_bracketed_tensor_text(std::string_view text);

// Bracketed text: an optional `name(` ... `)` around nested lists of depth 1 to 3, values separated by commas
// and/or blanks (numpy prints none), keyword arguments after the list ignored (`dtype=torch.int8`,
// `device='cuda:0'`, `requires_grad=True`). Anything else goes to parse_csv. Throws qs::Error "<name>: ..."
// for `...` (an elided print), unbalanced brackets, rows of different lengths, depth above 3, a single
// number, an empty list, NaN/Inf, a value outside float32, more than kMaxElements values or
// kMaxTensorTextBytes bytes. Bounded: one pass, no recursion.
Tensor parse_tensor_text(std::string_view text, const std::string& name);

}  // namespace qs
