#include "quantscope/atomic_file.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <utility>

#include "quantscope/error.hpp"

namespace qs {
namespace {

constexpr std::size_t kWriteBuffer = std::size_t{1} << 20;

[[noreturn]] void fail_errno(const std::string& what, const std::string& path, int err) {
    throw Error("cannot " + what + " '" + path + "': " + std::strerror(err));
}

// The directory part of `path` ("." for a bare name) and the last component.
void split_path(const std::string& path, std::string& dir, std::string& base) {
    const auto slash = path.find_last_of('/');
    if (slash == std::string::npos) {
        dir = ".";
        base = path;
    } else {
        dir = slash == 0 ? "/" : path.substr(0, slash);
        base = path.substr(slash + 1);
    }
}

// Opens a new file next to the target. O_EXCL with a name nobody else can be using, so two writers
// (threads or processes) never share a temporary; mode 0666 lets the umask decide the final permissions
// exactly as for a plain fopen, which mkstemp's 0600 would not.
int open_unique_temp(const std::string& target, std::string& temp_path) {
    std::string dir, base;
    split_path(target, dir, base);
    if (base.empty() || base == "." || base == "..") throw Error("cannot write '" + target + "': not a file name");
    static std::atomic<unsigned> counter{0};
    const auto now = static_cast<unsigned long long>(std::chrono::steady_clock::now().time_since_epoch().count());
    for (int attempt = 0; attempt < 100; ++attempt) {
        char suffix[96];
        std::snprintf(suffix, sizeof suffix, ".tmp.%ld.%u.%llx", static_cast<long>(::getpid()),
                      counter.fetch_add(1), now + static_cast<unsigned long long>(attempt) * 7919u);
        temp_path = (dir == "/" ? "/" : dir + "/") + "." + base + suffix;
        const int fd = ::open(temp_path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
        if (fd >= 0) return fd;
        if (errno != EEXIST) fail_errno("write", target, errno);
    }
    throw Error("cannot write '" + target + "': no free temporary file name in '" + dir + "'");
}

}  // namespace

AtomicFileWriter::AtomicFileWriter(std::string target_path) : target_(std::move(target_path)) {
    fd_ = open_unique_temp(target_, temp_);
    buffer_.reserve(kWriteBuffer);
}

AtomicFileWriter::~AtomicFileWriter() { abandon(); }

void AtomicFileWriter::abandon() noexcept {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
    if (!temp_.empty()) ::unlink(temp_.c_str());
    temp_.clear();
}

void AtomicFileWriter::write_fd(const char* data, std::size_t size) {
    while (size > 0) {
        const ssize_t n = ::write(fd_, data, size);
        if (n < 0) {
            if (errno == EINTR) continue;
            const int err = errno;
            abandon();
            fail_errno("write", target_, err);
        }
        data += n;
        size -= static_cast<std::size_t>(n);
    }
}

void AtomicFileWriter::flush_buffer() {
    write_fd(buffer_.data(), buffer_.size());
    buffer_.clear();
}

void AtomicFileWriter::write(const void* data, std::size_t size) {
    if (fd_ < 0) throw Error("cannot write '" + target_ + "': the file is already closed");
    const char* bytes = static_cast<const char*>(data);
    if (buffer_.size() + size > kWriteBuffer) {
        flush_buffer();
        if (size >= kWriteBuffer) {  // big blocks go straight through, no copy
            write_fd(bytes, size);
            return;
        }
    }
    buffer_.insert(buffer_.end(), bytes, bytes + size);
}

void AtomicFileWriter::commit() {
    if (fd_ < 0) throw Error("cannot write '" + target_ + "': the file is already closed");
    flush_buffer();
    // fsync before rename: otherwise a crash right after the rename can leave an empty target.
    if (::fsync(fd_) != 0 && errno != EINVAL && errno != EROFS) {
        const int err = errno;
        abandon();
        fail_errno("write", target_, err);
    }
    const int fd = fd_;
    fd_ = -1;
    if (::close(fd) != 0 && errno != EINTR) {
        const int err = errno;
        abandon();
        fail_errno("write", target_, err);
    }
    if (::rename(temp_.c_str(), target_.c_str()) != 0) {
        const int err = errno;
        abandon();
        fail_errno("write", target_, err);
    }
    temp_.clear();
    // Make the rename itself durable; best effort, the data is already complete either way.
    std::string dir, base;
    split_path(target_, dir, base);
    const int dir_fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dir_fd >= 0) {
        ::fsync(dir_fd);
        ::close(dir_fd);
    }
}

void write_file_atomic(const std::string& path, const void* data, std::size_t size) {
    AtomicFileWriter writer(path);
    writer.write(data, size);
    writer.commit();
}

// ---------------------------------------------------------------------------------------------------------

namespace {
// data() of an empty file: a valid pointer, so callers may memcpy zero bytes from it.
const std::uint8_t kEmpty[1] = {0};
}  // namespace

MappedFile::MappedFile(const std::string& path) : path_(path), data_(kEmpty) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) fail_errno("read", path, errno);
    struct stat st {};
    if (::fstat(fd, &st) != 0) {
        const int err = errno;
        ::close(fd);
        fail_errno("read", path, err);
    }
    if (S_ISDIR(st.st_mode)) {
        ::close(fd);
        throw Error("cannot read '" + path + "': it is a directory");
    }
    // A pipe or device has no size to check lengths against (and /dev/zero never ends).
    if (!S_ISREG(st.st_mode)) {
        ::close(fd);
        throw Error("cannot read '" + path + "': not a regular file");
    }
    size_ = static_cast<std::size_t>(st.st_size);
    if (size_ == 0) {
        ::close(fd);
        return;
    }
    void* map = ::mmap(nullptr, size_, PROT_READ, MAP_PRIVATE, fd, 0);
    if (map != MAP_FAILED) {
        map_ = map;
        data_ = static_cast<const std::uint8_t*>(map);
        ::close(fd);
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
            fail_errno("read", path, err);
        }
        if (n == 0) break;  // shrank meanwhile: keep what is really there
        done += static_cast<std::size_t>(n);
    }
    ::close(fd);
    owned_.resize(done);
    size_ = done;
    data_ = owned_.empty() ? kEmpty : owned_.data();
}

MappedFile::~MappedFile() { release(); }

void MappedFile::release() noexcept {
    if (map_ != nullptr) ::munmap(map_, size_);
    map_ = nullptr;
    owned_.clear();
    data_ = kEmpty;
    size_ = 0;
}

MappedFile::MappedFile(MappedFile&& other) noexcept
    : path_(std::move(other.path_)),
      data_(other.data_),
      size_(other.size_),
      map_(other.map_),
      owned_(std::move(other.owned_)) {
    other.map_ = nullptr;
    other.data_ = kEmpty;
    other.size_ = 0;
}

MappedFile& MappedFile::operator=(MappedFile&& other) noexcept {
    if (this != &other) {
        release();
        path_ = std::move(other.path_);
        data_ = other.data_;
        size_ = other.size_;
        map_ = other.map_;
        owned_ = std::move(other.owned_);
        other.map_ = nullptr;
        other.data_ = kEmpty;
        other.size_ = 0;
    }
    return *this;
}

void MappedFile::will_read(std::size_t offset, std::size_t length) const {
    if (map_ == nullptr || offset >= size_) return;
    if (length > size_ - offset) length = size_ - offset;
    // madvise wants a page-aligned start.
    const auto page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
    const std::size_t start = offset / page * page;
    ::madvise(static_cast<char*>(map_) + start, length + (offset - start), MADV_WILLNEED);
}

}  // namespace qs
