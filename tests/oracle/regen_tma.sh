#!/usr/bin/env bash
# Regenerate tests/data/cute_tma_oracle.txt from CuTe's TMA host code (copy_traits_sm90_tma.hpp) compiled on the host
# with g++: no GPU and no driver. The program defines cuTensorMapEncodeTiled / cuTensorMapEncodeIm2col itself (they
# print their arguments and return CUDA_SUCCESS). CuTe compiles the descriptor code only for CUDA >= 12
# (__CUDACC_VER_MAJOR__) and calls the driver through cutlass::call_cuTensorMapEncodeTiled unless
# CUTLASS_ENABLE_DIRECT_CUDA_DRIVER_CALL is set: both are defined below. Each case runs in a forked child (CuTe checks
# descriptors with assert()); an assert becomes "ASSERT <expression>". Each REJECT_CASES case is compiled alone and
# the first static_assert message g++ reports is stored. The im2col cases (make_im2col_tma_copy) print after the
# masks; the program defines cutlass::print(FastDivmod) (CuTe has none) for the im2col TMA tensor's extents.
#   tests/oracle/regen_tma.sh
# Env: CUTE_INCLUDE (dir holding cute/ and cutlass/), CUDA_HOME (for cuda.h and cccl), CXX (default g++).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
py="${PYTHON:-python3}"
cute_inc="${CUTE_INCLUDE:-$("$py" -c 'import cutlass_library, os; print(os.path.join(os.path.dirname(cutlass_library.__file__), "source", "include"))')}"
cuda_home="${CUDA_HOME:-/usr/local/cuda}"
cxx="${CXX:-g++}"
flags=(-std=c++17 -O0 -w -I"$cute_inc" -I"$cuda_home/include" -I"$cuda_home/include/cccl"
       -D__CUDACC_VER_MAJOR__=12 -D__CUDACC_VER_MINOR__=8 -DCUTLASS_ENABLE_DIRECT_CUDA_DRIVER_CALL)
build="$(mktemp -d)"
trap 'rm -rf "$build"' EXIT
"$py" "$here/gen_tma_cpp.py" "$build"  # generated sources: not kept
"$cxx" "${flags[@]}" "$build/main.cpp" -o "$build/main" &
n=$(wc -l < "$build/reject_names.txt")
for ((i = 0; i < n; i++)); do
  ( "$cxx" "${flags[@]}" -fsyntax-only "$build/reject_$i.cpp" > "$build/reject_$i.log" 2>&1 || true ) &
done
wait
{
  "$build/main" | sed -E "s/^.*Assertion \`(.*)' failed\.$/ASSERT \1/"
  i=0
  while IFS= read -r name; do
    echo ">>> reject $name"
    msg="$(grep -m1 -o 'static assertion failed.*' "$build/reject_$i.log" || true)"
    [ -n "$msg" ] || msg="$(grep -m1 -o 'error: .*' "$build/reject_$i.log" || true)"
    echo "${msg:-COMPILED}"
    i=$((i + 1))
  done < "$build/reject_names.txt"
} > "$root/tests/data/cute_tma_oracle.txt"
echo "wrote $(grep -c '^>>> ' "$root/tests/data/cute_tma_oracle.txt") blocks to tests/data/cute_tma_oracle.txt"
