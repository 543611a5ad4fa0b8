// Reference backend of the encoded byte copies (kernels/encoded/encoded.h): memcpy, guarded for
// empty parts, whose pointers may be null.
#include <cstring>

#include "kernels/encoded/encoded.h"

namespace tlrt::kernels {

void encoded_concat_ref(const void* a, uint64_t a_bytes, const void* b, uint64_t b_bytes,
                        void* out) {
  auto* dst = static_cast<unsigned char*>(out);
  if (a_bytes != 0) std::memcpy(dst, a, a_bytes);
  if (b_bytes != 0) std::memcpy(dst + a_bytes, b, b_bytes);
}

void encoded_slice_ref(const void* x, uint64_t offset, uint64_t bytes, void* out) {
  if (bytes != 0) std::memcpy(out, static_cast<const unsigned char*>(x) + offset, bytes);
}

}  // namespace tlrt::kernels
