// Files as an attacker or an unlucky user meets them: inputs that are not regular files, files that shrink
// while they are mapped, links planted where temporaries go, the longest legal names, and outputs that are
// the input or each other.
#include <doctest/doctest.h>

#include <fcntl.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "quantscope/atomic_file.hpp"
#include "quantscope/csv.hpp"
#include "quantscope/npy.hpp"
#include "quantscope/presets.hpp"
#include "quantscope/safetensors.hpp"
#include "quantscope/session.hpp"
#include "quantscope/tensor_io.hpp"
#include "quantscope/text.hpp"
#include "test_helpers.hpp"

namespace fs = std::filesystem;
using namespace qs::test;

namespace {

std::string counting_bytes(std::size_t size) {
    std::string out(size, '\0');
    for (std::size_t i = 0; i < size; ++i) out[i] = static_cast<char>(i * 7 + 1);
    return out;
}

// What any reader of a mapping does: touch every byte (volatile: even when the caller drops the sum).
unsigned sum_bytes(const qs::MappedFile& file) {
    const volatile std::uint8_t* bytes = file.data();
    unsigned sum = 0;
    for (std::size_t i = 0; i < file.size(); ++i) sum += bytes[i];
    return sum;
}

// Another process truncating the file under our mapping.
void shrink(const std::string& path, off_t size) { REQUIRE(::truncate(path.c_str(), size) == 0); }

// A session whose tensor is the file `tensor` (relative to the session).
void write_file_session(const std::string& path, const std::string& tensor) {
    qs::Session session;
    session.source.kind = qs::TensorSource::Kind::File;
    session.source.path = tensor;
    qs::write_session(path, session);
}

// A blocking call fails the test run after a minute instead of hanging it.
struct Deadline {
    Deadline() { ::alarm(60); }
    ~Deadline() { ::alarm(0); }
};

}  // namespace

// ------------------------------------------------------------------------------------ a file that shrinks

TEST_CASE("files: a mapped file that shrinks while it is read is a qs::Error and not SIGBUS") {
    TempDir dir;
    const std::string path = dir / "a.bin";
    write_bytes(path, counting_bytes(std::size_t{1} << 20));
    const qs::MappedFile intact(path);
    const unsigned expected = intact.read_guarded([&] { return sum_bytes(intact); });

    const qs::MappedFile file(path);
    shrink(path, 100);
    CHECK_ERROR_HAS(file.read_guarded([&] { return sum_bytes(file); }), "the file shrank while it was being read");
    CHECK_ERROR_HAS(file.read_guarded([&] { return sum_bytes(file); }), path);
    // What the read itself threw on the zeros it saw instead becomes the same error.
    CHECK_ERROR_HAS(file.read_guarded([&] {
        if (sum_bytes(file) != expected) throw qs::Error("a parser's complaint");
        return 0;
    }),
                    "shrank");
    // Growing back does not make an earlier shrink unseen.
    write_bytes(path, counting_bytes(std::size_t{1} << 20));
    CHECK_ERROR_HAS(file.read_guarded([&] { return sum_bytes(file); }), "shrank");
    CHECK(qs::MappedFile(path).size() == std::size_t{1} << 20);
}

TEST_CASE("files: every reader of a mapped file reports a shrink as one qs::Error") {
    TempDir dir;
    const std::vector<float> values(std::size_t{1} << 18, 1.5f);
    for (const std::string name : {"t.npy", "t.csv"}) {
        CAPTURE(name);
        qs::save_floats(dir / name, {512, 512}, values.data());
        const qs::MappedFile file(dir / name);
        shrink(dir / name, 4096);
        if (name == "t.npy")
            CHECK_ERROR_HAS(qs::read_npy(file), "shrank");
        else
            CHECK_ERROR_HAS(qs::read_csv(file), "shrank");
    }
    // A safetensors header longer than a page: shrinking cuts the header being parsed...
    const std::string padding(20000, 'x');
    const std::string header =
        "{\"__metadata__\": {\"pad\": \"" + padding +
        "\"}, \"w\": {\"dtype\": \"F32\", \"shape\": [65536], \"data_offsets\": [0, 262144]}}";
    const std::string path = dir / "m.safetensors";
    write_bytes(path, safetensors_file(header, std::string(262144, '\0')));
    {
        qs::MappedFile file(path);
        shrink(path, 4096);
        CHECK_ERROR_HAS(qs::SafetensorsFile(std::move(file)), "shrank");
    }
    // ...or, once the header was read, the tensor's bytes.
    write_bytes(path, safetensors_file(header, std::string(262144, '\0')));
    const qs::SafetensorsFile model(path);
    shrink(path, static_cast<off_t>(8 + header.size() + 100));
    CHECK_ERROR_HAS(model.read("w"), "shrank");
}

TEST_CASE("files: guarded reads on several threads at once while one file shrinks") {
    TempDir dir;
    write_bytes(dir / "a.bin", counting_bytes(std::size_t{4} << 20));
    write_bytes(dir / "b.bin", counting_bytes(std::size_t{4} << 20));
    const qs::MappedFile a(dir / "a.bin"), b(dir / "b.bin");
    const unsigned expected = b.read_guarded([&] { return sum_bytes(b); });
    shrink(dir / "a.bin", 0);
    std::string messages[4];
    unsigned sums[4] = {};
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t) {
        threads.emplace_back([&, t] {
            const qs::MappedFile& file = t % 2 == 0 ? a : b;
            messages[t] = error_of([&] {
                // Nested: the inner guard of the other file must not swallow this one's fault.
                sums[t] = file.read_guarded(
                    [&] { return b.read_guarded([&] { return sum_bytes(b); }) + sum_bytes(file); });
            });
        });
    }
    for (auto& thread : threads) thread.join();
    for (int t = 0; t < 4; ++t) {
        CAPTURE(t);
        if (t % 2 == 0) {
            CHECK(contains(messages[t], "shrank"));
        } else {
            CHECK(messages[t] == "<no error>");
            CHECK(sums[t] == 2 * expected);
        }
    }
}

TEST_CASE("files: a fault outside any guarded read still ends the process") {
    TempDir dir;
    const std::string path = dir / "a.bin";
    write_bytes(path, counting_bytes(std::size_t{1} << 20));
    const pid_t child = ::fork();
    REQUIRE(child >= 0);
    if (child == 0) {
        ::signal(SIGBUS, SIG_DFL);  // the default action, not the test framework's crash report
        const qs::MappedFile file(path);
        file.read_guarded([] { return 0; });  // the handler is in place now
        if (::truncate(path.c_str(), 0) != 0) ::_exit(3);
        const volatile unsigned sum = sum_bytes(file);
        ::_exit(sum == 0 ? 4 : 5);
    }
    int status = 0;
    REQUIRE(::waitpid(child, &status, 0) == child);
    CHECK(WIFSIGNALED(status));
    CHECK(WTERMSIG(status) == SIGBUS);
}

TEST_CASE("files: quantize and inspect of a file that shrinks once it is mapped: exit 2 and one line") {
    TempDir dir;
    const std::vector<float> values(std::size_t{1} << 18, 0.5f);
    const std::string header = "{\"w\": {\"dtype\": \"F32\", \"shape\": [4], \"data_offsets\": [0, 16]}}";
    const std::pair<const char*, const char*> runs[] = {
        {"quantize", "t.npy"}, {"quantize", "t.csv"}, {"inspect", "m.safetensors"}};
    for (const auto& [command, name] : runs) {
        CAPTURE(name);
        qs::save_floats(dir / "t.npy", {512, 512}, values.data());
        qs::save_floats(dir / "t.csv", {512, 512}, values.data());
        write_bytes(dir / "m.safetensors", safetensors_file(header, std::string(16, '\0')));
        const std::string victim = fs::canonical(dir / name).string();
        // The shim truncates the file right after the program maps it (tests/shrink_on_map.cpp); an ASan
        // build must accept a library loaded before its runtime.
        const Run r = run(std::string(command) + " " + shell_quote(dir / name), dir,
                          "LD_PRELOAD=" + shell_quote(QS_SHRINK_ON_MAP) + " QS_SHRINK_ON_MAP=" + shell_quote(victim) +
                              " ASAN_OPTIONS=\"$ASAN_OPTIONS:verify_asan_link_order=0\"");
        CHECK(r.exit_code == 2);
        CHECK(one_line(r.err));
        CHECK(contains(r.err, "cannot read '" + dir / name + "': the file shrank while it was being read"));
        CHECK(fs::file_size(dir / name) == 0);
    }
}

// ------------------------------------------------------------------------------- inputs that never end

TEST_CASE("files: an input that is not a regular file fails at once whichever reader opens it") {
    TempDir dir;
    const Deadline deadline;
    for (const std::string name : {"p.npy", "p.csv", "p.safetensors", "p.json"})
        REQUIRE(::mkfifo((dir / name).c_str(), 0600) == 0);
    CHECK_ERROR_HAS(qs::MappedFile(dir / "p.npy"), "not a regular file (a named pipe)");
    CHECK_ERROR_HAS(qs::load_tensor(dir / "p.npy"), "named pipe");
    CHECK_ERROR_HAS(qs::load_tensor(dir / "p.csv"), "named pipe");
    CHECK_ERROR_HAS(qs::load_tensor(dir / "p.safetensors"), "named pipe");
    CHECK_ERROR_HAS(qs::read_session(dir / "p.json"), "named pipe");
    CHECK_ERROR_HAS(qs::read_small_file(dir / "p.json", 100), "named pipe");
    // A session whose tensor is a FIFO.
    write_file_session(dir / "s.json", "p.npy");
    CHECK_ERROR_HAS(qs::load_session_tensor(qs::read_session(dir / "s.json"), dir / "s.json"), "named pipe");

    CHECK_ERROR_HAS(qs::MappedFile("/dev/zero"), "not a regular file (a device)");
    CHECK_ERROR_HAS(qs::MappedFile(dir.path.string()), "it is a directory");
    const int sock = ::socket(AF_UNIX, SOCK_STREAM, 0);
    REQUIRE(sock >= 0);
    sockaddr_un address{};
    address.sun_family = AF_UNIX;
    const std::string socket_path = dir / "s.npy";
    REQUIRE(socket_path.size() < sizeof address.sun_path);
    std::strcpy(address.sun_path, socket_path.c_str());
    REQUIRE(::bind(sock, reinterpret_cast<const sockaddr*>(&address), sizeof address) == 0);
    CHECK_ERROR_HAS(qs::load_tensor(socket_path), "not a regular file (a socket)");
    ::close(sock);
}

TEST_CASE("files: a FIFO as input to quantize / inspect / render or in a session: exit 2 at once") {
    TempDir dir;
    REQUIRE(::mkfifo((dir / "p.npy").c_str(), 0600) == 0);
    REQUIRE(::mkfifo((dir / "p.safetensors").c_str(), 0600) == 0);
    write_file_session(dir / "s.json", "p.npy");
    const std::string npy = shell_quote(dir / "p.npy");
    for (const std::string& args : {"quantize " + npy, "quantize " + shell_quote(dir / "s.json"),
                                    "inspect " + shell_quote(dir / "p.safetensors"),
                                    "render " + npy + " --out " + shell_quote(dir / "f.png")}) {
        CAPTURE(args);
        const Run r = run(args, dir);
        CHECK(r.exit_code == 2);
        CHECK(one_line(r.err));
        CHECK(contains(r.err, "named pipe"));
    }
}

// ----------------------------------------------------------------------------------------- the writer

TEST_CASE("files: temporaries are created exclusively and never through a link") {
    TempDir dir;
    write_bytes(dir / "victim", "precious");
    const int folder = ::open(dir.path.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
    REQUIRE(folder >= 0);
    REQUIRE(::symlink((dir / "victim").c_str(), (dir / ".qs-planted").c_str()) == 0);
    REQUIRE(::symlink((dir / "through-link").c_str(), (dir / ".qs-dangling").c_str()) == 0);
    write_bytes(dir / ".qs-taken", "someone else's");
    for (const char* name : {".qs-planted", ".qs-dangling", ".qs-taken"}) {
        CAPTURE(name);
        errno = 0;
        CHECK(qs::detail::create_exclusive_file(folder, name) == -1);
        CHECK(errno == EEXIST);
    }
    CHECK(read_bytes(dir / "victim") == "precious");
    CHECK(read_bytes(dir / ".qs-taken") == "someone else's");
    CHECK_FALSE(fs::exists(dir / "through-link"));
    // A free name: created with 0666 less the umask, as fopen would.
    const mode_t old_mask = ::umask(027);
    const int fd = qs::detail::create_exclusive_file(folder, ".qs-free");
    ::umask(old_mask);
    REQUIRE(fd >= 0);
    struct stat st {};
    REQUIRE(::fstat(fd, &st) == 0);
    CHECK((st.st_mode & 0777) == 0640);
    ::close(fd);
    ::close(folder);
}

TEST_CASE("files: the temporary has a short name of fixed length and the longest legal target name works") {
    TempDir dir;
    for (const std::size_t length : {1u, 100u, 255u}) {
        CAPTURE(length);
        const std::string name = length < 4 ? std::string(length, 'n') : std::string(length - 4, 'n') + ".npy";
        {
            qs::AtomicFileWriter writer(dir / name);
            const std::vector<std::string> files = dir.files();
            REQUIRE(files.size() == 1);
            CHECK(files[0].size() == 12);
            CHECK(files[0].rfind(".qs-", 0) == 0);
        }
        CHECK(dir.files().empty());
    }
    const std::vector<float> values = {1, 2, 3, 4};
    const std::string longest = std::string(251, 'a') + ".npy";
    qs::save_floats(dir / longest, {2, 2}, values.data());
    CHECK(qs::load_tensor(dir / longest).values == values);
    // One byte more: refused before anything is written, naming the file system's reason.
    CHECK_ERROR_HAS(qs::AtomicFileWriter(dir / ("b" + longest)), "File name too long");
    CHECK(dir.files() == std::vector<std::string>{longest});
}

TEST_CASE("files: OutputFiles writes all of its files or none and names only the targets") {
    TempDir dir;
    {
        qs::OutputFiles files;
        files.add(dir / "a.bin").write("a");
        files.add(dir / "b.bin").write("b");
    }
    CHECK(dir.files().empty());
    {
        qs::OutputFiles files;
        files.add(dir / "a.bin").write("a");
        const std::string message = error_of([&] { files.add(dir / "missing/b.bin"); });
        CHECK(contains(message, "cannot write '" + dir / "missing/b.bin" + "'"));
        CHECK_FALSE(contains(message, ".qs-"));
    }
    CHECK(dir.files().empty());
    write_bytes(dir / "a.bin", "old");
    qs::OutputFiles files;
    files.add(dir / "a.bin").write("new a");
    files.add(dir / "b.bin").write("new b");
    CHECK(read_bytes(dir / "a.bin") == "old");
    files.commit();
    CHECK(read_bytes(dir / "a.bin") == "new a");
    CHECK(read_bytes(dir / "b.bin") == "new b");
    CHECK(dir.files() == std::vector<std::string>{"a.bin", "b.bin"});
}

// ----------------------------------------------------------------------------------- the same file twice

TEST_CASE("files: outputs are told from inputs and from each other by device and inode") {
    TempDir dir;
    const std::string in = dir / "in.csv";
    write_bytes(in, "1,2\n");
    fs::create_directory(dir / "d");
    fs::create_directory_symlink(dir / "d", dir / "alias");
    fs::create_hard_link(in, dir / "hard.csv");
    const std::vector<qs::FileRole> input = {{"the input", in}};
    for (const std::string& same :
         {in, dir / "./in.csv", dir / "d/../in.csv", dir / "alias/../in.csv", dir / "hard.csv"}) {
        CAPTURE(same);
        CHECK_ERROR_HAS(qs::check_distinct_files(input, {{"--out-error", same}}),
                        "--out-error '" + same + "' would overwrite the input '" + in + "'");
    }
    // Outputs not written yet: the same folder entry through a linked folder.
    CHECK_ERROR_HAS(qs::check_distinct_files(
                        input, {{"--out-quantized", dir / "d/a.npy"}, {"--out-error", dir / "alias/a.npy"}}),
                    "--out-quantized '" + dir / "d/a.npy" + "' and --out-error '" + dir / "alias/a.npy" +
                        "' are the same file");
    CHECK_ERROR_HAS(
        qs::check_distinct_files({}, {{"--out-quantized", dir / "a.npy"}, {"--out-error", dir / "a.npy"}}),
        "are the same file");
    // Different files, and a folder that does not exist (its writer says so), are fine.
    qs::check_distinct_files(input, {{"--out-quantized", dir / "d/a.npy"},
                                     {"--out-error", dir / "d/b.npy"},
                                     {"--out-dequantized", dir / "nowhere/a.npy"}});
}

TEST_CASE("files: quantize refuses an output that is its input or another output and writes nothing") {
    TempDir dir;
    const std::string in = dir / "in.csv", csv = "1, 2\n3, 4\n";
    write_bytes(in, csv);
    fs::create_directory(dir / "d");
    fs::create_directory_symlink(dir / "d", dir / "alias");
    fs::create_hard_link(in, dir / "hard.csv");
    qs::save_floats(dir / "t.npy", {2, 2}, std::vector<float>{1, 2, 3, 4}.data());
    write_file_session(dir / "s.json", "t.npy");
    const std::string t_npy = read_bytes(dir / "t.npy");
    struct Case {
        std::string args, expect;
    };
    const std::vector<Case> cases = {
        {shell_quote(in) + " --out-error " + shell_quote(in), "would overwrite the input"},
        {shell_quote(in) + " --out-dequantized " + shell_quote(dir / "hard.csv"), "would overwrite the input"},
        {shell_quote(in) + " --out-quantized " + shell_quote(dir / "d/a.npy") + " --out-error " +
             shell_quote(dir / "alias/a.npy"),
         "are the same file"},
        {shell_quote(dir / "s.json") + " --out-dequantized " + shell_quote(dir / "t.npy"), "the session's tensor"},
    };
    for (const Case& c : cases) {
        CAPTURE(c.args);
        const Run r = run("quantize " + c.args, dir);
        CHECK(r.exit_code == 2);
        CHECK(one_line(r.err));
        CHECK(contains(r.err, c.expect));
    }
    CHECK(read_bytes(in) == csv);
    CHECK(read_bytes(dir / "t.npy") == t_npy);
    CHECK(fs::is_empty(dir / "d"));
    CHECK(dir.files() == std::vector<std::string>{"alias", "d", "hard.csv", "in.csv", "s.json", "stderr.txt",
                                                  "stdout.txt", "t.npy"});
}

TEST_CASE("files: quantize writes an output name of 255 bytes and never names a temporary") {
    TempDir dir;
    const std::string longest = dir / (std::string(251, 'e') + ".npy");
    Run r = run("quantize --preset lesson --out-error " + shell_quote(longest), dir);
    CHECK(r.exit_code == 0);
    CHECK(qs::load_tensor(longest).shape == qs::Shape{3, 3});
    const std::string too_long = dir / (std::string(252, 'e') + ".npy");
    r = run("quantize --preset lesson --out-quantized " + shell_quote(dir / "q.npy") + " --out-error " +
                shell_quote(too_long),
            dir);
    CHECK(r.exit_code == 2);
    CHECK(one_line(r.err));
    // The name as the user gave it, its middle shortened to keep the line short.
    CHECK(contains(r.err, "--out-error: cannot write '" + qs::printable(too_long) + "': File name too long"));
    CHECK(contains(r.err, "eeee.npy': File name too long"));
    CHECK_FALSE(contains(r.err, ".qs-"));
    CHECK_FALSE(fs::exists(dir / "q.npy"));
}

// ------------------------------------------------------------------------------------------ one way

TEST_CASE("files: the program opens files only through MappedFile and AtomicFileWriter") {
    const fs::path root = fs::path(QS_TESTS_DIR).parent_path();
    const std::vector<std::string> allowed = {"core/io/src/atomic_file.cpp", "core/io/src/mapped_file.cpp"};
    // Any of these opens a file some other way: without the regular-file check, the exclusive
    // temporary, the rename or the shrink guard.
    const std::vector<std::string> openers = {"fopen(", "fstream", "::open(", "openat(", "creat(", "FromFileTTF"};
    std::size_t scanned = 0;
    for (const char* top : {"core", "app"}) {
        for (const auto& entry : fs::recursive_directory_iterator(root / top)) {
            const std::string ext = entry.path().extension().string();
            if (ext != ".cpp" && ext != ".hpp") continue;
            const std::string relative = fs::relative(entry.path(), root).string();
            if (std::find(allowed.begin(), allowed.end(), relative) != allowed.end()) continue;
            ++scanned;
            const std::string text = read_bytes(entry.path());
            for (const std::string& opener : openers) {
                CAPTURE(relative);
                CHECK_MESSAGE(!contains(text, opener), relative << " uses " << opener);
            }
        }
    }
    CHECK(scanned > 50);
}
