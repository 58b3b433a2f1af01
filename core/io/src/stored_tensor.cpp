#include "quantscope/stored_tensor.hpp"

#include <algorithm>
#include <vector>

#include "quantscope/atomic_file.hpp"
#include "quantscope/error.hpp"
#include "quantscope/ggml_types.hpp"
#include "quantscope/gguf.hpp"
#include "quantscope/safetensors.hpp"
#include "quantscope/tensor_io.hpp"

namespace qs {

std::shared_ptr<const StoredBlocks> read_stored_blocks(const std::string& path, const std::string& tensor_name,
                                                       const Shape* expected) {
    const std::string where = printable(path) + ": tensor " + quoted_text(tensor_name);
    const auto check_shape = [&](const Shape& folded) {
        if (expected && folded != *expected)
            throw StoredShapeMismatch(where + " is " + shape_to_string(folded) + ", not " + shape_to_string(*expected), folded);
    };
    if (lower_extension(path) != ".gguf") {
        // A .safetensors file's values (F32, F16, BF16, F64 are ggml's bytes of those types): B stores values.
        const SafetensorsFile file(path);
        const auto it = std::find_if(file.list().begin(), file.list().end(),
                                     [&](const SafetensorsEntry& e) { return e.name == tensor_name; });
        if (it == file.list().end()) throw Error(printable(path) + ": no tensor named " + quoted_text(tensor_name));
        const GgmlTypeInfo* type = ggml_type_named(it->dtype);
        if (type == nullptr || type->block_size != 1 || !type->decodes)
            throw Error(where + " is " + it->dtype + ", not values QuantScope reads (F32, F16, BF16, F64)");
        std::int64_t n = 1;
        for (const std::int64_t d : it->shape) n *= d;
        if (it->shape.empty() || n == 0) throw Error(where + " has no values");
        check_shape(fold_to_rank3(it->shape));
        std::vector<std::uint8_t> bytes(static_cast<std::size_t>(it->end - it->begin));
        try {
            file.file().read_guarded([&] {
                const std::uint8_t* from = file.file().data() + file.data_offset() + it->begin;
                std::copy(from, from + bytes.size(), bytes.begin());
                return 0;
            });
            return make_stored_blocks(*type, fold_to_rank3(it->shape), std::move(bytes));
        } catch (const std::exception& e) {
            throw Error(where + ": " + error_text(e));
        }
    }
    const GgufFile file(path);  // the header checked in full: every tensor's bytes lie inside the file
    const GgufTensor* t = file.find(tensor_name);
    if (t == nullptr) throw Error(printable(path) + ": no tensor named " + quoted_text(tensor_name));
    if (t->type == nullptr)
        throw Error(where + " has type id " + std::to_string(t->type_id) + ", which ggml does not define");
    if (t->n_dims == 0 || t->elements == 0) throw Error(where + " has no values");
    check_shape(fold_to_rank3(t->shape()));
    std::vector<std::uint8_t> bytes(static_cast<std::size_t>(t->bytes));
    try {
        file.file().read_guarded([&] {
            const std::uint8_t* from = file.bytes_of(*t);
            std::copy(from, from + bytes.size(), bytes.begin());
            return 0;
        });
        return make_stored_blocks(*t->type, fold_to_rank3(t->shape()), std::move(bytes));
    } catch (const std::exception& e) {
        throw Error(where + ": " + error_text(e));
    }
}

}  // namespace qs
