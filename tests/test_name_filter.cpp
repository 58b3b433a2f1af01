// NameFilter (`sweep --filter`): the same answers as std::regex_search where std::regex copes, and linear
// time with a bounded stack where it does not (issue 25, item 9).
#include <doctest/doctest.h>

#include <random>
#include <regex>
#include <string>

#include "quantscope/name_filter.hpp"
#include "test_helpers.hpp"

using qs::NameFilter;

namespace {

bool std_search(const std::string& pattern, const std::string& text) {
    return std::regex_search(text, std::regex(pattern, std::regex::ECMAScript));
}

// A random pattern of the supported subset over a tiny alphabet, so that matches are frequent.
std::string random_pattern(std::mt19937& rng, int depth = 0) {
    static const char* const kAtoms[] = {"a", "b", "c", ".", "[ab]", "[^a]", "[a-c]", "\\w", "\\d", "\\s",
                                         "\\W", "\\.", "-", "[b-]", "1", "\\n", "x", "]", "}", "[]a]",
                                         "[^]", "[\\]a]", "[\\w.]", "\\S", "\\D", "[[:alpha:]]", "\\x2e"};
    static const char* const kQuantifiers[] = {"", "", "", "*", "+", "?", "{2}", "{1,2}", "{0,}", "*?", "+?"};
    std::string out;
    const int terms = std::uniform_int_distribution<int>(0, 4)(rng);
    for (int i = 0; i < terms; ++i) {
        const int kind = std::uniform_int_distribution<int>(0, 9)(rng);
        if (kind == 0) out += "^";
        else if (kind == 1) out += "$";
        else if (kind == 2) out += std::uniform_int_distribution<int>(0, 1)(rng) ? "\\b" : "\\B";
        else if (kind == 3 && depth < 2)
            out += std::string(std::uniform_int_distribution<int>(0, 1)(rng) ? "(" : "(?:") + random_pattern(rng, depth + 1) +
                   "|" + random_pattern(rng, depth + 1) + ")" + kQuantifiers[std::uniform_int_distribution<int>(0, 10)(rng)];
        else
            out += std::string(kAtoms[std::uniform_int_distribution<int>(0, 26)(rng)]) +
                   kQuantifiers[std::uniform_int_distribution<int>(0, 10)(rng)];
    }
    if (std::uniform_int_distribution<int>(0, 4)(rng) == 0) out += "|" + random_pattern(rng, depth + 1);
    return out;
}

std::string random_text(std::mt19937& rng) {
    static const char kBytes[] = {'a', 'b', 'c', '1', '.', '-', '_', ' ', '\n', '\r', 'x', '\xe9'};
    std::string out(static_cast<std::size_t>(std::uniform_int_distribution<int>(0, 8)(rng)), 'a');
    for (char& c : out) c = kBytes[std::uniform_int_distribution<int>(0, sizeof kBytes - 1)(rng)];
    return out;
}

}  // namespace

TEST_CASE("name filter: what sweep's tests and the CLI byte cases use") {
    CHECK(NameFilter("0\\.[wb]$").search("layer.0.w"));
    CHECK_FALSE(NameFilter("0\\.[wb]$").search("layer.0.v"));
    CHECK_FALSE(NameFilter("0\\.[wb]$").search("layer.0.wx"));
    CHECK(NameFilter("layer\\.[01]\\.weight").search("model.layer.1.weight.scale"));
    CHECK(NameFilter("").search(""));
    CHECK(NameFilter("^$").search(""));
    CHECK_FALSE(NameFilter("^$").search("a"));
    CHECK(NameFilter("[]").search("") == false);
    CHECK(NameFilter("[^]").search("\n"));
    CHECK(NameFilter("a{2,3}").search("xaax"));
    CHECK_FALSE(NameFilter("a{2,3}").search("xax"));
    CHECK(NameFilter("[[:digit:]]+\\b").search("h.12"));
    CHECK(NameFilter("\\x41\\u0042").search("AB"));
}

TEST_CASE("name filter: malformed and unsupported patterns are one-line errors") {
    for (const char* bad : {"(", ")", "a)", "[a", "a{", "a{2", "a{3,2}", "*a", "+", "a|*", "^*", "\\", "(?=a)",
                            "(?!a)", "(a)\\1", "[z-a]", "[\\d-z]", "\\x4", "\\u00e9", "(?<a>b)", "[[:nope:]]"}) {
        INFO(bad);
        CHECK_THROWS_AS(NameFilter{bad}, qs::Error);
        try {
            NameFilter{bad};
        } catch (const qs::Error& e) {
            CHECK(std::string(e.what()).find('\n') == std::string::npos);
        }
    }
    CHECK(qs::test::error_of([] { NameFilter{"("}; }) == "Mismatched '(' and ')' in regular expression");
}

TEST_CASE("name filter: the attacks that crashed or hung std::regex finish at once") {
    const std::string long_name(100000, 'a');
    CHECK_FALSE(NameFilter(".*c").search(long_name));
    CHECK_FALSE(NameFilter("a*c").search(long_name));
    CHECK_FALSE(NameFilter("[ab]*c").search(long_name));
    CHECK(NameFilter("^a*$").search(long_name));
    CHECK(NameFilter("(a+)+$").search(std::string(41, 'a')));
    CHECK_FALSE(NameFilter("(a+)+$").search(std::string(41, 'a') + "!"));
    CHECK_FALSE(NameFilter("^(a+)+$").search(std::string(41, 'a') + "!"));
    CHECK_FALSE(NameFilter("(a|a)*b").search(std::string(5000, 'a')));
    // Past the caps: the pattern's length, its nesting, and its program once the repeats are spelled out.
    CHECK_THROWS_AS(NameFilter(std::string(20000, '(') + std::string(20000, ')')), qs::Error);
    CHECK_THROWS_AS(NameFilter(std::string(400, '(') + std::string(400, ')')), qs::Error);
    CHECK_THROWS_AS(NameFilter("(((a{100}){100}){100})"), qs::Error);
    CHECK_THROWS_AS(NameFilter("a" + std::string(600, '*')), qs::Error);
    CHECK_NOTHROW(NameFilter(std::string(50, '(') + "a" + std::string(50, ')')));
    // Repeats of a part that spells out to nothing: no step for the cap to count, so they are not spelled out.
    CHECK(NameFilter("((){99999}){99999}").search("x"));
    CHECK(NameFilter("(a{0}){99999}{99999}b").search("b"));
    CHECK(NameFilter("x(?:(?:){99999}){99999}y").search("xy"));
    CHECK_FALSE(NameFilter("x(a{0}){99999}y").search("xay"));
}

TEST_CASE("name filter: the same answer as std::regex_search on random small patterns and names") {
    std::mt19937 rng(25);
    int compared = 0;
    for (int i = 0; i < 4000; ++i) {
        const std::string pattern = random_pattern(rng);
        std::regex reference;
        try {
            reference = std::regex(pattern, std::regex::ECMAScript);
        } catch (const std::regex_error&) {
            CHECK_THROWS_AS(NameFilter{pattern}, qs::Error);
            continue;
        }
        const NameFilter filter(pattern);
        for (int j = 0; j < 8; ++j) {
            const std::string text = random_text(rng);
            INFO("pattern " << pattern << " text '" << text << "'");
            CHECK(filter.search(text) == std::regex_search(text, reference));
            ++compared;
        }
    }
    CHECK(compared > 20000);
    CHECK(std_search("a.c", "abc"));  // the reference itself is what we think it is
}

TEST_CASE("sweep --filter on a 100000-byte tensor name and a deeply nested pattern exits 0 or 2 without a crash") {
    qs::test::TempDir dir;
    const std::string name(100000, 'a');
    const std::string file = dir / "long.safetensors";
    qs::test::write_bytes(file, qs::test::safetensors_file("{\"" + name + "\":{\"dtype\":\"F32\",\"shape\":[2],"
                                                           "\"data_offsets\":[0,8]}}",
                                                           std::string(8, '\0')));
    for (const char* pattern : {".*c", "a*c", "[ab]*c"}) {
        const qs::test::Run r = qs::test::run("sweep " + qs::test::shell_quote(file) + " --csv --filter '" + pattern + "'", dir);
        INFO(pattern << ": " << r.err);
        CHECK(r.exit_code == 0);
        CHECK(r.out == "name,shape,dtype,elements,min,max,mean,std,max_over_std,mse,rmse,mae,max_abs_error,sqnr_db,"
                       "clipped,bits_per_weight,error\n");
    }
    const qs::test::Run kept = qs::test::run("sweep " + qs::test::shell_quote(file) + " --csv --filter '^a*$'", dir);
    CHECK(kept.exit_code == 0);
    CHECK(qs::test::contains(kept.out, "aaaa"));
    const qs::test::Run nested = qs::test::run(
        "sweep " + qs::test::shell_quote(file) + " --filter '" + std::string(20000, '(') + std::string(20000, ')') + "'", dir);
    CHECK(nested.exit_code == 2);
    CHECK(qs::test::contains(nested.err, "--filter"));
    CHECK(nested.err.find('\n') == nested.err.size() - 1);
    const qs::test::Run slow = qs::test::run("sweep " + qs::test::shell_quote(file) + " --filter '(a+)+$b'", dir, "", 0, 20);
    CHECK(slow.exit_code == 0);
}
