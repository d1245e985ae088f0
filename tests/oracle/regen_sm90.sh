#!/usr/bin/env bash
# Regenerate tests/data/cute_sm90_oracle.txt from CuTe's SM90 GMMA headers (host-only C++; g++ and the CUDA headers,
# no GPU). Two programs: main (built with CUTE_SM90_EXTENDED_MMA_SHAPES_ENABLED, so every N has its MMA_Traits) and
# base (the op selectors without that flag); then each REJECT_CASES expression is compiled alone and the first
# static_assert message g++ reports is stored. CuTe's host build prints "ERROR: cast_smem_ptr_to_uint ..." for every
# smem descriptor (it reads the address as 0): those lines are dropped.
#   tests/oracle/regen_sm90.sh
# Env: CUTE_INCLUDE (dir holding cute/ and cutlass/), CUDA_HOME (for cuda headers and cccl), CXX (default g++).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
py="${PYTHON:-python3}"
cute_inc="${CUTE_INCLUDE:-$("$py" -c 'import cutlass_library, os; print(os.path.join(os.path.dirname(cutlass_library.__file__), "source", "include"))')}"
cuda_home="${CUDA_HOME:-/usr/local/cuda}"
cxx="${CXX:-g++}"
flags=(-std=c++17 -O0 -w -I"$cute_inc" -I"$cuda_home/include" -I"$cuda_home/include/cccl")
build="$(mktemp -d)"
trap 'rm -rf "$build"' EXIT
"$py" "$here/gen_sm90_cpp.py" "$build"  # generated sources: not kept
"$cxx" "${flags[@]}" -DCUTE_SM90_EXTENDED_MMA_SHAPES_ENABLED "$build/main.cpp" -o "$build/main" &
"$cxx" "${flags[@]}" "$build/base.cpp" -o "$build/base" &
n=$(wc -l < "$build/reject_names.txt")
for ((i = 0; i < n; i++)); do
  ( "$cxx" "${flags[@]}" -DCUTE_SM90_EXTENDED_MMA_SHAPES_ENABLED -fsyntax-only "$build/reject_$i.cpp" \
      > "$build/reject_$i.log" 2>&1 || true ) &
done
wait
{
  "$build/main"
  "$build/base"
  i=0
  while IFS= read -r name; do
    echo ">>> reject $name"
    msg="$(grep -m1 -o 'static assertion failed: .*' "$build/reject_$i.log" || true)"
    [ -n "$msg" ] || msg="$(grep -m1 -o 'error: .*' "$build/reject_$i.log" || true)"  # a broken snippet shows
    echo "${msg:-COMPILED}"
    i=$((i + 1))
  done < "$build/reject_names.txt"
} | grep -v '^ERROR: cast_smem_ptr_to_uint' > "$root/tests/data/cute_sm90_oracle.txt"
echo "wrote $(grep -c '^>>> ' "$root/tests/data/cute_sm90_oracle.txt") blocks to tests/data/cute_sm90_oracle.txt"
