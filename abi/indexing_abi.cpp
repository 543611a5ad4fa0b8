// Gather and scatter (SPEC-ops 11; symbols-ops.tsv group indexing). Pure symbols: every failure
// (released buffer, non-buffer argument, sizes that disagree with the arguments, a bad index list,
// an empty table, mixed dtypes, out of memory, device error) panics. Index lists are borrowed Lean
// `Array Nat` values: the runtime converts them on several threads straight into pinned staging
// through the fill callback made here, which is the only code that reads the Lean array.
#include <string>

#include "abi/boundary.h"
#include "runtime/indexing_dispatch.h"

using namespace tlrt::abi;

namespace {

// The host index list `indices` of `k` entries: "expected Array Nat indices" for a non-array,
// "indices.size mismatch" for another length, "index exceeds UInt32" naming the position for an
// entry above 2^32-1 or a bignum. Reads no reference counts; the array stays borrowed for the call.
tlrt::HostIndices host_indices(b_lean_obj_arg indices, uint32_t k, const char* op) {
  tlrt::HostIndices list;
  list.count = k;
  list.check = [indices, k, op] {
    if (lean_is_scalar(indices) || !lean_is_array(indices)) {
      tlrt::fail(tlrt::ErrorKind::invalid_argument, op, "expected Array Nat indices");
    }
    const size_t size = lean_array_size(indices);
    if (size != k) {
      tlrt::fail(tlrt::ErrorKind::invalid_argument, op,
                 "indices.size mismatch (indices.size = " + std::to_string(size) +
                     " but k = " + std::to_string(k) + ")");
    }
  };
  list.fill = [indices, op](uint32_t* dst, uint64_t first, uint64_t count) {
    lean_object* const* entries = lean_array_cptr(const_cast<lean_object*>(indices)) + first;
    for (uint64_t i = 0; i < count; ++i) {
      b_lean_obj_arg entry = entries[i];
      if (lean_is_scalar(entry) && lean_unbox(entry) <= UINT32_MAX) {
        dst[i] = static_cast<uint32_t>(lean_unbox(entry));
        continue;
      }
      tlrt::fail(tlrt::ErrorKind::invalid_argument, op,
                 "index exceeds UInt32 (indices[" + std::to_string(first + i) + "] = " +
                     (lean_is_scalar(entry) ? std::to_string(lean_unbox(entry)) : "a bignum") +
                     ")");
    }
  };
  return list;
}

}  // namespace

extern "C" {

// mat borrowed, indices borrowed (Array Nat of k entries); result owned: a fresh (k, cols) buffer
// of mat's dtype, row r = mat[indices[r]] (word copy) or +0 when indices[r] >= rows.
// Requires size(mat) = rows * cols.
lean_obj_res torchlean_cuda_buffer_gather_rows(b_lean_obj_arg mat, uint32_t rows, uint32_t cols,
                                               b_lean_obj_arg indices, uint32_t k) {
  return pure_call([&] {
    tlrt::Buffer& m = live_buffer(mat, "gather_rows");
    return box(
        tlrt::gather_rows(m, rows, cols, host_indices(indices, k, "gather_rows"), "gather_rows"));
  });
}

// mat, values, indices borrowed; result owned: a fresh (rows, cols) buffer, copy of mat with
// values[r] added to row indices[r] (ordered fold, bit-defined). Requires size(mat) = rows * cols,
// size(values) = k * cols, one dtype.
lean_obj_res torchlean_cuda_buffer_scatter_add_rows(b_lean_obj_arg mat, b_lean_obj_arg values,
                                                    uint32_t rows, uint32_t cols,
                                                    b_lean_obj_arg indices, uint32_t k) {
  return pure_call([&] {
    tlrt::Buffer& m = live_buffer(mat, "scatter_add_rows");
    tlrt::Buffer& v = live_buffer(values, "scatter_add_rows");
    return box(tlrt::scatter_add_rows(
        m, v, rows, cols, host_indices(indices, k, "scatter_add_rows"), "scatter_add_rows"));
  });
}

// x, values, indices borrowed; result owned: scatter_add_rows with one column. Requires
// size(x) = n, size(values) = k, one dtype.
lean_obj_res torchlean_cuda_buffer_scatter_add(b_lean_obj_arg x, b_lean_obj_arg values, uint32_t n,
                                               b_lean_obj_arg indices, uint32_t k) {
  return pure_call([&] {
    tlrt::Buffer& base = live_buffer(x, "scatter_add");
    tlrt::Buffer& v = live_buffer(values, "scatter_add");
    return box(
        tlrt::scatter_add(base, v, n, host_indices(indices, k, "scatter_add"), "scatter_add"));
  });
}

// table, positions borrowed; result owned: count entries table[idx(positions[i])] (selection).
// Requires size > 0, size(table) = size, size(positions) = count, one dtype.
lean_obj_res torchlean_cuda_buffer_gather_at(b_lean_obj_arg table, uint32_t size,
                                             b_lean_obj_arg positions, uint32_t count) {
  return pure_call([&] {
    tlrt::Buffer& t = live_buffer(table, "gather_at");
    tlrt::Buffer& p = live_buffer(positions, "gather_at");
    return box(tlrt::gather_at(t, size, p, count, "gather_at"));
  });
}

// positions, values borrowed; result owned: zeros(size) with values[i] added at idx(positions[i])
// in increasing i. Requires size > 0, size(positions) = size(values) = count, one dtype.
lean_obj_res torchlean_cuda_buffer_scatter_add_at(uint32_t size, b_lean_obj_arg positions,
                                                  b_lean_obj_arg values, uint32_t count) {
  return pure_call([&] {
    tlrt::Buffer& p = live_buffer(positions, "scatter_add_at");
    tlrt::Buffer& v = live_buffer(values, "scatter_add_at");
    return box(tlrt::scatter_add_at(size, p, v, count, "scatter_add_at"));
  });
}

}  // extern "C"
