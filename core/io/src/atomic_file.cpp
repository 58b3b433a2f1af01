// Writing output files: AtomicFileWriter (one file), OutputFiles (several together), and the same-file
// check between inputs and outputs.
#include "quantscope/atomic_file.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <csignal>
#include <chrono>
#include <cstring>
#include <utility>

#include "quantscope/error.hpp"
#include "quantscope/text.hpp"

namespace qs {
namespace {

constexpr std::size_t kWriteBuffer = std::size_t{1} << 20;
constexpr std::uint64_t kStartWriteback = std::uint64_t{8} << 20;

// The folder part of `path` ("." for a bare name) and the last component.
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

// ".qs-" and 8 random letters or digits: 12 bytes whatever the target's name, so a target of the longest
// legal name still gets a temporary, and nobody can know the name in advance.
std::string random_temp_name() {
    static const char kAlphabet[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
    std::uint64_t bits = 0;
    if (::getrandom(&bits, sizeof bits, GRND_NONBLOCK) != static_cast<ssize_t>(sizeof bits)) {
        // No entropy yet (early boot): still unique per process and call, which O_EXCL then guarantees.
        static std::atomic<std::uint64_t> counter{0};
        bits = static_cast<std::uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count()) ^
               (static_cast<std::uint64_t>(::getpid()) << 32) ^ (counter.fetch_add(1) * 0x9e3779b97f4a7c15u);
    }
    std::string name = ".qs-";
    for (int i = 0; i < 8; ++i, bits /= 62) name += kAlphabet[bits % 62];
    return name;
}

// ---- Temporaries in flight, removed when SIGINT, SIGTERM or SIGHUP ends the program mid-write ----
// A fixed table the handler can read without locks or allocation: a slot holds the temporary's folder
// descriptor (kFree when unused, kClaimed while being filled) and its name (".qs-" and 8 characters).
constexpr int kFree = -1, kClaimed = -2;
constexpr std::size_t kTempSlots = 64;  // writers alive at once; more are not cleaned up by the handler
struct TempSlot {
    std::atomic<int> dir_fd{kFree};
    char name[16] = {};
};
TempSlot g_temp_slots[kTempSlots];
constexpr int kCleanupSignals[] = {SIGINT, SIGTERM, SIGHUP};

extern "C" void remove_temporaries_and_die(int sig) {
    const int saved_errno = errno;
    for (TempSlot& slot : g_temp_slots) {
        const int dir_fd = slot.dir_fd.load(std::memory_order_acquire);
        if (dir_fd >= 0) ::unlinkat(dir_fd, slot.name, 0);  // async-signal-safe, as are the calls below
    }
    // The program then ends as the signal would have ended it (the parent shell sees 130, 143, ...).
    ::signal(sig, SIG_DFL);
    ::raise(sig);  // delivered when this handler returns: the signal is blocked until then
    errno = saved_errno;
}

// The handler goes only where nothing else handles the signal (the window's own stop handler stays; it ends
// the program through the writers' destructors, which remove their temporaries themselves).
void install_cleanup_handlers() {
    for (const int sig : kCleanupSignals) {
        struct sigaction old {};
        if (::sigaction(sig, nullptr, &old) != 0 || (old.sa_flags & SA_SIGINFO) || old.sa_handler != SIG_DFL) continue;
        struct sigaction now {};
        now.sa_handler = remove_temporaries_and_die;
        sigemptyset(&now.sa_mask);
        for (const int other : kCleanupSignals) sigaddset(&now.sa_mask, other);  // one handler run at a time
        ::sigaction(sig, &now, nullptr);
    }
}

// A slot now names `name` in `dir_fd` (unless the table is full). A writer's folder descriptor is its own, so
// it finds its slot again by that descriptor.
void register_temporary(int dir_fd, const std::string& name) {
    if (name.size() >= sizeof(TempSlot::name)) return;
    for (TempSlot& slot : g_temp_slots) {
        int expected = kFree;
        if (!slot.dir_fd.compare_exchange_strong(expected, kClaimed, std::memory_order_acquire)) continue;
        std::memcpy(slot.name, name.c_str(), name.size() + 1);
        slot.dir_fd.store(dir_fd, std::memory_order_release);
        return;
    }
}

void unregister_temporary(int dir_fd) {
    for (TempSlot& slot : g_temp_slots) {
        int expected = dir_fd;
        if (slot.dir_fd.compare_exchange_strong(expected, kFree, std::memory_order_acq_rel)) return;
    }
}

// What the constructor refuses at the target before any work: a directory (EISDIR); a FIFO, device, socket
// or symbolic link, which the rename would replace by a regular file (as root, `--make-large /dev/full` did);
// a regular file that is read-only (the rename would replace it regardless, as root even at mode 0444).
// Returns the reason, empty when the target is missing or a writable regular file.
std::string target_refusal(int dir_fd, const std::string& name) {
    struct stat st {};
    if (::fstatat(dir_fd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) return {};
    if (S_ISDIR(st.st_mode)) return std::strerror(EISDIR);
    if (S_ISLNK(st.st_mode)) return "it is a symbolic link, not a regular file";
    if (S_ISFIFO(st.st_mode)) return "it is a FIFO, not a regular file";
    if (S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode)) return "it is a device, not a regular file";
    if (!S_ISREG(st.st_mode)) return "it is not a regular file";
    if ((st.st_mode & (S_IWUSR | S_IWGRP | S_IWOTH)) == 0) return "it is read-only";
    if (::faccessat(dir_fd, name.c_str(), W_OK, AT_EACCESS) != 0) return std::strerror(errno);
    return {};
}

}  // namespace

namespace detail {
int create_exclusive_file(int dir_fd, const std::string& name) {
    return ::openat(dir_fd, name.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
}
}  // namespace detail

AtomicFileWriter::AtomicFileWriter(std::string target_path) : target_(std::move(target_path)) {
    // First, while nothing is open: a bad_alloc after the temporary exists would skip the destructor and
    // leave the file, both descriptors and a slot of the signal handler's table behind.
    buffer_.reserve(kWriteBuffer);
    std::string dir;
    split_path(target_, dir, name_);
    if (name_.empty() || name_ == "." || name_ == "..")
        throw Error("cannot write " + quoted_text(target_) + ": not a file name");
    dir_fd_ = ::open(dir.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (dir_fd_ < 0) fail(errno);
    // What would make the final rename fail is checked now, before any work is spent on the contents.
    const long name_max = ::fpathconf(dir_fd_, _PC_NAME_MAX);
    if (name_max > 0 && name_.size() > static_cast<std::size_t>(name_max)) fail(ENAMETOOLONG);
    const std::string refusal = target_refusal(dir_fd_, name_);
    if (!refusal.empty()) {
        abandon();
        throw Error("cannot write " + quoted_text(target_) + ": " + refusal);
    }
    install_cleanup_handlers();
    for (int attempt = 0; attempt < 100 && fd_ < 0; ++attempt) {
        const std::string name = random_temp_name();
        fd_ = detail::create_exclusive_file(dir_fd_, name);
        if (fd_ >= 0) {
            temp_name_ = name;
            register_temporary(dir_fd_, temp_name_);
        }
        else if (errno != EEXIST)
            fail(errno);
    }
    if (fd_ < 0) {
        abandon();
        throw Error("cannot write " + quoted_text(target_) + ": no free temporary file name in " + quoted_text(dir));
    }
}

AtomicFileWriter::~AtomicFileWriter() { abandon(); }

void AtomicFileWriter::abandon() noexcept {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
    if (!temp_name_.empty()) ::unlinkat(dir_fd_, temp_name_.c_str(), 0);
    temp_name_.clear();
    // Only now, with nothing left to remove (or renamed), and before its folder descriptor is closed.
    if (dir_fd_ >= 0) unregister_temporary(dir_fd_);
    if (dir_fd_ >= 0) ::close(dir_fd_);
    dir_fd_ = -1;
}

void AtomicFileWriter::fail(int err) {
    abandon();
    throw Error("cannot write " + quoted_text(target_) + ": " + std::strerror(err));
}

void AtomicFileWriter::write_fd(const char* data, std::size_t size) {
    while (size > 0) {
        const ssize_t n = ::write(fd_, data, size);
        if (n < 0) {
            if (errno == EINTR) continue;
            fail(errno);
        }
        data += n;
        size -= static_cast<std::size_t>(n);
        written_ += static_cast<std::uint64_t>(n);
    }
    // A large file starts going to disk while the rest is still being computed, so that finish()'s fsync
    // has little left to wait for. Only a hint: it does not wait, and an error here shows again at fsync.
    if (written_ - flushed_ >= kStartWriteback) {
        ::sync_file_range(fd_, static_cast<off64_t>(flushed_), static_cast<off64_t>(written_ - flushed_),
                          SYNC_FILE_RANGE_WRITE);
        flushed_ = written_;
    }
}

void AtomicFileWriter::flush_buffer() {
    write_fd(buffer_.data(), buffer_.size());
    buffer_.clear();
}

void AtomicFileWriter::write(const void* data, std::size_t size) {
    if (fd_ < 0) throw Error("cannot write " + quoted_text(target_) + ": the file is already closed");
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

void AtomicFileWriter::finish() {
    if (temp_name_.empty()) throw Error("cannot write " + quoted_text(target_) + ": the file is already closed");
    if (fd_ < 0) return;
    flush_buffer();
    std::vector<char>().swap(buffer_);  // a finished file waiting for its rename holds no memory
    // fsync before rename: otherwise a crash right after the rename can leave an empty target.
    if (::fsync(fd_) != 0 && errno != EINVAL && errno != EROFS) fail(errno);
    const int fd = fd_;
    fd_ = -1;
    if (::close(fd) != 0 && errno != EINTR) fail(errno);
}

void AtomicFileWriter::commit() {
    finish();
    if (::renameat(dir_fd_, temp_name_.c_str(), dir_fd_, name_.c_str()) != 0) fail(errno);
    temp_name_.clear();
    // Make the rename itself durable; best effort, the data is already complete either way.
    const int dir = ::openat(dir_fd_, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dir >= 0) {
        ::fsync(dir);
        ::close(dir);
    }
    abandon();  // closes the folder; nothing is left to remove
}

void write_file_atomic(const std::string& path, const void* data, std::size_t size) {
    AtomicFileWriter writer(path);
    writer.write(data, size);
    writer.commit();
}

AtomicFileWriter& OutputFiles::add(const std::string& path) {
    writers_.push_back(std::make_unique<AtomicFileWriter>(path));
    return *writers_.back();
}

void OutputFiles::commit() {
    // Every file complete on disk first: a full disk or an I/O error then leaves every target untouched.
    for (const auto& writer : writers_) writer->finish();
    for (const auto& writer : writers_) writer->commit();
    writers_.clear();
}

// ---------------------------------------------------------------------------------------------------------

namespace {

struct FileIdentity {
    dev_t device = 0;
    ino_t inode = 0;
    std::string name;  // set when the file does not exist yet: it is then its folder's entry `name`
    bool known = false;

    bool operator==(const FileIdentity& other) const {
        return known && other.known && device == other.device && inode == other.inode && name == other.name;
    }
};

FileIdentity identify(const std::string& path) {
    struct stat st {};
    if (::stat(path.c_str(), &st) == 0) return {st.st_dev, st.st_ino, "", true};
    std::string dir, name;
    split_path(path, dir, name);
    if (::stat(dir.c_str(), &st) == 0) return {st.st_dev, st.st_ino, name, true};
    return {};
}

std::string quoted(const FileRole& file) { return file.role + " " + quoted_text(file.path); }

}  // namespace

void check_distinct_files(const std::vector<FileRole>& inputs, const std::vector<FileRole>& outputs) {
    std::vector<FileIdentity> input_ids, output_ids;
    for (const FileRole& input : inputs) input_ids.push_back(identify(input.path));
    for (std::size_t i = 0; i < outputs.size(); ++i) {
        const FileIdentity id = identify(outputs[i].path);
        for (std::size_t j = 0; j < inputs.size(); ++j)
            if (id == input_ids[j]) throw Error(quoted(outputs[i]) + " would overwrite " + quoted(inputs[j]));
        for (std::size_t j = 0; j < i; ++j)
            if (id == output_ids[j])
                throw Error(quoted(outputs[j]) + " and " + quoted(outputs[i]) + " are the same file");
        output_ids.push_back(id);
    }
}

}  // namespace qs
