#include "quantscope/tensor_io.hpp"

#include <cctype>

#include "quantscope/atomic_file.hpp"
#include "quantscope/csv.hpp"
#include "quantscope/error.hpp"
#include "quantscope/gguf.hpp"
#include "quantscope/npy.hpp"
#include "quantscope/safetensors.hpp"
#include "quantscope/text.hpp"

namespace qs {
std::string lower_extension(const std::string& path) {
    const auto slash = path.find_last_of('/');
    const auto dot = path.find_last_of('.');
    if (dot == std::string::npos || (slash != std::string::npos && dot < slash)) return "";
    std::string ext = path.substr(dot);
    for (char& c : ext) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return ext;
}

namespace {

enum class Format { Npy, Csv, Safetensors, Gguf };

Format input_format(const std::string& path) {
    const std::string ext = lower_extension(path);
    if (ext == ".npy") return Format::Npy;
    if (ext == ".csv") return Format::Csv;
    if (ext == ".safetensors") return Format::Safetensors;
    if (ext == ".gguf") return Format::Gguf;
    throw Error(printable(path) + ": " + (ext.empty() ? std::string("no file extension") : "unknown file type " + quoted_text(ext)) +
                "; QuantScope reads .npy, .csv, .safetensors and .gguf");
}

Format output_format(const std::string& path) {
    const std::string ext = lower_extension(path);
    if (ext == ".npy") return Format::Npy;
    if (ext == ".csv") return Format::Csv;
    throw Error(printable(path) + ": " + (ext.empty() ? std::string("no file extension") : "unknown file type " + quoted_text(ext)) +
                "; QuantScope writes .npy and .csv");
}

// The tensor `tensor_name` names, or the file's only one (a SafetensorsFile or a GgufFile).
template <class File>
std::string pick_tensor(const File& file, const std::string& path, const std::string& tensor_name) {
    if (!tensor_name.empty()) return tensor_name;
    const auto& entries = file.list();
    if (entries.size() == 1) return std::string(entries.front().name);
    if (entries.empty()) throw Error(printable(path) + ": the file holds no tensors");
    throw Error(printable(path) + ": the file holds " + std::to_string(entries.size()) + " tensors (" + file.names_for_message() +
                "); choose one with --tensor NAME");
}

Format checked_input_format(const std::string& path, const std::string& tensor_name) {
    const Format format = input_format(path);
    if (format != Format::Safetensors && format != Format::Gguf && !tensor_name.empty()) {
        throw Error(printable(path) + ": --tensor " + quoted_text(tensor_name) + " applies only to .safetensors and .gguf files");
    }
    return format;
}

}  // namespace

Tensor load_tensor(const std::string& path) { return load_tensor(path, std::string()); }

Tensor load_tensor(const std::string& path, const std::string& tensor_name, std::string* note) {
    if (note != nullptr) note->clear();
    switch (checked_input_format(path, tensor_name)) {
        case Format::Npy: return read_npy(path, note);
        case Format::Csv: return read_csv(path);
        case Format::Safetensors: break;
        case Format::Gguf: {
            const GgufFile file(path);
            return file.read(pick_tensor(file, path, tensor_name), note);
        }
    }
    const SafetensorsFile file(path);
    return file.read(pick_tensor(file, path, tensor_name), note);
}

TensorFile::TensorFile(const std::string& path, const std::string& tensor_name) {
    switch (checked_input_format(path, tensor_name)) {
        case Format::Npy: {
            file_ = std::make_unique<MappedFile>(path);
            const NpyData layout =
                file_->read_guarded([&] { return inspect_npy(file_->data(), file_->size(), path, &note_); });
            if (layout.fortran_order) {
                decoded_ = read_npy(*file_, &note_);
                view_ = view_of(decoded_);
                file_.reset();
                break;
            }
            view_.shape = layout.shape;
            view_.type = layout.type;
            view_.data = file_->data() + layout.data_offset;
            view_.guard = file_->guard();
            view_.name = path;
            file_->will_read(layout.data_offset, file_->size() - layout.data_offset);
            break;
        }
        case Format::Csv:
            decoded_ = read_csv(path);
            view_ = view_of(decoded_);
            break;
        case Format::Safetensors: {
            safetensors_ = std::make_unique<SafetensorsFile>(path);
            view_ = safetensors_->view(pick_tensor(*safetensors_, path, tensor_name), &note_);
            // The first pass reads the whole tensor: the kernel reads it ahead at the disk's pace from now on,
            // instead of a few pages at a time as the pass faults them in (a cold 1 GB tensor: 7 s -> ~2 s).
            safetensors_->file().will_read(static_cast<std::size_t>(view_.data - safetensors_->file().data()),
                                           static_cast<std::size_t>(view_.numel()) * element_size(view_.type));
            break;
        }
        case Format::Gguf: {
            gguf_ = std::make_unique<GgufFile>(path);
            view_ = gguf_->view(pick_tensor(*gguf_, path, tensor_name), decoded_, &note_);
            if (decoded_.values.empty())  // a stored float type viewed in the mapping: read it ahead as above
                gguf_->file().will_read(static_cast<std::size_t>(view_.data - gguf_->file().data()),
                                        static_cast<std::size_t>(view_.numel()) * element_size(view_.type));
            break;
        }
    }
}

TensorFile::~TensorFile() = default;

TensorWriter::TensorWriter(AtomicFileWriter& out, const Shape& shape, NpyDtype dtype) : out_(out) {
    if (output_format(out.target()) == Format::Csv)
        csv_ = std::make_unique<CsvTableWriter>(out, shape);
    else
        npy_ = std::make_unique<NpyArrayWriter>(out, shape, dtype);
    numel_ = checked_numel(shape, kMaxViewElements);  // streamed: nothing of the tensor's size is allocated
}

TensorWriter::~TensorWriter() = default;

template <class T>
void TensorWriter::append_values(const T* values, std::int64_t count) {
    if (count > numel_ - written_)
        throw Error("cannot write " + quoted_text(out_.target()) + ": more values than the shape holds");
    if (csv_)
        csv_->append(values, count);
    else
        npy_->append(values, count);
    written_ += count;
}

void TensorWriter::append(const float* values, std::int64_t count) { append_values(values, count); }
void TensorWriter::append(const std::int32_t* codes, std::int64_t count) { append_values(codes, count); }

void TensorWriter::finish() const {
    if (written_ != numel_)
        throw Error("cannot write " + quoted_text(out_.target()) + ": " + std::to_string(written_) + " of " +
                    std::to_string(numel_) + " values were written");
}

void save_floats(AtomicFileWriter& out, const Shape& shape, const float* values) {
    TensorWriter writer(out, shape, NpyDtype::F4);
    writer.append(values, checked_numel(shape));
}

void save_codes(AtomicFileWriter& out, const Shape& shape, const std::int32_t* codes, NpyDtype dtype) {
    TensorWriter writer(out, shape, dtype);
    writer.append(codes, checked_numel(shape));
}

void save_floats(const std::string& path, const Shape& shape, const float* values) {
    AtomicFileWriter out(path);
    save_floats(out, shape, values);
    out.commit();
}

void save_codes(const std::string& path, const Shape& shape, const std::int32_t* codes, NpyDtype dtype) {
    AtomicFileWriter out(path);
    save_codes(out, shape, codes, dtype);
    out.commit();
}

}  // namespace qs
