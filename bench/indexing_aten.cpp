// ATen side of the gather/scatter rows of tlrt-bench. Two kinds of composition, registered under
// the names the rows ask for:
//   - TorchLean's own path (its LibTorch adapter): the indices arrive on the host, are turned into
//     int64 vectors and copied to the device with a blocking copy per index tensor; gather_rows is
//     index_select of the clamped indices + masked_fill of the out-of-range rows; the
//     deterministic scatter (scatter_add_rows, scatter_add as its 1-column case) filters the
//     in-range sources, stable-sorts them by target on the host, builds the touched rows, the
//     segment lengths and the fold order, gathers base rows and source rows into one tensor
//     (cat + index_select), folds each segment with segment_reduce from -0 and writes the touched
//     rows back with index_copy_.
//   - ATen's own device-index primitives for the rows whose indices already live on the device on
//     both sides: index_select, and clone + index_add_ (atomic, unordered). Their index tensors
//     are made once, on the first (untimed) call, and reused.
// Host scalars: rows (targets), cols, k, a tag naming the index set, then the k indices; for
// gather_at and scatter_add_at the table size only (their positions are a device buffer). Every
// input gets the same element count from the harness, so the base and the values are the leading
// parts of their inputs.
#include <ATen/ATen.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "aten_registry.h"

namespace bench::aten {
namespace {

struct Geometry {
  int64_t rows;
  int64_t cols;
  int64_t k;
  std::vector<int64_t> indices;  // as TorchLean's index_array returns them
};

Geometry geometry(S s) {
  Geometry g{
      static_cast<int64_t>(s[0]), static_cast<int64_t>(s[1]), static_cast<int64_t>(s[2]), {}};
  g.indices.resize(static_cast<size_t>(g.k));
  for (int64_t i = 0; i < g.k; ++i)
    g.indices[static_cast<size_t>(i)] = static_cast<int64_t>(s[4 + i]);
  return g;
}

// TorchLean's device_indices: a blocking host-to-device copy of an int64 vector.
at::Tensor device_indices(const std::vector<int64_t>& values, const at::Tensor& like) {
  return at::tensor(values, at::TensorOptions().dtype(at::kLong))
      .to(like.device(), at::kLong, false, true);
}

at::Tensor matrix(const at::Tensor& flat, int64_t rows, int64_t cols) {
  return flat.narrow(0, 0, rows * cols).view({rows, cols});
}

at::Tensor torchlean_gather_rows(const at::Tensor& table, const Geometry& g) {
  const at::Tensor input = matrix(table, g.rows, g.cols);
  const at::Tensor index = device_indices(g.indices, input);
  const at::Tensor valid = index.lt(g.rows);
  const at::Tensor gathered = input.index_select(0, index.clamp_max(g.rows - 1));
  return gathered.masked_fill(valid.logical_not().unsqueeze(1), 0);
}

at::Tensor torchlean_ordered_scatter(const at::Tensor& base_flat, const at::Tensor& values_flat,
                                     const Geometry& g) {
  const at::Tensor base = matrix(base_flat, g.rows, g.cols);
  const at::Tensor values = matrix(values_flat, g.k, g.cols);
  at::Tensor out = base.clone();
  std::vector<int64_t> source;
  source.reserve(g.indices.size());
  for (size_t i = 0; i < g.indices.size(); ++i) {
    if (g.indices[i] < g.rows) source.push_back(static_cast<int64_t>(i));
  }
  if (source.empty()) return out;
  std::stable_sort(source.begin(), source.end(),
                   [&](int64_t a, int64_t b) { return g.indices[a] < g.indices[b]; });
  std::vector<int64_t> touched, lengths;
  for (int64_t i : source) {
    if (touched.empty() || touched.back() != g.indices[i]) {
      touched.push_back(g.indices[i]);
      lengths.push_back(1);
    }
    ++lengths.back();
  }
  std::vector<int64_t> order;
  order.reserve(source.size() + touched.size());
  int64_t next = 0;
  for (size_t t = 0; t < touched.size(); ++t) {
    order.push_back(static_cast<int64_t>(t));
    for (int64_t j = 1; j < lengths[t]; ++j) {
      order.push_back(static_cast<int64_t>(touched.size()) + next++);
    }
  }
  const at::Tensor destination = device_indices(touched, base);
  at::Tensor grouped = at::cat(
      {base.index_select(0, destination), values.index_select(0, device_indices(source, values))},
      0);
  grouped = grouped.index_select(0, device_indices(order, base));
  const at::Tensor reduced = at::segment_reduce(grouped, "sum", device_indices(lengths, grouped),
                                                c10::nullopt, c10::nullopt, 0, true, -0.0);
  out.index_copy_(0, destination, reduced);
  return out;
}

// The device index tensor of the row's indices, made on the first call for this index set (the
// tag; a scalar array may reuse the address of an earlier one) and kept for the later calls.
const at::Tensor& cached_indices(S s, const at::Tensor& like) {
  static double tag = -1;
  static at::Tensor cached;
  if (tag != s[3] || !cached.defined() || cached.device() != like.device()) {
    cached = device_indices(geometry(s).indices, like);
    tag = s[3];
  }
  return cached;
}

// The addressing of gather_at / scatter_add_at (SPEC-ops 11) in ATen: NaN -> 0, +inf -> size-1,
// -inf -> 0, clamp to [0, size-1], truncate to an index. The adapter revision that exported these
// symbols is not stored; this is the direct ATen composition of the spec's formula.
at::Tensor positions_to_index(const at::Tensor& positions, int64_t size) {
  const double last = static_cast<double>(size - 1);
  return at::nan_to_num(positions, 0.0, last, 0.0).clamp(0.0, last).to(at::kLong);
}

const AtenOpRegistration kIndexingOps({
    {"gather_at", 2, false, "index_select(table, 0, clamp(nan_to_num(p)).long())",
     [](X x, S s) -> Tensors {
       const int64_t size = static_cast<int64_t>(s[0]);
       const at::Tensor table = x[0].narrow(0, 0, size);
       return {table.index_select(0, positions_to_index(x[1], size))};
     }},
    {"scatter_add_at", 2, false,
     "zeros(size).index_add_(0, clamp(nan_to_num(p)).long(), values) (atomic, unordered)",
     [](X x, S s) -> Tensors {
       const int64_t size = static_cast<int64_t>(s[0]);
       at::Tensor out = at::zeros({size}, x[1].options());
       out.index_add_(0, positions_to_index(x[0], size), x[1]);
       return {out};
     }},
    {"gather_rows", 1, false,
     "host indices -> device (blocking), index_select(clamp_max) + masked_fill (TorchLean)",
     [](X x, S s) -> Tensors { return {torchlean_gather_rows(x[0], geometry(s))}; }},
    {"scatter_add_rows", 2, false,
     "host stable_sort + cat + index_select + segment_reduce from -0 + index_copy_ (TorchLean, "
     "deterministic)",
     [](X x, S s) -> Tensors { return {torchlean_ordered_scatter(x[0], x[1], geometry(s))}; }},
    {"index_select", 1, false, "index_select(table, 0, device indices)",
     [](X x, S s) -> Tensors {
       const at::Tensor table =
           matrix(x[0], static_cast<int64_t>(s[0]), static_cast<int64_t>(s[1]));
       return {table.index_select(0, cached_indices(s, table))};
     }},
    {"index_add", 2, false, "clone(base).index_add_(0, device indices, values) (atomic, unordered)",
     [](X x, S s) -> Tensors {
       const int64_t rows = static_cast<int64_t>(s[0]), cols = static_cast<int64_t>(s[1]);
       const at::Tensor base = matrix(x[0], rows, cols);
       const at::Tensor values = matrix(x[1], static_cast<int64_t>(s[2]), cols);
       at::Tensor out = base.clone();
       out.index_add_(0, cached_indices(s, base), values);
       return {out};
     }},
});

}  // namespace
}  // namespace bench::aten
