// Gather and scatter (SPEC-ops 11), dispatched to the backend that holds the inputs. Each returns a
// fresh buffer of the inputs' dtype on their backend, never an alias of an input, or throws
// tlrt::Error naming `op` with the sizes involved (released input: released_buffer; encoded, mixed
// dtypes or backends, sizes that disagree with the arguments, a bad index list, an empty table:
// invalid_argument). Checks run in the contract's order: the buffers against their shapes, then
// the index list (kind and length, then every entry), all before anything is allocated for the
// result; a failing call leaves nothing allocated. Device work is queued on the device's stream.
//
// The scatters always use the ordered fold of kernels/indexing/indexing.h (the deterministic
// contract, which is also a valid order when the deterministic setting is off), so their results
// are bit-defined and identical on both backends.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>

#include "runtime/buffer.h"
#include "runtime/index_upload.h"

namespace tlrt {

// A host index list as the boundary hands it over: `check` throws for a list that is not a list of
// `count` entries (the kind and the length), `fill` converts and validates entries.
struct HostIndices {
  uint64_t count = 0;
  std::function<void()> check;
  IndexFill fill;
};

// (k, cols): row r = mat[idx[r]] when idx[r] < rows, else +0. Requires size(mat) = rows * cols.
std::unique_ptr<Buffer> gather_rows(const Buffer& mat, uint64_t rows, uint64_t cols,
                                    const HostIndices& idx, const char* op);
// (rows, cols): copy of mat with values[r] added to row idx[r] in source order. Requires
// size(mat) = rows * cols and size(values) = k * cols (k = idx.count).
std::unique_ptr<Buffer> scatter_add_rows(const Buffer& mat, const Buffer& values, uint64_t rows,
                                         uint64_t cols, const HostIndices& idx, const char* op);
// scatter_add_rows of one column, its sizes checked under scatter_add's own names first:
// size(x) = n, size(values) = k (k = idx.count).
std::unique_ptr<Buffer> scatter_add(const Buffer& x, const Buffer& values, uint64_t n,
                                    const HostIndices& idx, const char* op);
// count entries table[at_index(p)]. Requires size(table) = size > 0 and size(positions) = count.
std::unique_ptr<Buffer> gather_at(const Buffer& table, uint32_t size, const Buffer& positions,
                                  uint64_t count, const char* op);
// zeros(size) with values[i] added at at_index(positions[i]) in increasing i. Requires size > 0,
// size(positions) = size(values) = count.
std::unique_ptr<Buffer> scatter_add_at(uint32_t size, const Buffer& positions, const Buffer& values,
                                       uint64_t count, const char* op);

}  // namespace tlrt
