#include "gui/document/tensor_origins.hpp"

#include <utility>

namespace qs::gui {

void TensorOrigins::record(const std::shared_ptr<const TensorData>& tensor, TensorOrigin origin) {
    if (!tensor) return;
    // Entries of tensors that are gone could match a new tensor at the same address: drop them first.
    for (std::size_t i = 0; i < entries_.size();) {
        if (entries_[i].tensor.expired() || entries_[i].address == tensor.get())
            entries_.erase(entries_.begin() + static_cast<std::ptrdiff_t>(i));
        else
            ++i;
    }
    entries_.push_back(Entry{tensor, tensor.get(), std::move(origin)});
}

const TensorOrigin* TensorOrigins::find(const TensorData* tensor) const {
    if (!tensor) return nullptr;
    for (const Entry& e : entries_) {
        const std::shared_ptr<const TensorData> alive = e.tensor.lock();
        if (alive && alive.get() == tensor) return &e.origin;
    }
    return nullptr;
}

}  // namespace qs::gui
