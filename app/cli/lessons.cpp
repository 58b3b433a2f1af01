#include "cli/lessons.hpp"

#include <cstdlib>
#include <filesystem>
#include <system_error>

#include "quantscope/error.hpp"
#include "quantscope/text.hpp"

namespace qs::cli {
namespace {

namespace fs = std::filesystem;

bool IsDir(const fs::path& p) {
    std::error_code ec;
    return fs::is_directory(p, ec);
}

}  // namespace

std::string lessons_dir() {
    // A folder the user named and that is not one is their mistake to hear about, not an empty list.
    if (const char* env = std::getenv("QUANTSCOPE_LESSONS"); env && *env) {
        if (!IsDir(env)) throw Error("QUANTSCOPE_LESSONS=" + quoted_text(env) + " is not a folder (the folder of the lesson files)");
        return env;
    }
    std::error_code ec;
    const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
    if (!ec) {
        for (const fs::path& p : {exe.parent_path() / "lessons", exe.parent_path().parent_path() / "share" / "quantscope" / "lessons"})
            if (IsDir(p)) return p.string();
    }
#ifdef QS_SOURCE_LESSONS
    if (IsDir(QS_SOURCE_LESSONS)) return QS_SOURCE_LESSONS;
#endif
    return "";
}

Lesson load_lesson(const std::string& name_or_path) {
    if (is_lesson_path(name_or_path)) return read_lesson(name_or_path);
    const std::string dir = lessons_dir();
    if (dir.empty()) throw Error("no lessons folder found (set QUANTSCOPE_LESSONS to the folder of the lesson files)");
    std::string known;
    for (const std::string& file : lesson_files(dir)) {
        const std::string stem = fs::path(file).stem().string();
        if (stem == name_or_path) return read_lesson(file);
        known += (known.empty() ? "" : ", ") + stem;
    }
    throw Error("unknown lesson " + quoted_text(name_or_path) + ": expected one of " + known +
                " (see quantscope lesson list), or the path of a .json lesson file");
}

std::vector<Lesson> shipped_lessons() {
    std::vector<Lesson> out;
    const std::string dir = lessons_dir();
    if (dir.empty()) throw Error("no lessons folder found (set QUANTSCOPE_LESSONS to the folder of the lesson files)");
    for (const std::string& file : lesson_files(dir)) out.push_back(read_lesson(file));
    return out;
}

}  // namespace qs::cli
