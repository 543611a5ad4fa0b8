#include "runtime/counters.h"

namespace tlrt {

OwnershipCounter& payload_counter() {
  static OwnershipCounter counter;
  return counter;
}

OwnershipCounter& wrapper_counter() {
  static OwnershipCounter counter;
  return counter;
}

}  // namespace tlrt
