#!/usr/bin/env bash
# CI's style check: every tracked C++ file is as clang-format (the repository's .clang-format,
# Google style) writes it. Lists the files that differ and exits 1; `cmake/check_format.sh --fix`
# rewrites them instead.
set -euo pipefail
cd "$(dirname "$0")/.."
cmake/install_packages.sh clang-format
mapfile -t files < <(git ls-files '*.cc' '*.h' '*.cu')
if [[ ${1:-} == --fix ]]; then
  clang-format -i "${files[@]}"
  exit 0
fi
differ=()
for f in "${files[@]}"; do
  clang-format --dry-run -Werror "$f" >/dev/null 2>&1 || differ+=("$f")
done
if ((${#differ[@]})); then
  echo "check_format: ${#differ[@]} files differ from clang-format (cmake/check_format.sh --fix):"
  printf '  %s\n' "${differ[@]}"
  exit 1
fi
echo "check_format: ${#files[@]} files as clang-format writes them"
