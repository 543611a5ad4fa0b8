#include "common/report_file.h"

#include <cerrno>
#include <cstring>

namespace tlrt {

bool close_report(std::FILE* f, const std::string& path, const char* tool) {
  int reason = errno;  // the failed open's
  bool ok = f != nullptr;
  if (f != nullptr) {
    errno = 0;
    ok = std::ferror(f) == 0;
    ok = std::fclose(f) == 0 && ok;
    reason = errno != 0 ? errno : EIO;
  }
  if (!ok)
    std::fprintf(stderr, "%s: cannot write %s: %s\n", tool, path.c_str(), std::strerror(reason));
  return ok;
}

}  // namespace tlrt
