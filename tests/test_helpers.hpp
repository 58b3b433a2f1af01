// Shared helpers of the tests: element-wise comparison that prints both tensors on failure.
#pragma once

#include <doctest/doctest.h>

#include <cstdint>
#include <sstream>
#include <string>
#include <vector>

namespace qs::test {

template <class A, class B>
std::string side_by_side(const std::vector<A>& got, const std::vector<B>& want) {
    std::ostringstream out;
    out.precision(9);
    out << "\n  index:    got | want | diff\n";
    for (std::size_t i = 0; i < got.size() && i < want.size(); ++i)
        out << "  [" << i << "] " << got[i] << " | " << want[i] << " | " << (double(got[i]) - double(want[i])) << "\n";
    return out.str();
}

// Exact equality of two sequences; on failure prints both and their difference.
template <class A, class B>
void check_equal(const std::vector<A>& got, const std::vector<B>& want) {
    bool same = got.size() == want.size();
    for (std::size_t i = 0; same && i < got.size(); ++i) same = double(got[i]) == double(want[i]);
    INFO(side_by_side(got, want));
    CHECK(same);
}

}  // namespace qs::test
