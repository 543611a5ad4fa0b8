#!/usr/bin/env bash
# Checks that every tracked C++ and CUDA source (*.cpp, *.h, *.cu, *.cuh) is formatted as
# .clang-format says, with the clang-format of Debian 12 (major version 14), and names each file
# that is not. Exit status: 0 formatted, 1 a file is not, 77 (a visible skip) without git, a
# git checkout, or clang-format 14 (other versions format some constructs differently).
#   scripts/format-check.sh [SOURCE_DIR]
set -u
cd "${1:-$(dirname "$0")/..}" || exit 2
if ! command -v clang-format >/dev/null; then
  echo "format-check: skipped: no clang-format (scripts/install-deps.sh installs it)"
  exit 77
fi
major=$(clang-format --version | sed -n 's/.*clang-format version \([0-9]*\).*/\1/p')
if [ "$major" != 14 ]; then
  echo "format-check: skipped: clang-format ${major:-of unknown version}; the tree is formatted with 14"
  exit 77
fi
if ! files=$(git ls-files '*.cpp' '*.h' '*.cu' '*.cuh' 2>/dev/null) || [ -z "$files" ]; then
  echo "format-check: skipped: not a git checkout (no list of tracked sources)"
  exit 77
fi
bad=()
while IFS= read -r f; do
  [ -f "$f" ] || continue
  clang-format --dry-run -Werror "$f" >/dev/null 2>&1 || bad+=("$f")
done <<<"$files"
count=$(printf '%s\n' "$files" | wc -l)
if [ ${#bad[@]} -gt 0 ]; then
  echo "format-check: ${#bad[@]} of $count files not formatted (clang-format -i FILE fixes one):"
  printf '  %s\n' "${bad[@]}"
  exit 1
fi
echo "format-check: $count files formatted"
