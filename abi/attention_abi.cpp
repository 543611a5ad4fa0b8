// The legacy attention pair (symbols-ops.tsv, legacy rows: an earlier LibTorch revision's native
// attention with a context saved on its output). Pure symbols with `Except String` results: every
// failure (bad flags or scale, sizes, released or encoded buffers, mixed dtypes, out of memory,
// device errors) is returned as `Except.error` with the message; a non-buffer object where a buffer
// is expected panics.
#include "abi/boundary.h"
#include "runtime/attention_dispatch.h"

using namespace tlrt::abi;

extern "C" {

// Q, K, V, mask borrowed (mask read only when hasMask = 1); result owned: `Except String Buffer`,
// a fresh (batch, n, d) buffer carrying the attention context for torchlean_libtorch_attention_bwd.
lean_obj_res torchlean_libtorch_attention_fwd(b_lean_obj_arg Q, b_lean_obj_arg K, b_lean_obj_arg V,
                                              b_lean_obj_arg mask, uint32_t hasMask, uint32_t batch,
                                              uint32_t n, uint32_t d, double scale) {
  constexpr const char* op = "attention_fwd";
  return except_call([&] {
    const tlrt::Buffer& q = *record_of(Q, op)->buffer;
    const tlrt::Buffer& k = *record_of(K, op)->buffer;
    const tlrt::Buffer& v = *record_of(V, op)->buffer;
    const tlrt::Buffer* m = hasMask == 1 ? record_of(mask, op)->buffer.get() : nullptr;
    return box(tlrt::attention_fwd(q, k, v, m, hasMask, batch, n, d, scale, op));
  });
}

// out, dOut borrowed; result owned: `Except String (Buffer × Buffer × Buffer)`, the fresh triple
// (dQ, (dK, dV)) from the context on out.
lean_obj_res torchlean_libtorch_attention_bwd(b_lean_obj_arg out, b_lean_obj_arg dOut) {
  constexpr const char* op = "attention_bwd";
  return except_call([&] {
    const tlrt::Buffer& forward = *record_of(out, op)->buffer;
    const tlrt::Buffer& cotangent = *record_of(dOut, op)->buffer;
    tlrt::AttentionGrads g = tlrt::attention_bwd(forward, cotangent, op);
    return box_tuple(std::move(g.dq), std::move(g.dk), std::move(g.dv));
  });
}

}  // extern "C"
