// Backend dispatch for the elementwise family: validates the operands (live, native, equal sizes,
// dtypes and backends), rounds the host scalars once to the dtype, allocates fresh results and
// runs the operation on the operands' backend.
#pragma once

#include <memory>
#include <vector>

#include "kernels/elementwise/elementwise.h"
#include "runtime/buffer.h"

namespace tlrt {

// The op identifiers of ops/elementwise_ops.def, for the layers above the runtime.
using kernels::elementwise_info;
using kernels::elementwise_ops;
using kernels::ElementwiseInfo;
using kernels::ElementwiseOp;
using kernels::kMaxElementwiseInputs;

// inputs: elementwise_info(op).inputs buffers; scalars: elementwise_info(op).scalars host values.
// Returns elementwise_info(op).outputs fresh buffers. Throws tlrt::Error naming the op: released
// operands (released_buffer), size / dtype / backend mismatches (invalid_argument), out of memory.
std::vector<std::unique_ptr<Buffer>> run_elementwise(ElementwiseOp op, const Buffer* const* inputs,
                                                     const double* scalars);

}  // namespace tlrt
