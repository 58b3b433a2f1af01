#include "quantscope/stored_tensor.hpp"

#include <algorithm>
#include <vector>

#include "quantscope/atomic_file.hpp"
#include "quantscope/error.hpp"
#include "quantscope/gguf.hpp"
#include "quantscope/tensor_io.hpp"

namespace qs {

std::shared_ptr<const StoredBlocks> read_stored_blocks(const std::string& path, const std::string& tensor_name) {
    const std::string where = printable(path) + ": tensor " + quoted_text(tensor_name);
    if (lower_extension(path) != ".gguf") throw Error(where + " is stored as values, not as quantized blocks");
    const GgufFile file(path);  // the header checked in full: every tensor's bytes lie inside the file
    const GgufTensor* t = file.find(tensor_name);
    if (t == nullptr) throw Error(printable(path) + ": no tensor named " + quoted_text(tensor_name));
    if (t->type == nullptr)
        throw Error(where + " has type id " + std::to_string(t->type_id) + ", which ggml does not define");
    if (t->shape.empty() || t->elements == 0) throw Error(where + " has no values");
    std::vector<std::uint8_t> bytes(static_cast<std::size_t>(t->bytes));
    try {
        file.file().read_guarded([&] {
            const std::uint8_t* from = file.bytes_of(*t);
            std::copy(from, from + bytes.size(), bytes.begin());
            return 0;
        });
        return make_stored_blocks(*t->type, fold_to_rank3(t->shape), std::move(bytes));
    } catch (const std::exception& e) {
        throw Error(where + ": " + error_text(e));
    }
}

}  // namespace qs
