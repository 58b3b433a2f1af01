// A float32 tensor of rank 1 to 3, stored row-major (C order, like numpy and .npy files).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace qs {

// Upper bound on the number of elements of any tensor the program creates or reads (2^28 floats = 1 GiB).
// Keeps a lying header or an absurd --shape from turning into an unbounded allocation.
constexpr std::int64_t kMaxElements = std::int64_t{1} << 28;
// Upper bound on the elements of a tensor read as a view of a file's mapping (no float32 copy is made, so
// the memory is the file's own): 2^31, beyond the largest tensor of an 8B-parameter model (128256 x 4096).
constexpr std::int64_t kMaxViewElements = std::int64_t{1} << 31;

using Shape = std::vector<std::int64_t>;

struct Tensor {
    Shape shape;                // rank 1..3, every dimension >= 1
    std::vector<float> values;  // row-major, values.size() == product of shape

    std::int64_t numel() const { return static_cast<std::int64_t>(values.size()); }
    int rank() const { return static_cast<int>(shape.size()); }
    // The 2-D view a heatmap shows: rank 1 is one row; rank 3 is shape[0] slices of shape[1] x shape[2].
    std::int64_t slices() const { return rank() == 3 ? shape[0] : 1; }
    std::int64_t rows() const { return rank() == 1 ? 1 : shape[rank() - 2]; }
    std::int64_t cols() const { return shape[rank() - 1]; }
    std::int64_t slice_size() const { return rows() * cols(); }
};

// "4x128x256" (rank 1: "9").
std::string shape_to_string(const Shape& shape);
// "[4, 128, 256]", the JSON form.
std::string shape_to_json(const Shape& shape);
// Parses "RxC[xD]" (or a single "N"); throws qs::Error on anything else, a zero dimension, a rank above 3
// or more than kMaxElements elements.
Shape parse_shape(const std::string& text);
// The same with another bound on the elements (kMaxViewElements for a tensor only ever written or mapped).
Shape parse_shape(const std::string& text, std::int64_t limit);
// Product of the dimensions; throws qs::Error if the rank is not 1..3, a dimension is < 1, or the product
// exceeds kMaxElements (checked without overflow).
std::int64_t checked_numel(const Shape& shape);
// The same with another bound (kMaxViewElements for a view of a mapped file).
std::int64_t checked_numel(const Shape& shape, std::int64_t limit);

// Throws qs::Error unless the tensor is usable: rank 1..3, no empty dimension, values.size() matching the
// shape, and every value finite. The message names the first bad index, e.g. "NaN at index [1, 2]".
void check_tensor(const Tensor& tensor);
// "NaN at index [1, 2]: values must be finite" (or "+Inf", "-Inf") for the value at flat index `flat`.
std::string nonfinite_message(float value, const Shape& shape, std::int64_t flat);

// Rank > 3 viewed as 3-D: the leading dimensions multiplied into the first (2x3x4x5 → 6x4x5); rank <= 3
// unchanged. `note` receives "2x3x4x5 viewed as 6x4x5" when folding happened, else is cleared.
// Assumes the element count is already known to be bounded (no overflow check beyond kMaxElements).
Shape fold_to_rank3(const Shape& shape, std::string* note = nullptr);

// "[1, 2]": the multi-index of flat element `flat` in `shape`.
std::string index_to_string(const Shape& shape, std::int64_t flat);

}  // namespace qs
