// Inputs, host scalars and an independent oracle for the elementwise parity cases: used by
// tlrt-parity (tools/parity/elementwise_cases.cpp) and the GPU parity test
// (tests/elementwise_gpu_test.cpp), which link them as the tlrt_parity_cases library.
// Everything is derived from the op list (ops/elementwise_ops.def): an op that gains a row is
// covered with the default distribution and the scalar sets of its signature; the per-op choices
// below only sharpen the inputs where an op has edges of its own (exp overflow, log of negatives,
// ties of max/min, integers for floor, cancellation for axpy).
#pragma once

#include <cstdint>
#include <vector>

#include "kernels/elementwise/elementwise.h"

namespace tlrt::parity {

using kernels::ElementwiseOp;

// The special values of T placed at the start of every input: NaNs of both signs, signed zeros
// and infinities, subnormal and normal extremes, integers, halves and their neighbours (floor and
// rounding ties), and the overflow / underflow thresholds of exp.
template <class T>
std::vector<T> special_values();

// Leading elements of each input that hold special values: every special value once for one
// input, every ordered pair of the first two inputs for more (later inputs cycle through the
// list with a stride so that their values meet varied pairs).
uint64_t special_block(ElementwiseOp op, bool f32);

// The host scalar sets an op runs with, as the ABI receives them (doubles, rounded by the
// runtime). Ops without scalars get one empty set.
std::vector<std::vector<double>> scalar_sets(ElementwiseOp op);

// Writes elements [begin, end) of every input of `op` (in[k] points at the start of input k).
// Elements below special_block() are the special block; the rest are drawn from the op's
// distribution by a counter-based generator of (key, input, element), so any range can be filled
// independently and the same key reproduces the same inputs. `scalars` is the op's first scalar
// set (axpy draws cancelling pairs for its coefficient).
template <class T>
void fill_inputs(ElementwiseOp op, uint64_t key, const double* scalars, T* const* in,
                 uint64_t begin, uint64_t end);

// Whether an independent oracle exists for op (the toleranced ops: their transcendental stages
// are evaluated in a wide format, oracle_name(), every other stage in T exactly as the contract
// stages it), so that a run without a GPU still measures the reference backend.
bool has_oracle(ElementwiseOp op);
const char* oracle_name();    // e.g. "binary128 (libquadmath)"
const char* oracle_format();  // e.g. "binary128"
// Element i of op's outputs from element i of its inputs (`in[k]`), with `scalars` already
// rounded to T. Only for ops with has_oracle().
template <class T>
void oracle(ElementwiseOp op, const T* in, const T* scalars, T* out);

}  // namespace tlrt::parity
