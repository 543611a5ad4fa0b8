// Convolution passes on cuDNN through the cudnn-frontend graph API (kernels/conv/conv.h). The
// frontend headers are compiled only here.
//
// One graph per (pass, geometry, policy): fprop (X, W -> Y), dgrad (DY, W -> DX) or wgrad
// (X, DY -> DW), all tensors NCHW / NCDHW packed with explicit dims and strides (the frontend would
// otherwise infer NHWC strides for its outputs). Spatial rank 1 and 2 use 4-D tensors (a rank-1
// axis behind a unit axis), rank 3 uses 5-D; batch N, channels, groups through the kernel's
// second dimension (cin / groups). Padding is given as pre and post padding per axis: post only
// shapes the output extent, which is set explicitly.
//
// Engine choice: heuristics mode A, then the fallback list. Deselected by numerical note:
//   - NONDETERMINISTIC when the deterministic setting is on;
//   - TENSOR_CORE, DOWN_CONVERT_INPUTS and REDUCED_PRECISION_REDUCTION for float32 unless the
//     runtime allows TF32 for convolutions (a float32 tensor-core engine computes in TF32);
//   - FFT and WINOGRAD always: their transforms are not the direct sum whose error the parity
//     bound of docs/NUMERICS.md describes.
// The first engine of that list that builds is the plan. A geometry for which none builds (most
// float64 geometries, kernels whose element count exceeds what the engines index, ...) gives an
// empty plan, and the dispatch runs the own direct kernels for it; TLRT_CONV_DEBUG=1 prints the
// frontend's reason on stderr.
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "common/error.h"
#include "kernels/conv/conv.h"

#if TLRT_HAVE_CUDNN_FRONTEND
#include <cudnn_frontend.h>
#endif

namespace tlrt::kernels {

#if TLRT_HAVE_CUDNN_FRONTEND

namespace fe = cudnn_frontend;

struct ConvCudnnGraph {
  std::shared_ptr<fe::graph::Graph> graph;
};

namespace {

constexpr int64_t kUidA = 1, kUidB = 2, kUidOut = 3;

bool debug_wanted() {
  const char* v = std::getenv("TLRT_CONV_DEBUG");
  return v != nullptr && v[0] != '\0' && !(v[0] == '0' && v[1] == '\0');
}

// NC + spatial dims: 4-D for spatial rank 1 and 2, 5-D for rank 3.
std::vector<int64_t> dims_of(const ConvShape& s, uint64_t n, uint64_t c, const uint64_t* spatial) {
  std::vector<int64_t> d{static_cast<int64_t>(n), static_cast<int64_t>(c)};
  const int first = s.rank == 3 ? 0 : 1;
  for (int a = first; a < kConvAxes; ++a) d.push_back(static_cast<int64_t>(spatial[a]));
  return d;
}

std::vector<int64_t> packed_strides(const std::vector<int64_t>& dims) {
  std::vector<int64_t> st(dims.size());
  int64_t v = 1;
  for (size_t i = dims.size(); i-- > 0;) {
    st[i] = v;
    v *= dims[i];
  }
  return st;
}

std::vector<int64_t> spatial_of(const ConvShape& s, const uint64_t* v) {
  std::vector<int64_t> r;
  const int first = s.rank == 3 ? 0 : 1;
  for (int a = first; a < kConvAxes; ++a) r.push_back(static_cast<int64_t>(v[a]));
  return r;
}

std::shared_ptr<fe::graph::Tensor_attributes> tensor(fe::graph::Graph& g, const char* name,
                                                     int64_t uid, std::vector<int64_t> dims) {
  std::vector<int64_t> st = packed_strides(dims);
  return g.tensor(fe::graph::Tensor_attributes()
                      .set_name(name)
                      .set_uid(uid)
                      .set_dim(std::move(dims))
                      .set_stride(std::move(st)));
}

template <class Attributes>
Attributes geometry(const ConvShape& s, Attributes a) {
  a.set_pre_padding(spatial_of(s, s.pre))
      .set_post_padding(spatial_of(s, s.post))
      .set_stride(spatial_of(s, s.stride))
      .set_dilation(spatial_of(s, s.dil));
  return a;
}

}  // namespace

bool conv_cudnn_available() {
  return true;
}

namespace {

ConvCudnnPlan build_plan(const ConvShape& s, ConvPass pass, ConvPlanPolicy policy,
                         cudnnContext* handle) {
  auto graph = std::make_shared<fe::graph::Graph>();
  const fe::DataType_t type = policy.f64 ? fe::DataType_t::DOUBLE : fe::DataType_t::FLOAT;
  graph->set_io_data_type(type).set_intermediate_data_type(type).set_compute_data_type(type);

  const std::vector<int64_t> x_dims = dims_of(s, s.batch, s.cin, s.in);
  const std::vector<int64_t> y_dims = dims_of(s, s.batch, s.cout, s.out);
  const std::vector<int64_t> w_dims = dims_of(s, s.cout, s.cin_group(), s.k);
  std::shared_ptr<fe::graph::Tensor_attributes> out;
  switch (pass) {
    case ConvPass::fprop: {
      auto x = tensor(*graph, "x", kUidA, x_dims);
      auto w = tensor(*graph, "w", kUidB, w_dims);
      out = graph->conv_fprop(x, w,
                              geometry(s, fe::graph::Conv_fprop_attributes().set_name("fprop")));
      out->set_dim(y_dims).set_stride(packed_strides(y_dims));
      break;
    }
    case ConvPass::dgrad: {
      auto dy = tensor(*graph, "dy", kUidA, y_dims);
      auto w = tensor(*graph, "w", kUidB, w_dims);
      out = graph->conv_dgrad(dy, w,
                              geometry(s, fe::graph::Conv_dgrad_attributes().set_name("dgrad")));
      out->set_dim(x_dims).set_stride(packed_strides(x_dims));
      break;
    }
    case ConvPass::wgrad: {
      auto x = tensor(*graph, "x", kUidA, x_dims);
      auto dy = tensor(*graph, "dy", kUidB, y_dims);
      out = graph->conv_wgrad(dy, x,
                              geometry(s, fe::graph::Conv_wgrad_attributes().set_name("wgrad")));
      out->set_dim(w_dims).set_stride(packed_strides(w_dims));
      break;
    }
  }
  out->set_output(true).set_uid(kUidOut).set_data_type(type);

  std::string failed;
  auto step = [&](fe::error_t status, const char* what) {
    if (failed.empty() && status.is_bad()) failed = std::string(what) + ": " + status.get_message();
    return failed.empty();
  };
  if (step(graph->validate(), "validate") &&
      step(graph->build_operation_graph(handle), "build_operation_graph") &&
      step(graph->create_execution_plans({fe::HeurMode_t::A, fe::HeurMode_t::FALLBACK}),
           "create_execution_plans")) {
    std::vector<fe::NumericalNote_t> excluded{fe::NumericalNote_t::FFT,
                                              fe::NumericalNote_t::WINOGRAD};
    if (policy.deterministic) excluded.push_back(fe::NumericalNote_t::NONDETERMINISTIC);
    if (!policy.f64 && !policy.tf32) {
      excluded.push_back(fe::NumericalNote_t::TENSOR_CORE);
      excluded.push_back(fe::NumericalNote_t::DOWN_CONVERT_INPUTS);
      excluded.push_back(fe::NumericalNote_t::REDUCED_PRECISION_REDUCTION);
    }
    graph->deselect_numeric_notes(excluded);
    if (step(graph->check_support(handle), "check_support")) {
      step(graph->build_plans(handle, fe::BuildPlanPolicy_t::HEURISTICS_CHOICE), "build_plans");
    }
  }
  int64_t workspace = 0;
  if (failed.empty()) step(graph->get_workspace_size(workspace), "get_workspace_size");
  if (!failed.empty()) {
    if (debug_wanted()) {
      std::fprintf(stderr, "tlrt: conv: no cuDNN plan for pass %d (rank %u, f64 %d): %s\n",
                   static_cast<int>(pass), s.rank, policy.f64 ? 1 : 0, failed.c_str());
    }
    return ConvCudnnPlan{};
  }
  ConvCudnnPlan plan;
  plan.graph = new ConvCudnnGraph{std::move(graph)};
  plan.workspace_bytes = workspace > 0 ? static_cast<uint64_t>(workspace) : 0;
  return plan;
}

}  // namespace

ConvCudnnPlan conv_cudnn_plan_create(const ConvShape& s, ConvPass pass, ConvPlanPolicy policy,
                                     cudnnContext* handle, const char* op) {
  (void)op;
  try {
    return build_plan(s, pass, policy, handle);
  } catch (const std::exception& e) {
    // The frontend reports most failures by status; anything it throws while building means no
    // plan for this geometry as well.
    if (debug_wanted()) {
      std::fprintf(stderr, "tlrt: conv: no cuDNN plan for pass %d (rank %u): %s\n",
                   static_cast<int>(pass), s.rank, e.what());
    }
    return ConvCudnnPlan{};
  }
}

void conv_cudnn_plan_destroy(ConvCudnnPlan& plan) {
  delete plan.graph;
  plan.graph = nullptr;
}

void conv_cudnn_execute(const ConvCudnnPlan& plan, cudnnContext* handle, const void* a,
                        const void* b, void* out, void* workspace, const char* op) {
  std::unordered_map<int64_t, void*> pack{
      {kUidA, const_cast<void*>(a)}, {kUidB, const_cast<void*>(b)}, {kUidOut, out}};
  fe::error_t status = plan.graph->graph->execute(handle, pack, workspace);
  if (status.is_bad()) {
    fail(ErrorKind::library, op, "cuDNN convolution failed: " + status.get_message());
  }
}

#else  // no cudnn-frontend: every plan is empty and the direct kernels run

struct ConvCudnnGraph {};

bool conv_cudnn_available() {
  return false;
}

ConvCudnnPlan conv_cudnn_plan_create(const ConvShape&, ConvPass, ConvPlanPolicy, cudnnContext*,
                                     const char*) {
  return ConvCudnnPlan{};
}

void conv_cudnn_plan_destroy(ConvCudnnPlan& plan) {
  plan.graph = nullptr;
}

void conv_cudnn_execute(const ConvCudnnPlan&, cudnnContext*, const void*, const void*, void*, void*,
                        const char* op) {
  fail(ErrorKind::unavailable, op, "this build of tlrt has no cudnn-frontend");
}

#endif

}  // namespace tlrt::kernels
