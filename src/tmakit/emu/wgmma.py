"""``wgmma.mma_async`` as an asynchronous operation of the emulator, and its numerics.

An MMA is issued by a warpgroup and queued; it runs at the next scheduling point (as TMA operations do), reading A
and B from shared memory (through the async proxy) at that moment, A from the fragment registers in the RS form.
The bytes it reads are remembered at issue and when it runs: shared operands that change in between, or before the
``wgmma.wait_group`` that covers the MMA, are a race (PTX: the operands must not be modified until the wait).

Numerics (the order the emulator defines; the hardware's is not documented): each product ``a*b`` is exact (float64
holds every product of these types); one instruction's K products (16 for f16/bf16, 8 for tf32, 32 for fp8) are
summed in float64 in increasing k, rounded once to fp32, then added to the fp32 accumulator (one more rounding), or
replace it when scale-d is 0. An f16 accumulator gets ``fp16(fp32(acc) + sum)`` (the fp32 add rounded once more to
f16). imm-scale-a/b = -1 negate the operand (exact). tf32 ignores the low 13 mantissa bits of its 32-bit elements
(truncation, the usual account of tensor cores fed raw fp32; a TFLOAT32 TMA load has rounded them already).

**FP8 is not bit-exact**: Hopper's tensor cores accumulate e4m3/e5m2 products with reduced precision (fewer
mantissa bits than fp32 are kept in the sum, which is why FP8 GEMMs promote partial sums to fp32 registers every few
MMAs); the emulator's exact sum is an upper bound on the hardware's accuracy, not its bits. With small integers
every order is exact, which is what the tests use to compare with numpy.
"""

from __future__ import annotations

import itertools

import numpy as np

from .errors import ExitError
from .wgmma_desc import bytes_as_elements
from .wgmma_types import to_float

_ids = itertools.count(1)


def block_sum(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """float64 (M, N) = sum_k a[m, k] * b[n, k], exact products added in float64 in increasing k."""
    a64, b64 = np.asarray(a, np.float64), np.asarray(b, np.float64)
    s = np.zeros((a64.shape[0], b64.shape[0]), np.float64)
    for k in range(a64.shape[1]):
        s += a64[:, k, None] * b64[None, :, k]
    return s


def accumulate(acc: np.ndarray, s: np.ndarray, scale_d: bool) -> np.ndarray:
    """One instruction's sum ``s`` (float64) rounded to fp32, added to (or replacing) ``acc`` of its dtype."""
    p = s.astype(np.float32)
    if acc.dtype == np.float16:
        return ((acc.astype(np.float32) + p) if scale_d else p).astype(np.float16)
    return (acc + p).astype(np.float32) if scale_d else p


def reference_wgmma(a: np.ndarray, b: np.ndarray, k_block: int, c: np.ndarray | None = None,
                    dtype: str = "f32") -> np.ndarray:
    """What a chain of wgmmas computes for values ``a`` (M, K) and ``b`` (K, N): K-blocks of ``k_block`` in
    order, each ``block_sum`` added to the accumulator (``c``, or none for the first block)."""
    acc = None if c is None else np.asarray(c, np.float16 if dtype == "f16" else np.float32)
    bt = np.asarray(b).T
    for k0 in range(0, a.shape[1], k_block):
        s = block_sum(a[:, k0:k0 + k_block], bt[:, k0:k0 + k_block])
        acc = accumulate(acc if acc is not None else np.zeros(s.shape, np.float16 if dtype == "f16" else
                                                                np.float32), s, acc is not None)
    return acc


class WgmmaOp:
    """One ``wgmma.mma_async``: D (registers) = A x B^T (+ D); ``a`` is a FragmentA or the (64, K, bytes) shared
    addresses of A, ``b_addr`` those of B (N, K, bytes)."""

    def __init__(self, state, acc, a, b_addr, atype, btype, scale_d, neg_a, neg_b, what):
        self.id = next(_ids)
        self.state, self.issuer, self.acc, self.a, self.b_addr = state, state.cta, acc, a, b_addr
        self.atype, self.btype, self.scale_d, self.neg_a, self.neg_b, self.what = (atype, btype, scale_d, neg_a,
                                                                                   neg_b, what)
        self.shape = (acc.n, acc.dtype, atype.k)
        self.fence_epoch = state.fences
        self.group: int | None = None
        self.done = self.waited = False
        smem = self.issuer.smem.data
        self.seen = [smem[x].copy() for x in self.smem_addresses()]  # bytes at issue, then as read when run

    def smem_addresses(self) -> list[np.ndarray]:
        return [self.b_addr] if not isinstance(self.a, np.ndarray) else [self.a, self.b_addr]

    def _changed(self, when: str) -> None:
        smem = self.issuer.smem.data
        now = [smem[x] for x in self.smem_addresses()]
        for old, new, x in zip(self.seen, now, self.smem_addresses()):
            bad = np.flatnonzero(old.reshape(-1) != new.reshape(-1))
            if bad.size:
                self.state.report(f"{self.what} from {self.state.label}: shared byte {int(x.reshape(-1)[bad[0]]):#x} "
                                  f"of its operands changed {when} (PTX: the shared operands must not be modified "
                                  "until the wgmma.wait_group that covers the MMA): release the stage only after "
                                  "wgmma_wait_group")
                break
        self.seen = [x.copy() for x in now]

    def deliver(self, cluster) -> None:
        if self.issuer.state in ("exited", "aborted"):
            cluster.launch.report(ExitError(f"{self.state.label} exited with {self.what} in flight: "
                                            "wgmma_commit_group + wgmma_wait_group(0) before the kernel ends"))
            self.done = True
            return
        self._changed("between its issue and its execution")
        eb_a, eb_b = self.atype.elem_bytes, self.btype.elem_bytes
        if isinstance(self.a, np.ndarray):
            a = to_float(bytes_as_elements(self.seen[0], eb_a), self.atype.name)
        else:
            a = to_float(self.a.bits, self.atype.name)
        b = to_float(bytes_as_elements(self.seen[-1], eb_b), self.btype.name)
        s = block_sum(-a if self.neg_a else a, -b if self.neg_b else b)
        self.acc.values[...] = accumulate(self.acc.values, s, self.scale_d)
        self.done = True

    def retire(self) -> None:
        """A ``wgmma.wait_group`` covered this MMA: its registers and shared operands are free again."""
        if not self.issuer.state == "exited":
            self._changed("after it was issued, before the wgmma.wait_group that covers it")
        self.waited = True

