// The command-line commands. Each takes the arguments after its name and returns the exit code;
// errors are thrown as qs::Error and reported by main() as "quantscope: error: ..." with exit code 2.
#pragma once

#include <string>
#include <vector>

namespace qs::cli {

int run_quantize(const std::vector<std::string>& args);
int run_bench(const std::vector<std::string>& args);
int run_inspect(const std::vector<std::string>& args);
int run_sweep(const std::vector<std::string>& args);
int run_layer(const std::vector<std::string>& args);
int run_lesson(const std::vector<std::string>& args);
int run_formats(const std::vector<std::string>& args);
int run_export(const std::vector<std::string>& args);
int run_compare(const std::vector<std::string>& args);

extern const char* const kMainHelp;
const std::string& quantize_help();  // its --dtype list read from the table of formats
extern const char* const kBenchHelp;
extern const char* const kInspectHelp;
extern const char* const kSweepHelp;
extern const char* const kLayerHelp;
extern const char* const kLessonHelp;
extern const char* const kFormatsHelp;
extern const char* const kExportHelp;
extern const char* const kCompareHelp;

}  // namespace qs::cli
