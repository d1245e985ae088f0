#!/usr/bin/env bash
# Regenerate tests/data/cute_sm100_oracle.txt from CuTe's SM100 headers (host-only C++; g++ and the CUDA headers,
# no GPU). CuTe's host build prints "ERROR: cast_smem_ptr_to_uint ..." for every smem descriptor (it cannot map a
# host pointer to a shared-memory address, and uses 0): those lines are dropped; the tests use smem address 0 too.
#   tests/oracle/regen_sm100.sh
# Env: CUTE_INCLUDE (dir holding cute/), CUDA_HOME (for cuda_runtime_api.h and cccl), CXX (default g++).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
py="${PYTHON:-python3}"
cute_inc="${CUTE_INCLUDE:-$("$py" -c 'import cutlass_library, os; print(os.path.join(os.path.dirname(cutlass_library.__file__), "source", "include"))')}"
cuda_home="${CUDA_HOME:-/usr/local/cuda}"
build="$(mktemp -d)"
trap 'rm -rf "$build"' EXIT
"$py" "$here/gen_sm100_cpp.py" "$build/cute_sm100_oracle.cpp"  # generated, ~0.5 MB: not kept
"${CXX:-g++}" -std=c++17 -O0 -w -I"$cute_inc" -I"$cuda_home/include" -I"$cuda_home/include/cccl" \
  "$build/cute_sm100_oracle.cpp" -o "$build/oracle"
"$build/oracle" | grep -v '^ERROR: cast_smem_ptr_to_uint' > "$root/tests/data/cute_sm100_oracle.txt"
echo "wrote $(grep -c '^>>> ' "$root/tests/data/cute_sm100_oracle.txt") cases to tests/data/cute_sm100_oracle.txt"
