// Where each tensor on screen came from, so that a saved session refers to the preset, random spec or file
// instead of copying the values.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "gui/document/tensor_data.hpp"
#include "quantscope/session.hpp"

namespace qs::gui {

// Where a tensor came from, unedited: a session can then refer to the preset, random spec or file instead of
// copying the values. `note` is how a file's tensor was viewed ("2x3x4x5 viewed as 6x4x5"), or empty.
struct TensorOrigin {
    TensorSource source;
    std::string note;
    // A Model-tab row opened against B: the file (absolute) whose tensor of the same name is the data's `stored`.
    std::string compare_b;
};

// Origins keyed by tensor identity. Tensors are immutable and shared, and every edit makes a new one, so an
// edited tensor has no origin while an undo back to the loaded one finds it again.
class TensorOrigins {
public:
    void record(const std::shared_ptr<const TensorData>& tensor, TensorOrigin origin);
    // nullptr when `tensor` was not recorded (edited, pasted, inline from a session).
    const TensorOrigin* find(const TensorData* tensor) const;

private:
    struct Entry {
        std::weak_ptr<const TensorData> tensor;
        const TensorData* address = nullptr;
        TensorOrigin origin;
    };
    std::vector<Entry> entries_;
};

}  // namespace qs::gui
