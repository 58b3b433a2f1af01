// Whole-file I/O that cannot leave a half-written file behind, and a read-only view of a whole file.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace qs {

// Writes a file atomically: bytes go to a uniquely named temporary file in the target's directory, which
// is flushed to disk and renamed over the target on commit(). Until commit() succeeds the target is
// untouched; on any failure (or destruction without commit) the temporary file is removed. Throws qs::Error.
class AtomicFileWriter {
public:
    explicit AtomicFileWriter(std::string target_path);
    ~AtomicFileWriter();
    AtomicFileWriter(const AtomicFileWriter&) = delete;
    AtomicFileWriter& operator=(const AtomicFileWriter&) = delete;

    // Buffered append.
    void write(const void* data, std::size_t size);
    void write(const std::string& text) { write(text.data(), text.size()); }
    // Flush, fsync, close and rename over the target. The writer is unusable afterwards.
    void commit();

private:
    void flush_buffer();
    void write_fd(const char* data, std::size_t size);
    void abandon() noexcept;

    std::string target_;
    std::string temp_;
    int fd_ = -1;
    std::vector<char> buffer_;
};

// One-shot form of AtomicFileWriter.
void write_file_atomic(const std::string& path, const void* data, std::size_t size);

// A read-only view of a whole regular file with its real size: memory-mapped when possible, read into
// memory otherwise. Move-only; the bytes stay valid (and at the same address) for the object's lifetime,
// even across a move. Throws qs::Error naming the file. A file truncated by another process while it is
// mapped is outside what this can protect against (the kernel signals SIGBUS).
class MappedFile {
public:
    MappedFile() = default;
    explicit MappedFile(const std::string& path);
    ~MappedFile();
    MappedFile(MappedFile&& other) noexcept;
    MappedFile& operator=(MappedFile&& other) noexcept;
    MappedFile(const MappedFile&) = delete;
    MappedFile& operator=(const MappedFile&) = delete;

    const std::uint8_t* data() const { return data_; }
    std::size_t size() const { return size_; }
    const std::string& path() const { return path_; }
    // Hint that bytes [offset, offset + length) are about to be read once, front to back.
    void will_read(std::size_t offset, std::size_t length) const;

private:
    void release() noexcept;

    std::string path_;
    const std::uint8_t* data_ = nullptr;
    std::size_t size_ = 0;
    void* map_ = nullptr;              // non-null when mmap'ed
    std::vector<std::uint8_t> owned_;  // the fallback copy when mmap is not possible
};

}  // namespace qs
