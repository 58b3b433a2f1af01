// Whole-file I/O. Outputs: written to an exclusive temporary and renamed into place, alone or several
// together. Inputs: regular files only (never blocking on a FIFO or a device), read through a mapping whose
// shrinking is an error rather than a crash. And telling whether two paths are one file.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "quantscope/tensor_view.hpp"

namespace qs {

// Writes a file atomically: bytes go to a new temporary file in the target's folder, flushed to disk and
// renamed over the target on commit(). The temporary has a short random name (so any legal target name
// fits) created with O_CREAT|O_EXCL|O_NOFOLLOW (so nothing planted at a guessable name is ever followed)
// and mode 0666 less the umask (the permissions of a plain fopen). Until commit() succeeds the target is
// untouched; on any failure (or destruction without commit) the temporary file is removed, and so it is when
// SIGINT, SIGTERM or SIGHUP ends the program (a handler, installed where the signal had none, removes every
// temporary in flight and re-raises). Messages name the target, never the temporary. Throws qs::Error.
class AtomicFileWriter {
public:
    // Fails here, before anything is written, when the folder is missing or not writable, the name is too
    // long for the file system, or the target exists and is not a writable regular file (a directory, a
    // FIFO, a device, a socket, a symbolic link, a read-only file: the rename would replace it).
    explicit AtomicFileWriter(std::string target_path);
    ~AtomicFileWriter();
    AtomicFileWriter(const AtomicFileWriter&) = delete;
    AtomicFileWriter& operator=(const AtomicFileWriter&) = delete;

    const std::string& target() const { return target_; }
    // Buffered append.
    void write(const void* data, std::size_t size);
    void write(const std::string& text) { write(text.data(), text.size()); }
    // Flush, fsync and close the temporary file, not yet renamed (OutputFiles renames several together).
    void finish();
    // finish() if not done yet, then rename over the target. The writer is unusable afterwards.
    void commit();

private:
    void flush_buffer();
    void write_fd(const char* data, std::size_t size);
    [[noreturn]] void fail(int err);
    void abandon() noexcept;

    std::string target_;
    std::string name_;       // the target's last component
    std::string temp_name_;  // the temporary's name in the same folder; empty once renamed or removed
    int dir_fd_ = -1;        // the target's folder: both names are resolved in it, even if it is moved
    int fd_ = -1;            // the temporary, open until finish()
    std::vector<char> buffer_;
    std::uint64_t written_ = 0;  // bytes written to the temporary so far
    std::uint64_t flushed_ = 0;  // of which the disk has been asked to start writing
};

// One-shot form of AtomicFileWriter.
void write_file_atomic(const std::string& path, const void* data, std::size_t size);

// Several output files that appear together or not at all: each add() opens its own AtomicFileWriter (so
// a bad path fails before any work), commit() finishes every one and only then renames them all. Until
// commit() no target is touched; destroyed without commit(), every temporary is removed.
class OutputFiles {
public:
    AtomicFileWriter& add(const std::string& path);
    void commit();

private:
    std::vector<std::unique_ptr<AtomicFileWriter>> writers_;
};

// ---------------------------------------------------------------------------------------------------------

// A file the program reads or writes, as the user named it: role "--out-error" or "the input".
struct FileRole {
    std::string role;
    std::string path;
};

// Throws qs::Error naming both roles and paths when an output is one of the inputs or two outputs are the
// same file. Files are compared by device and inode, not spelling ("./a.npy", a linked folder, a hard link):
// an existing file by its own, one not written yet by its folder's and its name. Paths whose folder does
// not exist are left to the reader or writer to report.
void check_distinct_files(const std::vector<FileRole>& inputs, const std::vector<FileRole>& outputs);

// ---------------------------------------------------------------------------------------------------------

namespace detail {
// How every temporary file is created: `name` in the folder `dir_fd`, O_CREAT|O_EXCL|O_NOFOLLOW, mode 0666
// less the umask. A file or link already there (even a dangling one) fails with EEXIST, never followed.
// Returns the descriptor, or -1 with errno set.
int create_exclusive_file(int dir_fd, const std::string& name);

// A mapping as the SIGBUS handler sees it. Heap-allocated so that it stays put when its MappedFile moves.
struct MappedRange {
    const std::uint8_t* begin = nullptr;
    std::size_t size = 0;
    std::atomic<bool> shrank{false};  // set by the handler; seen by every thread reading this mapping
};

class ReadAhead;  // read_ahead.hpp: hints a long range to the kernel piece by piece from a thread

// While one is alive, a SIGBUS on this thread inside `range` (the file shrank under the mapping) maps a
// page of zeros over the faulting page and marks the range, so that the interrupted read finishes; any
// other SIGBUS goes on to the handler that was there before. Nests; any number of threads at once.
class ShrinkGuard {
public:
    explicit ShrinkGuard(MappedRange* range);  // nullptr: nothing to guard
    ~ShrinkGuard();
    ShrinkGuard(const ShrinkGuard&) = delete;
    ShrinkGuard& operator=(const ShrinkGuard&) = delete;
    // Throws qs::Error "cannot read '<path>': the file shrank while it was being read" if it did.
    void check(const std::string& path) const;
    // For the signal handler: the range of this thread's guards (innermost first) that holds `address`.
    static MappedRange* range_at(const void* address) noexcept;

private:
    MappedRange* range_;
    ShrinkGuard* outer_ = nullptr;
};
}  // namespace detail

// A read-only view of a whole regular file with its real size: memory-mapped when possible, read into
// memory otherwise. Opening never blocks: a FIFO, device, socket or directory is refused by its type
// (O_NONBLOCK open, then fstat). Move-only; the bytes stay valid (and at the same address) for the object's
// lifetime, even across a move. Throws qs::Error naming the file.
class MappedFile {
public:
    MappedFile();  // empty (defined where ReadAhead is complete)
    explicit MappedFile(const std::string& path);
    ~MappedFile();
    MappedFile(MappedFile&& other) noexcept;
    MappedFile& operator=(MappedFile&& other) noexcept;
    MappedFile(const MappedFile&) = delete;
    MappedFile& operator=(const MappedFile&) = delete;

    // Read these bytes only inside read_guarded(): another process may truncate the file while it is mapped.
    const std::uint8_t* data() const { return data_; }
    std::size_t size() const { return size_; }
    const std::string& path() const { return path_; }
    // Hint that bytes [offset, offset + length) are about to be read once, front to back: from now on the
    // kernel reads them ahead (with many reads in flight, from a thread of this file's) while the reader
    // works; a later call replaces the range.
    void will_read(std::size_t offset, std::size_t length) const;
    // How many hints will_read has given the kernel so far (each at most the device's readahead size).
    std::size_t read_ahead_hints() const;

    // Runs `read()` (any code that reads data(): a parser, a decoder, a copy; on any thread, several at once)
    // and returns its result. If the file shrinks meanwhile, the missing bytes read as zeros instead of
    // killing the process with SIGBUS, and whatever `read` returned or threw becomes qs::Error
    // "cannot read '<path>': the file shrank while it was being read". `read` may allocate and throw. The
    // guard covers the calling thread only: work split over threads calls read_guarded in each chunk.
    template <class Read>
    auto read_guarded(Read&& read) const -> decltype(read()) {
        std::optional<std::decay_t<decltype(read())>> result;
        run_guarded([&] { result.emplace(read()); });
        return std::move(*result);
    }
    void run_guarded(const std::function<void()>& work) const;
    // The file shrank under the mapping since it was opened (a guarded read met the missing bytes): work that
    // reads it across threads stops early, and the guard throws.
    bool has_shrunk() const { return range_ != nullptr && range_->shrank.load(std::memory_order_relaxed); }
    // The same protection for a TensorView of these bytes (its passes call it on each thread). Stays valid,
    // at the same address, as long as the mapping, even across a move of this object; null when empty.
    const ReadGuard* guard() const { return guard_.get(); }
    // The bytes [offset, offset + length) were read and will not be needed soon: give their pages back
    // (they stay in the page cache; the process's resident memory stops counting them).
    void done_reading(std::size_t offset, std::size_t length) const;

private:
    void release() noexcept;

    std::string path_;
    const std::uint8_t* data_ = nullptr;
    std::size_t size_ = 0;
    std::unique_ptr<detail::MappedRange> range_;  // non-null when mmap'ed
    std::vector<std::uint8_t> owned_;             // the fallback copy when mmap is not possible
    std::unique_ptr<ReadGuard> guard_;
    std::unique_ptr<detail::ReadAhead> ahead_;    // non-null when mmap'ed; stopped before the unmapping
};

// The whole of a small regular file (a session, settings, a font), copied; more than `max_bytes` is an
// error naming the file and the limit. Throws qs::Error.
std::string read_small_file(const std::string& path, std::size_t max_bytes);

}  // namespace qs
