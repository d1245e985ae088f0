"""``tcgen05.mma`` (kinds f16 and tf32, f32 accumulator) and ``tcgen05.commit`` as asynchronous operations.

An MMA is issued by one thread and queued; it runs at the next scheduling point (as TMA operations do), reading A
and B from shared memory at that moment. ``tcgen05.commit`` is queued after it and arrives on its mbarrier(s) once
every earlier MMA of the issuer has run.

Numerics (the order the emulator defines, since the hardware's is not documented): each product ``a*b`` is exact in
fp32 (bf16/fp16/tf32 significands are at most 11 bits); one instruction's K products (16 for f16/bf16, 8 for tf32)
are summed in float64 in increasing k, rounded once to fp32, then added to the fp32 accumulator (one more rounding),
or replace it when scale-C (enable_input_d) is false. kind::tf32 reads 32-bit elements and ignores their low 13
mantissa bits (truncation: the usual account of tensor cores fed raw fp32 data, not measured on Blackwell); a
TFLOAT32 TMA load has already rounded them.
``reference_mma`` is that order in plain numpy; with small integers every order is exact.
"""

from __future__ import annotations

import itertools

import numpy as np

from .errors import ExitError, IllegalInstruction
from .tmem import tmem_of
from .umma_desc import ELEM_BYTES, operand_bits

_ids = itertools.count(1)


def to_float(bits: np.ndarray, fmt: str) -> np.ndarray:
    """Operand bits as fp32 values: f16, bf16 exactly, tf32 truncated to 10 mantissa bits."""
    if fmt == "f16":
        return bits.astype(np.uint16).view(np.float16).astype(np.float32)
    if fmt == "bf16":
        return (bits.astype(np.uint32) << 16).view(np.float32)
    return (bits.astype(np.uint32) & np.uint32(0xFFFFE000)).view(np.float32)


def block_product(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """fp32 (M, N) = sum_k a[m, k] * b[n, k]: exact fp32 products summed in float64 in k order, rounded once."""
    s = np.zeros((a.shape[0], b.shape[0]), np.float64)
    for k in range(a.shape[1]):
        s += (a[:, k, None] * b[None, :, k]).astype(np.float64)
    return s.astype(np.float32)


def reference_mma(a: np.ndarray, b: np.ndarray, k_block: int, c: np.ndarray | None = None) -> np.ndarray:
    """What a chain of UMMAs computes for fp32 values ``a`` (M, K) and ``b`` (K, N): K-blocks of ``k_block`` in
    order, each ``block_product`` added to the fp32 accumulator (``c``, or none for the first block)."""
    acc = None if c is None else np.asarray(c, np.float32)
    bt = np.ascontiguousarray(np.asarray(b, np.float32).T)
    for k0 in range(0, a.shape[1], k_block):
        p = block_product(np.asarray(a[:, k0:k0 + k_block], np.float32), bt[:, k0:k0 + k_block])
        acc = p if acc is None else (acc + p).astype(np.float32)
    return acc


def d_placement(m: int, n: int, cta_group: int):
    """For each CTA of the group: (row slice of D, lanes (rows, n), columns (rows, n)) relative to D's address.

    1 SM: M=128 row m -> lane m; M=64 -> lane 32*(m//16) + m%16 (half sub-partitions). 2 SM: each CTA holds M/2
    rows; M=256 -> lane m; M=128 -> CuTe's "2x2" atom: row m, column j -> lane m + 64*(j // (N/2)), column j % (N/2).
    """
    cols = np.arange(n)[None, :]
    if cta_group == 1:
        r = np.arange(m)[:, None]
        lanes = r if m == 128 else 32 * (r // 16) + r % 16
        return [(slice(0, m), np.broadcast_to(lanes, (m, n)), np.broadcast_to(cols, (m, n)))]
    half = m // 2
    r = np.arange(half)[:, None]
    if m == 256:
        lanes, c = np.broadcast_to(r, (half, n)), np.broadcast_to(cols, (half, n))
    else:
        lanes, c = r + 64 * (cols // (n // 2)), np.broadcast_to(cols % (n // 2), (half, n))
    return [(slice(0, half), lanes, c), (slice(half, m), lanes, c)]


class MmaOp:
    """One ``tcgen05.mma``: D (TMEM) = A x B^T (+ D); operands decoded at issue, data read when it runs."""

    def __init__(self, issuer, ctas, kind, idesc, fmt_a, fmt_b, a_src, b_desc, d_lane, d_col, accumulate, what):
        self.id = next(_ids)
        self.issuer, self.ctas, self.kind, self.idesc = issuer, ctas, kind, idesc
        self.fmt_a, self.fmt_b, self.a_src, self.b_desc = fmt_a, fmt_b, a_src, b_desc
        self.d_lane, self.d_col, self.accumulate, self.what = d_lane, d_col, accumulate, what
        self.place = d_placement(idesc.m, idesc.n, len(ctas))
        self.done = False
        self.commit = None

    def mark_writes(self) -> None:
        for cta, (_, lanes, cols) in zip(self.ctas, self.place):
            t = tmem_of(cta)
            t.writer[self.d_lane + lanes, self.d_col + cols] = self.id
            t.ops[self.id] = self

    def _a(self, cta, rows):
        src = self.a_src
        eb = ELEM_BYTES[self.fmt_a]
        if isinstance(src, tuple):  # ("tmem", lane, column): _TS, A rows in lanes, K packed in 32-bit columns
            _, lane, col = src
            words = tmem_of(cta).cells[lane:lane + rows, col:col + 8]
            bits = words.view(np.uint16) if eb == 2 else words
            return to_float(bits, self.fmt_a)
        return to_float(operand_bits(cta.smem.data, src, self.idesc.a_major, rows, eb, self.what), self.fmt_a)

    def deliver(self, cluster) -> None:
        g = len(self.ctas)
        m, n = self.idesc.m, self.idesc.n
        for cta in self.ctas:
            if cta.state in ("exited", "aborted"):
                raise ExitError(f"{self.what} from {self.issuer.label} uses the shared memory / TMEM of "
                                f"{cta.label}, which already exited: wait for the MMA's commit before exiting")
        a = np.concatenate([self._a(c, m // g) for c in self.ctas])
        eb = ELEM_BYTES[self.fmt_b]
        b = np.concatenate([to_float(operand_bits(c.smem.data, self.b_desc, self.idesc.b_major, n // g, eb,
                                                  self.what), self.fmt_b) for c in self.ctas])
        if self.idesc.a_negate:
            a = -a
        if self.idesc.b_negate:
            b = -b
        d = block_product(a, b)
        for cta, (rows, lanes, cols) in zip(self.ctas, self.place):
            cells = tmem_of(cta).cells
            li, ci = self.d_lane + lanes, self.d_col + cols
            part = d[rows]
            if self.accumulate:
                part = (cells[li, ci].view(np.float32) + part).astype(np.float32)
            cells[li, ci] = part.view(np.uint32)
        self.done = True


class CommitOp:
    """``tcgen05.commit``: one arrive on the mbarrier at ``address`` of each target CTA once ``ops`` have run."""

    def __init__(self, issuer, ops, address, targets, what):
        self.issuer, self.ops, self.address, self.targets, self.what = issuer, ops, address, targets, what
        self.arrivals: dict[int, tuple] = {}  # rank -> (mbarrier, phase the arrival belongs to)
        self.delivered = False
        self.prev = getattr(issuer, "tcgen05_last_commit", None)  # a commit also covers every earlier MMA
        issuer.tcgen05_last_commit = self
        for op in ops:
            op.commit = self

    def deliver(self, cluster) -> None:
        for rank in self.targets:
            cta = cluster.ctas[rank]
            if cta.state in ("exited", "aborted"):
                raise ExitError(f"{self.what} from {self.issuer.label} arrives on the mbarrier @{self.address:#x} "
                                f"of {cta.label}, which already exited: every CTA of the mask must wait for it")
            b = cta.barriers.get(self.address)
            if b is None or not b.live:
                cta.lost.setdefault(self.address, []).append(
                    f"{self.what} from {self.issuer.label} reached @{self.address:#x} of rank {rank} before an "
                    "mbarrier was initialized there")
                continue
            if cta is not self.issuer:
                cluster.check_visible(self.issuer, b, self.what)
                b.remote_signaled = True
            self.arrivals[rank] = (b, b.phase)
            b.arrive(1)
        self.delivered = True


def check_observed(reader, op) -> str | None:
    """Why ``reader`` may not read what ``op`` wrote yet (None when it may). Its first commit or any later one of
    the issuing CTA will do: a ``tcgen05.commit`` tracks all prior tcgen05 operations of the thread."""
    c = op.commit
    if c is None:
        return "no tcgen05.commit (umma_arrive) covers it yet"
    why = _why_not_observed(reader, c)
    later = getattr(op.issuer, "tcgen05_last_commit", None)
    while why is not None and later is not None and later is not c:
        if _why_not_observed(reader, later) is None:
            return None
        later = later.prev
    return why


def _why_not_observed(reader, c) -> str | None:
    if not c.delivered:
        return "its tcgen05.commit has not arrived on the mbarrier yet"
    got = c.arrivals.get(reader.rank)
    if got is None:
        if reader.rank not in c.targets:
            return (f"its tcgen05.commit signals the mbarrier @{c.address:#x} of rank(s) {list(c.targets)} only, "
                    f"not this CTA (rank {reader.rank}): add it to the commit's multicast mask")
        return f"its commit reached no initialized mbarrier @{c.address:#x} in this CTA"
    b, phase = got
    if b.last_waited.get(reader.rank, -1) < phase:
        return (f"this CTA has not waited for phase {phase} of {b.name}, on which the commit arrives "
                "(wait_barrier on it first)")
    return None


def check_shape_vs_tmem(cta, lanes, cols, what):
    if int(np.max(lanes)) >= 128 or int(np.max(cols)) >= 512:
        raise IllegalInstruction(f"{what} in {cta.label}: the accumulator reaches past TMEM (lane "
                                 f"{int(np.max(lanes))}, column {int(np.max(cols))})")
