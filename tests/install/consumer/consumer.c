/* A program built against an installed tlrt (tests/install): the public header, one library, and
 * the Lean runtime the consumer brings (here the project's Lean runtime double). It asks the
 * library for its version string and runtime status and checks that the answer is the expected
 * library's: "tlrt <version> ..." from libtlrt.so, "unavailable" from libtlrt_unavailable.so. */
#include <stdio.h>
#include <string.h>
#include <tlrt/torchlean_abi.h>

int main(int argc, char** argv) {
  const char* expect = argc > 1 ? argv[1] : "tlrt";
  const uint32_t status = torchlean_cuda_runtime_status(0);
  lean_object* version = torchlean_libtorch_version(0);
  const char* text = lean_string_cstr(version);
  printf("consumer: torchlean_libtorch_version = \"%s\", torchlean_cuda_runtime_status = %u\n",
         text, (unsigned)status);
  const int ok = strncmp(text, expect, strlen(expect)) == 0;
  lean_dec(version);
  if (!ok) {
    fprintf(stderr, "consumer: expected a version string starting with \"%s\"\n", expect);
    return 1;
  }
  return 0;
}
