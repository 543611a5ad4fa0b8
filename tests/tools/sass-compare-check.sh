#!/usr/bin/env bash
# Checks scripts/sass-compare.py on three hand-made cubins: a kernel moved from an anonymous
# namespace into a *_detail namespace of another file compares equal; a changed constant and an
# added kernel are reported and fail the comparison. Skips (77) without nvcc or without an nvdisasm
# the script can find or download. Usage: sass-compare-check.sh REPO_ROOT
set -u
root=${1:?usage: sass-compare-check.sh REPO_ROOT}
script="$root/scripts/sass-compare.py"
nvcc=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
[ -x "$nvcc" ] || { echo "sass-compare-check: SKIPPED: no nvcc"; exit 77; }
if ! python3 "$script" --which; then
  echo "sass-compare-check: SKIPPED: no nvdisasm to be had"
  exit 77
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cat >"$work/before.cu" <<'CU'
namespace tlrt::kernels {
namespace {
__device__ __forceinline__ float twice(float v) { return v + v; }
}  // namespace
namespace {
__global__ void scale_kernel(const float* x, float* y, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = twice(x[i]) * 3.0f;
}
}  // namespace
void launch(const float* x, float* y, int n) { scale_kernel<<<(n + 255) / 256, 256>>>(x, y, n); }
}  // namespace tlrt::kernels
CU
# The same kernel, its helper moved into a detail namespace, in a file of another name.
cat >"$work/moved.cu" <<'CU'
namespace tlrt::kernels::scale_detail {
__device__ __forceinline__ float twice(float v) { return v + v; }
}  // namespace tlrt::kernels::scale_detail
namespace tlrt::kernels {
namespace {
using namespace scale_detail;
__global__ void scale_kernel(const float* x, float* y, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = twice(x[i]) * 3.0f;
}
}  // namespace
void launch(const float* x, float* y, int n) { scale_kernel<<<(n + 255) / 256, 256>>>(x, y, n); }
}  // namespace tlrt::kernels
CU
sed 's/3.0f/5.0f/' "$work/before.cu" >"$work/changed.cu"
sed 's|^void launch|__global__ void extra_kernel(float* y) { y[0] = 1.0f; }\nvoid launch|' "$work/before.cu" \
  >"$work/added.cu"
# A kernel with 16-byte aligned dynamic shared memory, once in the same file as scale_kernel and
# once in a file of its own: a module holding such a kernel gives every kernel of it a static
# shared-memory section (1 KiB for one that declares none), so scale_kernel's layout differs while
# its machine code does not.
staged='__global__ void staged_kernel(float* y) { extern __shared__ __align__(16) float s[]; s[threadIdx.x] = y[threadIdx.x]; __syncthreads(); y[threadIdx.x] = s[threadIdx.x ^ 1]; }'
echo "$staged" >"$work/staged.cu"
{ cat "$work/before.cu"; echo "$staged"; } >"$work/together.cu"
for f in before moved changed added staged together; do
  "$nvcc" -arch=sm_90 -cubin "$work/$f.cu" -o "$work/$f.cubin" ||
    { echo "sass-compare-check: cannot compile $f.cu"; exit 1; }
done
fail() { echo "sass-compare-check: FAILED: $*"; exit 1; }
out=$(python3 "$script" --cubins "$work/before.cubin" "$work/moved.cubin" 2>&1); rc=$?
echo "$out"
[ $rc -eq 0 ] || fail "a moved kernel compares unequal (rc $rc)"
echo "$out" | grep -q "1 kernels before, 1 after; 1 with the same machine code, 1 the same in every part" ||
  fail "the moved kernel is not counted as the same"
out=$(python3 "$script" --cubins "$work/before.cubin" "$work/changed.cubin" 2>&1); rc=$?
echo "$out"
[ $rc -eq 1 ] || fail "a changed constant gives rc $rc, not 1"
echo "$out" | grep -q "differs: scale_kernel(float const\*, float\*, int)" ||
  fail "the changed kernel is not named"
out=$(python3 "$script" --cubins "$work/before.cubin" "$work/added.cubin" 2>&1); rc=$?
echo "$out"
[ $rc -eq 1 ] || fail "an added kernel gives rc $rc, not 1"
echo "$out" | grep -q "only after: extra_kernel(float\*)" || fail "the added kernel is not named"
out=$(python3 "$script" --cubins "$work/together.cubin" "$work/before.cubin $work/staged.cubin" 2>&1); rc=$?
echo "$out"
[ $rc -eq 1 ] || fail "a changed shared-memory layout gives rc $rc, not 1"
echo "$out" | grep -q "differs: scale_kernel(float const\*, float\*, int) (static shared memory align 16, 1024 bytes -> align 0, 0 bytes)" ||
  fail "the shared-memory layout's change is not named with its sizes"
echo "$out" | grep -q "2 kernels before, 2 after; 2 with the same machine code, 1 the same in every part" ||
  fail "the summary does not separate machine code from the other parts"
python3 "$script" --code-only --cubins "$work/together.cubin" "$work/before.cubin $work/staged.cubin" >/dev/null 2>&1 ||
  fail "--code-only fails on a layout change alone"
python3 "$script" --code-only --cubins "$work/before.cubin" "$work/changed.cubin" >/dev/null 2>&1 &&
  fail "--code-only passes a changed kernel"
echo "sass-compare-check: every promise holds"
