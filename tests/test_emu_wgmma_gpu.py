"""Differential test on a Hopper GPU (marked ``gpu``; skipped without one): a tiny real ``wgmma.mma_async``
m64n64k16.f32.bf16.bf16 kernel and the emulator read the same shared-memory bytes through the same descriptors;
every thread's 32 accumulator registers must agree.

The host builds one 64 KiB shared image (A at 0x0, B at 0x8000, 128-byte swizzled as TMA writes them) and the
descriptors relative to shared address 0. The kernel copies the image to a 1024-byte aligned shared buffer, adds the
buffer's address to the start-address fields (gemm.cu's ``desc_plus``), issues 4 wgmmas (K = 64, scale-d = 0 for the
first) and writes ``d[i]`` of thread ``t`` to ``out[t, i]``. Small integers are exact in any summation order, so
those cases must match bit for bit; random bf16 values must agree to fp32 rounding (the hardware's order is not
documented). Compiled with NVRTC into a temporary kernel cache.
"""

from __future__ import annotations

import ctypes

import numpy as np
import pytest

from test_emu_wgmma_programs import A_AT, B_AT, encode
from tmakit import emu
from tmakit.emu.wgmma_desc import place_operand

pytestmark = pytest.mark.gpu

REGS = ", ".join(f"%{i}" for i in range(32))
OUTS = ", ".join(f'"+f"(d[{i}])' for i in range(32))


def _mma(trans_b: int) -> str:
    return (f'asm volatile("{{\\n.reg .pred p;\\nsetp.ne.b32 p, %34, 0;\\n"\n'
            f'  "wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 {{{REGS}}}, %32, %33, p, 1, 1, 0, "\n'
            f'  "{trans_b};\\n}}\\n"\n'
            f'  : {OUTS}\n  : "l"(da), "l"(db), "r"(scale_d));')


SOURCE = f"""
extern "C" __global__ void __launch_bounds__(128) wgmma_probe(const unsigned char* img, int img_bytes,
    const unsigned long long* descs, int trans_b, float* out) {{
  extern __shared__ __align__(16) unsigned char raw[];
  const unsigned base = (unsigned)__cvta_generic_to_shared(raw);
  const unsigned pad = (1024u - (base & 1023u)) & 1023u;
  unsigned char* smem = raw + pad;
  for (int i = threadIdx.x; i < img_bytes; i += blockDim.x) smem[i] = img[i];
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
  __syncthreads();
  const unsigned long long s = (base + pad) >> 4;
  float d[32];
#pragma unroll
  for (int i = 0; i < 32; ++i) d[i] = 0.f;
  asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
#pragma unroll
  for (int k = 0; k < 4; ++k) {{
    const unsigned long long da = descs[k] + s, db = descs[4 + k] + s;
    const int scale_d = k > 0;
    if (trans_b) {{ {_mma(1)} }} else {{ {_mma(0)} }}
  }}
  asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
  asm volatile("wgmma.wait_group.sync.aligned 0;" ::: "memory");
#pragma unroll
  for (int i = 0; i < 32; ++i) out[threadIdx.x * 32 + i] = d[i];
}}
"""


def descriptors(trans_b: int) -> list[int]:
    """A: K-major SW128, K-block j 32 bytes into the row. B: the same, or MN-major SW128 (K-block j 16 K rows =
    2048 bytes further; the 64 N of bf16 fill one 128-byte span)."""
    da = [emu.encode_wgmma_desc(A_AT + 32 * j, 16, 1024, 128) for j in range(4)]
    if trans_b:
        db = [emu.encode_wgmma_desc(B_AT + 2048 * j, 8192, 1024, 128) for j in range(4)]
    else:
        db = [emu.encode_wgmma_desc(B_AT + 32 * j, 16, 1024, 128) for j in range(4)]
    return da + db


def image(a_bits: np.ndarray, b_bits: np.ndarray, descs: list[int], trans_b: int) -> np.ndarray:
    img = np.zeros(0x10000, np.uint8)
    for j in range(4):
        place_operand(img, descs[j], 0, a_bits[:, 16 * j:16 * j + 16])
        place_operand(img, descs[4 + j], trans_b, b_bits[:, 16 * j:16 * j + 16])
    return img


def emulated(img: np.ndarray, descs: list[int], trans_b: int) -> np.ndarray:
    """The same program on the emulator: (128 threads, 32 registers)."""
    out = np.zeros((128, 32), np.float32)

    def kernel(out):
        s = emu.shared_array(img.size, np.uint8, align=1024)
        s[:] = img
        emu.fence_proxy_async()
        acc = emu.wgmma_accumulator(64)
        acc.fill(0)
        emu.wgmma_fence()
        for k in range(4):
            emu.wgmma_mma_async(acc, descs[k], descs[4 + k], k > 0, imm_trans_b=trans_b)
        emu.wgmma_commit_group()
        emu.wgmma_wait_group(0)
        for t in range(128):
            out[t] = acc.fragment(t)

    emu.launch(kernel, (1,), out)
    return out


@pytest.fixture(scope="module")
def probe(tmp_path_factory):
    from tmakit import cuda

    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("TMAKIT_CACHE_DIR", str(tmp_path_factory.mktemp("wgmma-cache")))
        cuda.ensure_context()
        k = cuda.kernel(SOURCE, "wgmma_probe")

    def run(img: np.ndarray, descs: list[int], trans_b: int) -> np.ndarray:
        d_img = cuda.DeviceBuffer.from_bytes(img)
        d_desc = cuda.DeviceBuffer.from_bytes(np.array(descs, np.uint64))
        d_out = cuda.DeviceBuffer(128 * 32 * 4)
        k(1, 128, d_img, ctypes.c_int32(img.size), d_desc, ctypes.c_int32(trans_b), d_out, smem=img.size + 1024)
        cuda.synchronize()
        return np.frombuffer(d_out.download(), np.float32).reshape(128, 32)

    return run


def operands(kind: str, seed: int):
    rng = np.random.default_rng(seed)
    if kind == "ints":
        return encode(rng.integers(-4, 5, (64, 64)), "bf16"), encode(rng.integers(-4, 5, (64, 64)), "bf16")
    a, b = (rng.uniform(-1, 1, (64, 64)).astype(np.float32) for _ in range(2))
    return (a.view(np.uint32) >> 16).astype(np.uint16), (b.view(np.uint32) >> 16).astype(np.uint16)


@pytest.mark.parametrize("trans_b", [0, 1])
@pytest.mark.parametrize("kind", ["ints", "random"])
def test_wgmma_on_the_gpu_matches_the_emulator(probe, kind, trans_b):
    a_bits, b_bits = operands(kind, 3 + trans_b)
    descs = descriptors(trans_b)
    img = image(a_bits, b_bits, descs, trans_b)
    gpu, cpu = probe(img, descs, trans_b), emulated(img, descs, trans_b)
    av = (a_bits.astype(np.uint32) << 16).view(np.float32).astype(np.float64)
    bv = (b_bits.astype(np.uint32) << 16).view(np.float32).astype(np.float64)
    want = np.zeros((128, 32))
    for t in range(128):
        r, c = emu.accumulator_coords(64, t)
        want[t] = (av @ bv.T)[r, c]
    if kind == "ints":
        assert np.array_equal(gpu, cpu) and np.array_equal(cpu, want)
    else:
        np.testing.assert_allclose(gpu, cpu, rtol=2e-6, atol=2e-6)
        np.testing.assert_allclose(cpu, want, rtol=1e-5, atol=1e-5)
        same = int(np.sum(gpu.view(np.uint32) == cpu.view(np.uint32)))
        print(f"random bf16, trans_b={trans_b}: {same} of {gpu.size} registers bit-equal to the emulator's order")
