// tlrt-bench --compare A.json B.json [--threshold T]: the rows of two runs (bench.json, schema in
// docs/TOOLS.md) matched by (group, name), with B's median time over A's per row. A row of B more
// than T times slower than in A is a regression. Needs no GPU.
#pragma once

#include <string>

namespace bench {

// Prints the comparison on stdout; returns the exit status: 0 no regression, 1 at least one row
// past the threshold, 2 a file that cannot be read or is not a tlrt-bench report.
int compare_runs(const std::string& a_path, const std::string& b_path, double threshold);

}  // namespace bench
