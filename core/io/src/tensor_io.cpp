#include "quantscope/tensor_io.hpp"

#include <cctype>

#include "quantscope/atomic_file.hpp"
#include "quantscope/csv.hpp"
#include "quantscope/error.hpp"
#include "quantscope/npy.hpp"
#include "quantscope/safetensors.hpp"

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

enum class Format { Npy, Csv, Safetensors };

Format input_format(const std::string& path) {
    const std::string ext = lower_extension(path);
    if (ext == ".npy") return Format::Npy;
    if (ext == ".csv") return Format::Csv;
    if (ext == ".safetensors") return Format::Safetensors;
    throw Error(path + ": " + (ext.empty() ? std::string("no file extension") : "unknown file type '" + ext + "'") +
                "; QuantScope reads .npy, .csv and .safetensors");
}

Format output_format(const std::string& path) {
    const std::string ext = lower_extension(path);
    if (ext == ".npy") return Format::Npy;
    if (ext == ".csv") return Format::Csv;
    throw Error(path + ": " + (ext.empty() ? std::string("no file extension") : "unknown file type '" + ext + "'") +
                "; QuantScope writes .npy and .csv");
}

}  // namespace

Tensor load_tensor(const std::string& path) { return load_tensor(path, std::string()); }

Tensor load_tensor(const std::string& path, const std::string& tensor_name, std::string* note) {
    if (note != nullptr) note->clear();
    const Format format = input_format(path);
    if (format != Format::Safetensors && !tensor_name.empty()) {
        throw Error(path + ": --tensor " + tensor_name + " applies only to .safetensors files");
    }
    switch (format) {
        case Format::Npy: return read_npy(path, note);
        case Format::Csv: return read_csv(path);
        case Format::Safetensors: break;
    }
    const SafetensorsFile file(path);
    if (!tensor_name.empty()) return file.read(tensor_name, note);
    const auto& entries = file.list();
    if (entries.size() == 1) return file.read(entries.front().name, note);
    if (entries.empty()) throw Error(path + ": the file holds no tensors");
    std::string names;
    for (std::size_t i = 0; i < entries.size() && i < 8; ++i) {
        names += (i > 0 ? ", " : "") + entries[i].name;
    }
    if (entries.size() > 8) names += ", ...";
    throw Error(path + ": the file holds " + std::to_string(entries.size()) + " tensors (" + names +
                "); choose one with --tensor NAME");
}

void save_floats(AtomicFileWriter& out, const Shape& shape, const float* values) {
    if (output_format(out.target()) == Format::Csv) {
        write_csv_floats(out, shape, values);
    } else {
        write_npy_floats(out, shape, values);
    }
}

void save_codes(AtomicFileWriter& out, const Shape& shape, const std::int32_t* codes, NpyDtype dtype) {
    if (output_format(out.target()) == Format::Csv) {
        write_csv_codes(out, shape, codes);
    } else {
        write_npy_codes(out, shape, codes, dtype);
    }
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
