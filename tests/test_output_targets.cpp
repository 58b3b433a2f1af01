// What an output path may already hold (issue 25, item 10): the atomic writer renames its temporary over the
// target, which replaced a device node, a FIFO or a symbolic link by a regular file and a read-only file by a
// writable one. Now such a target is refused with one line (exit 2) and left as it was, and a signal that
// ends the program mid-write leaves no temporary behind. Nothing here writes to a real device: the device
// is a node made in a temporary folder with /dev/null's numbers.
#include <doctest/doctest.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include "quantscope/atomic_file.hpp"
#include "test_helpers.hpp"

namespace fs = std::filesystem;
using qs::test::read_bytes;
using qs::test::shell_quote;
using qs::test::TempDir;
using qs::test::write_bytes;

namespace {

// A character device node at `path` with /dev/null's numbers, or false where mknod is not allowed.
bool make_null_device(const std::string& path) {
    struct stat null_st {};
    if (::stat("/dev/null", &null_st) != 0 || !S_ISCHR(null_st.st_mode)) return false;
    return ::mknod(path.c_str(), S_IFCHR | 0666, null_st.st_rdev) == 0;
}

bool still_null_device(const std::string& path) {
    struct stat st {}, null_st {};
    return ::lstat(path.c_str(), &st) == 0 && ::stat("/dev/null", &null_st) == 0 && S_ISCHR(st.st_mode) &&
           st.st_rdev == null_st.st_rdev;
}

mode_t mode_of(const std::string& path) {
    struct stat st {};
    REQUIRE(::lstat(path.c_str(), &st) == 0);
    return st.st_mode;
}

// Each target the writer must refuse, made in `dir`: its name (ending in `ext`) and the message's reason.
struct Target {
    std::string name, why;
};
std::vector<Target> make_refused_targets(const TempDir& dir, const std::string& ext = ".npy") {
    std::vector<Target> targets;
    REQUIRE(::mkfifo((dir / ("fifo" + ext)).c_str(), 0600) == 0);
    targets.push_back({("fifo" + ext), "it is a FIFO, not a regular file"});
    write_bytes(dir / ("victim" + ext), "victim");
    REQUIRE(::symlink((dir / ("victim" + ext)).c_str(), (dir / ("link" + ext)).c_str()) == 0);
    targets.push_back({("link" + ext), "it is a symbolic link, not a regular file"});
    REQUIRE(::symlink((dir / ("nowhere" + ext)).c_str(), (dir / ("dangling" + ext)).c_str()) == 0);
    targets.push_back({("dangling" + ext), "it is a symbolic link, not a regular file"});
    write_bytes(dir / ("readonly" + ext), "keep");
    REQUIRE(::chmod((dir / ("readonly" + ext)).c_str(), 0444) == 0);
    targets.push_back({("readonly" + ext), "it is read-only"});
    if (make_null_device(dir / ("device" + ext))) targets.push_back({("device" + ext), "it is a device, not a regular file"});
    return targets;
}

// Every refused target still is what it was.
void check_untouched(const TempDir& dir, const std::string& ext = ".npy") {
    CHECK(S_ISFIFO(mode_of(dir / ("fifo" + ext))));
    CHECK(fs::read_symlink(dir / ("link" + ext)) == fs::path(dir / ("victim" + ext)));
    CHECK(read_bytes(dir / ("victim" + ext)) == "victim");
    CHECK(fs::is_symlink(fs::symlink_status(dir / ("dangling" + ext))));
    CHECK(!fs::exists(dir / ("nowhere" + ext)));
    CHECK(read_bytes(dir / ("readonly" + ext)) == "keep");
    CHECK((mode_of(dir / ("readonly" + ext)) & 07777) == 0444);
    if (fs::exists(fs::symlink_status(dir / ("device" + ext)))) CHECK(still_null_device(dir / ("device" + ext)));
    for (const std::string& name : dir.files()) CHECK(name.rfind(".qs-", 0) != 0);
}

}  // namespace

TEST_CASE("atomic writer: a target that is not a writable regular file is refused and left as it was") {
    TempDir dir;
    for (const Target& t : make_refused_targets(dir)) {
        INFO(t.name);
        CHECK_ERROR_HAS(qs::AtomicFileWriter{dir / t.name}, "cannot write '" + dir / t.name + "': " + t.why);
    }
    check_untouched(dir);
    // A writable regular file is still replaced, and a new name still written.
    write_bytes(dir / "plain.npy", "old");
    qs::write_file_atomic(dir / "plain.npy", "new", 3);
    qs::write_file_atomic(dir / "fresh.npy", "new", 3);
    CHECK(read_bytes(dir / "plain.npy") == "new");
    CHECK(read_bytes(dir / "fresh.npy") == "new");
}

TEST_CASE("quantize outputs refuse a FIFO a symbolic link a device or a read-only file with one line") {
    for (const char* option : {"--out-packed", "--out-dequantized", "--out-error"}) {
        TempDir dir;
        const std::string ext = std::string(option) == "--out-packed" ? ".bin" : ".npy";
        for (const Target& t : make_refused_targets(dir, ext)) {
            const std::string args = std::string("quantize --random normal --shape 8x8 --dtype int4 ") + option + " " +
                                     shell_quote(dir / t.name);
            INFO(args);
            const qs::test::Run r = qs::test::run(args, dir);
            CHECK(r.exit_code == 2);
            CHECK(r.err == "quantscope: error: " + std::string(option) + ": cannot write '" + dir / t.name + "': " +
                               t.why + "\n");
        }
        check_untouched(dir, ext);
    }
}

TEST_CASE("bench --make-large refuses a device node and a name that is not .safetensors") {
    TempDir dir;
    if (make_null_device(dir / "dev.safetensors")) {
        const qs::test::Run r =
            qs::test::run("bench --make-large " + shell_quote(dir / "dev.safetensors") + " --large-shape 16x16", dir);
        CHECK(r.exit_code == 2);
        CHECK(qs::test::contains(r.err, "it is a device, not a regular file"));
        CHECK(still_null_device(dir / "dev.safetensors"));
    }
    const qs::test::Run bin = qs::test::run("bench --make-large " + shell_quote(dir / "x.bin") + " --large-shape 16x16", dir);
    CHECK(bin.exit_code == 2);
    CHECK(bin.err == "quantscope: error: --make-large: '" + dir / "x.bin" + "' is not a .safetensors file name\n");
    CHECK(!fs::exists(dir / "x.bin"));
    const qs::test::Run ok =
        qs::test::run("bench --make-large " + shell_quote(dir / "x.safetensors") + " --large-shape 16x16", dir);
    CHECK(ok.exit_code == 0);
    CHECK(fs::file_size(dir / "x.safetensors") > 512);
}

TEST_CASE("a SIGTERM or SIGINT during a write removes the temporaries in flight and still ends the program") {
    for (const int sig : {SIGTERM, SIGINT, SIGHUP}) {
        TempDir dir;
        const pid_t child = ::fork();
        REQUIRE(child >= 0);
        if (child == 0) {
            // As in the program: nothing else handles the signal (doctest's own handlers are reset).
            ::signal(sig, SIG_DFL);
            qs::AtomicFileWriter one(dir / "one.npy");
            one.write(std::string(3 << 20, 'x'));  // past the buffer: bytes on disk
            qs::OutputFiles several;
            several.add(dir / "a.npy").write("a");
            several.add(dir / "b.npy").write("b");
            several.add(dir / "c.npy").finish();  // finished, waiting for its rename
            ::raise(sig);
            ::_exit(0);  // not reached
        }
        int status = 0;
        REQUIRE(::waitpid(child, &status, 0) == child);
        INFO("signal " << sig);
        CHECK(WIFSIGNALED(status));
        CHECK(WTERMSIG(status) == sig);
        CHECK(dir.files().empty());
    }
}
