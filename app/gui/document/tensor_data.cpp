#include "gui/document/tensor_data.hpp"

#include <utility>

namespace qs::gui {
namespace {

std::shared_ptr<TensorData> WithOverview(std::shared_ptr<TensorData> data) {
    data->values = overview_values(data->view, overview_grid(data->view.shape, kOverviewCells));
    return data;
}

}  // namespace

std::shared_ptr<const TensorData> MakeTensorData(std::shared_ptr<const Tensor> tensor) {
    check_tensor(*tensor);
    auto data = std::make_shared<TensorData>();
    data->view = view_of(*tensor);
    data->floats = std::move(tensor);
    return WithOverview(std::move(data));
}

std::shared_ptr<const TensorData> MakeTensorData(std::shared_ptr<const TensorFile> file) {
    if (file->view().numel() <= kInMemoryElements) return MakeTensorData(std::make_shared<const Tensor>(materialize(file->view())));
    auto data = std::make_shared<TensorData>();
    data->view = file->view();
    data->file = std::move(file);
    return WithOverview(std::move(data));
}

std::string NeedsInMemoryNote(const std::string& what, const TensorData& data) {
    return what + " need the values in memory: tensors of up to " + std::to_string(kInMemoryElements) +
           " elements; this one has " + std::to_string(data.numel()) +
           " and is read from its file (the figure, its tooltips and the metrics are exact).";
}

}  // namespace qs::gui
