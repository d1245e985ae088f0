#!/usr/bin/env bash
# Regenerate tests/data/cute_oracle.txt from CuTe itself (host-only C++; needs g++ or nvcc, not a GPU).
#   tests/oracle/regen.sh            # uses the CuTe headers of the installed nvidia-cutlass wheel
# Env: CUTE_INCLUDE (dir holding cute/), CUDA_HOME (for cuda_runtime_api.h and cccl), CXX (default g++).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
py="${PYTHON:-python3}"
cute_inc="${CUTE_INCLUDE:-$("$py" -c 'import cutlass_library, os; print(os.path.join(os.path.dirname(cutlass_library.__file__), "source", "include"))')}"
cuda_home="${CUDA_HOME:-$(dirname "$(dirname "$(readlink -f "$(command -v nvcc)")")")}"
[ -f "$cuda_home/include/cuda_runtime_api.h" ] || cuda_home=/usr/local/cuda
flags=(-std=c++17 -O0 -w -I"$cute_inc" -I"$cuda_home/include" -I"$cuda_home/include/cccl")
if [ "${CXX:-g++}" = nvcc ]; then
  compiler=(nvcc -x cu "${flags[@]}")
else
  compiler=("${CXX:-g++}" "${flags[@]}")
fi
# Cases CuTe rejects at compile time are dropped from the build and recorded as such (run_oracle.py).
"$py" "$here/run_oracle.py" "$here/cute_oracle.cpp" "$root/tests/data/cute_oracle.txt" -- "${compiler[@]}"
echo "wrote $(grep -c '^>>> ' "$root/tests/data/cute_oracle.txt") cases to tests/data/cute_oracle.txt"
