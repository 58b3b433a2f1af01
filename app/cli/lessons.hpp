// Where the shipped lessons live and how a lesson is named: `--lesson NAME` is a shipped lesson's name (its
// file without .json) or the path of a teacher's own .json file (.JSON too).
#pragma once

#include <string>
#include <vector>

#include "quantscope/lesson.hpp"

namespace qs::cli {

// The folder of the shipped lessons, the first that exists of: $QUANTSCOPE_LESSONS; `lessons/` beside the
// executable (the build copies assets/lessons there); `../share/quantscope/lessons` from the executable
// (an install); the source tree's assets/lessons (a build run before its copy). "" when none exists.
// Throws qs::Error naming the variable when $QUANTSCOPE_LESSONS is set to anything but a folder.
std::string lessons_dir();

// A shipped lesson by name, or a lesson file by path (anything ending in .json). Throws qs::Error naming the
// file and step for a bad lesson, or listing the shipped names for an unknown one.
Lesson load_lesson(const std::string& name_or_path);

// Every shipped lesson, in name order (a bad file throws, naming it).
std::vector<Lesson> shipped_lessons();

}  // namespace qs::cli
