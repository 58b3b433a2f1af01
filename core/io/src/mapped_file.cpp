// Reading input files: the one checked open (regular files only, never blocking) and MappedFile, whose
// reads survive the file shrinking under the mapping.
#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <utility>

#include "quantscope/atomic_file.hpp"
#include "quantscope/error.hpp"
#include "quantscope/text.hpp"
#include "read_ahead.hpp"

namespace qs {
namespace {

[[noreturn]] void fail_read(const std::string& path, const std::string& why) {
    throw Error("cannot read " + quoted_text(path) + ": " + why);
}

const char* kind_of(mode_t mode) {
    if (S_ISDIR(mode)) return "it is a directory";
    if (S_ISFIFO(mode)) return "not a regular file (a named pipe)";
    if (S_ISSOCK(mode)) return "not a regular file (a socket)";
    if (S_ISCHR(mode) || S_ISBLK(mode)) return "not a regular file (a device)";
    return "not a regular file";
}

// Opens a regular file for reading. O_NONBLOCK: opening a FIFO with no writer (or some devices) would
// otherwise wait forever, before any type check could run. A pipe or device also has no size to check
// lengths against (and /dev/zero never ends), so only regular files pass.
int open_regular_file(const std::string& path, struct stat& st) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
    if (fd < 0) {
        const int err = errno;
        // A socket cannot be opened at all (ENXIO): say what it is rather than "No such device or address".
        struct stat link {};
        if (err == ENXIO && ::stat(path.c_str(), &link) == 0) fail_read(path, kind_of(link.st_mode));
        fail_read(path, std::strerror(err));
    }
    if (::fstat(fd, &st) != 0) {
        const int err = errno;
        ::close(fd);
        fail_read(path, std::strerror(err));
    }
    if (!S_ISREG(st.st_mode)) {
        ::close(fd);
        fail_read(path, kind_of(st.st_mode));
    }
    return fd;
}

// ------------------------------------------------------------------------------ SIGBUS from a shrunk file

thread_local detail::ShrinkGuard* t_innermost_guard = nullptr;
struct sigaction g_previous_action {};
std::size_t g_page_size = 4096;

// What would have happened without us: the previous handler, or the default action (the process dies of
// SIGBUS; raised again because a signal sent by kill() would not repeat by itself).
void forward_sigbus(int signo, siginfo_t* info, void* context) {
    if ((g_previous_action.sa_flags & SA_SIGINFO) != 0 && g_previous_action.sa_sigaction != nullptr) {
        g_previous_action.sa_sigaction(signo, info, context);
    } else if (g_previous_action.sa_handler != SIG_DFL && g_previous_action.sa_handler != SIG_IGN) {
        g_previous_action.sa_handler(signo);
    } else {
        struct sigaction fallback {};
        fallback.sa_handler = SIG_DFL;
        sigemptyset(&fallback.sa_mask);
        ::sigaction(signo, &fallback, nullptr);
        ::raise(signo);
    }
}

// Only async-signal-safe work here: a lookup in this thread's guards, an atomic store and one mmap, which
// replaces the page beyond the new end of the file by zeros so that the faulting instruction can complete.
void on_sigbus(int signo, siginfo_t* info, void* context) {
    const int saved_errno = errno;
    if (detail::MappedRange* range = detail::ShrinkGuard::range_at(info->si_addr)) {
        range->shrank.store(true);
        const auto address = reinterpret_cast<std::uintptr_t>(info->si_addr);
        void* page = reinterpret_cast<void*>(address - address % g_page_size);
        if (::mmap(page, g_page_size, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) != MAP_FAILED) {
            errno = saved_errno;
            return;
        }
    }
    errno = saved_errno;
    forward_sigbus(signo, info, context);
}

// Installed on first use and again whenever someone else (a test framework's crash reporter) replaced it;
// the handler found in place is the one faults outside a guard go to.
void ensure_sigbus_handler() {
    static std::mutex mutex;
    const std::lock_guard<std::mutex> lock(mutex);
    struct sigaction current {};
    ::sigaction(SIGBUS, nullptr, &current);
    if ((current.sa_flags & SA_SIGINFO) != 0 && current.sa_sigaction == on_sigbus) return;
    g_page_size = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
    struct sigaction action {};
    action.sa_sigaction = on_sigbus;
    sigemptyset(&action.sa_mask);
    action.sa_flags = SA_SIGINFO | SA_RESTART | SA_ONSTACK;
    ::sigaction(SIGBUS, &action, &g_previous_action);
}

}  // namespace

namespace detail {

ShrinkGuard::ShrinkGuard(MappedRange* range) : range_(range) {
    if (range_ == nullptr) return;
    ensure_sigbus_handler();
    outer_ = t_innermost_guard;
    t_innermost_guard = this;
}

ShrinkGuard::~ShrinkGuard() {
    if (range_ != nullptr) t_innermost_guard = outer_;
}

void ShrinkGuard::check(const std::string& path) const {
    if (range_ != nullptr && range_->shrank.load()) fail_read(path, "the file shrank while it was being read");
}

MappedRange* ShrinkGuard::range_at(const void* address) noexcept {
    const auto* byte = static_cast<const std::uint8_t*>(address);
    for (const ShrinkGuard* guard = t_innermost_guard; guard != nullptr; guard = guard->outer_) {
        MappedRange* range = guard->range_;
        if (byte >= range->begin && byte < range->begin + range->size) return range;
    }
    return nullptr;
}

}  // namespace detail

// ---------------------------------------------------------------------------------------------------------

namespace {
// data() of an empty file: a valid pointer, so callers may memcpy zero bytes from it.
const std::uint8_t kEmpty[1] = {0};

void run_shrink_guarded(detail::MappedRange* range, const std::string& path, const std::function<void()>& work) {
    const detail::ShrinkGuard guard(range);
    try {
        work();
    } catch (...) {
        guard.check(path);
        throw;
    }
    guard.check(path);
}

// Holds its own copy of what it needs (the heap-allocated range and the path), so it survives moves of
// the MappedFile that owns it.
class FileReadGuard final : public ReadGuard {
public:
    FileReadGuard(detail::MappedRange* range, std::string path) : range_(range), path_(std::move(path)) {}
    void run(const std::function<void()>& work) const override { run_shrink_guarded(range_, path_, work); }

private:
    detail::MappedRange* range_;
    std::string path_;
};
}  // namespace

void MappedFile::run_guarded(const std::function<void()>& work) const {
    if (guard_ != nullptr)
        guard_->run(work);
    else
        work();
}

MappedFile::MappedFile(const std::string& path) : path_(path), data_(kEmpty) {
    struct stat st {};
    const int fd = open_regular_file(path, st);
    size_ = static_cast<std::size_t>(st.st_size);
    if (size_ == 0) {
        ::close(fd);
        return;
    }
    void* map = ::mmap(nullptr, size_, PROT_READ, MAP_PRIVATE, fd, 0);
    if (map != MAP_FAILED) {
        range_ = std::make_unique<detail::MappedRange>();
        range_->begin = static_cast<const std::uint8_t*>(map);
        range_->size = size_;
        data_ = range_->begin;
        guard_ = std::make_unique<FileReadGuard>(range_.get(), path_);
        // The read-ahead keeps the descriptor, to ask the page cache what it already holds.
        ahead_ = std::make_unique<detail::ReadAhead>(range_->begin, size_, st.st_dev, fd);
        return;
    }
    // Some file systems cannot be mapped: read the file instead, never more than its size.
    owned_.resize(size_);
    std::size_t done = 0;
    while (done < size_) {
        const ssize_t n = ::read(fd, owned_.data() + done, size_ - done);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) {
            const int err = errno;
            ::close(fd);
            fail_read(path, std::strerror(err));
        }
        if (n == 0) break;  // shrank meanwhile: keep what is really there
        done += static_cast<std::size_t>(n);
    }
    ::close(fd);
    owned_.resize(done);
    size_ = done;
    data_ = owned_.empty() ? kEmpty : owned_.data();
}

MappedFile::MappedFile() = default;
MappedFile::~MappedFile() { release(); }

void MappedFile::release() noexcept {
    ahead_.reset();  // its thread may be giving advice about the mapping
    if (range_ != nullptr) ::munmap(const_cast<std::uint8_t*>(range_->begin), range_->size);
    guard_.reset();
    range_.reset();
    owned_.clear();
    data_ = kEmpty;
    size_ = 0;
}

MappedFile::MappedFile(MappedFile&& other) noexcept
    : path_(std::move(other.path_)),
      data_(other.data_),
      size_(other.size_),
      range_(std::move(other.range_)),
      owned_(std::move(other.owned_)),
      guard_(std::move(other.guard_)),
      ahead_(std::move(other.ahead_)) {
    other.data_ = kEmpty;
    other.size_ = 0;
}

MappedFile& MappedFile::operator=(MappedFile&& other) noexcept {
    if (this != &other) {
        release();
        path_ = std::move(other.path_);
        data_ = other.data_;
        size_ = other.size_;
        range_ = std::move(other.range_);
        owned_ = std::move(other.owned_);
        guard_ = std::move(other.guard_);
        ahead_ = std::move(other.ahead_);
        other.data_ = kEmpty;
        other.size_ = 0;
    }
    return *this;
}

void MappedFile::will_read(std::size_t offset, std::size_t length) const {
    if (ahead_ != nullptr) ahead_->request(offset, length);
}

std::size_t MappedFile::read_ahead_hints() const { return ahead_ != nullptr ? ahead_->hints() : 0; }

void MappedFile::done_reading(std::size_t offset, std::size_t length) const {
    if (range_ == nullptr || offset >= size_) return;
    if (length > size_ - offset) length = size_ - offset;
    // Only whole pages inside the range: a page shared with bytes still to be read stays.
    const auto page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
    const std::size_t start = (offset + page - 1) / page * page, stop = (offset + length) / page * page;
    if (stop > start) ::madvise(const_cast<std::uint8_t*>(range_->begin) + start, stop - start, MADV_DONTNEED);
}

std::string read_small_file(const std::string& path, std::size_t max_bytes) {
    const MappedFile file(path);
    if (file.size() > max_bytes) {
        const bool mebibytes = max_bytes % (std::size_t{1} << 20) == 0;
        fail_read(path, "it is " + std::to_string(file.size()) + " bytes, more than the " +
                            (mebibytes ? std::to_string(max_bytes >> 20) + " MiB"
                                       : std::to_string(max_bytes) + " bytes") +
                            " allowed");
    }
    return file.read_guarded([&] { return std::string(reinterpret_cast<const char*>(file.data()), file.size()); });
}

}  // namespace qs
