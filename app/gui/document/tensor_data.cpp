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

std::string SmallTensorNote(const std::string& what, const std::string& why, const TensorData& data) {
    return what + " " + why + "; this tensor has " + std::to_string(data.numel()) +
           " elements and is read from its file. The figure, the metrics, the histograms, the calibrators and "
           "the comparison work on it.";
}

}  // namespace qs::gui
