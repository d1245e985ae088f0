"""``grouped_mm`` along K (an MoE layer's weight gradient) on the emulator, small shapes:
``dW[g] = X[tokens of g]^T @ dY[tokens of g]`` for the experts' token ranges ``[ends[g-1], ends[g])``.

It shows the one descriptor edit the GPU kernel makes per group (docs/GROUPED.md, "Along K"; gemm.cu's ``KG``):

1. A = X^T is read M-major through a map {M, T} (M innermost) over all T tokens, B = dY through a map {N, T}. A
   group's K slabs start at its first token (TMA coordinates need no alignment), so its last slab runs into the next
   group's tokens.
2. So at each group change the producer copies both templates to shared memory, sets the token extent (dim 1) to
   the group's end with ``tensormap.replace.tile.global_dim``, publishes them to one of its two slot pairs in global
   memory (``tensormap.cp_fenceproxy``), acquires and prefetches them: tokens past the end load as zeros.
3. The producer runs one slab ahead of the consumer, across group boundaries, so the slot pairs alternate: a pair is
   rewritten only after the loads through it completed (two groups back). With one pair, the rewrite races a load of
   the previous group that may still read it (``bug="one_slot"``: the emulator reports it); without the extent
   edit the groups read each other's tokens (``bug="no_extent"``: wrong results).
4. An empty group loads nothing and stores zeros; C is (G M, N) rows, one (M, N) block per group.

fp32 with small integers, so numpy checks it exactly. ``tmakit demo grouped-k`` prints the walkthrough.
"""

from __future__ import annotations

import numpy as np

import tmakit as tk
from tmakit import emu

I = tk.Int  # noqa: E741 - CuTe's Int<N>
BLK_M, BLK_N, BLK_K = 16, 16, 16
STAGES = 2
M, N = 32, 20  # M a multiple of BLK_M: a tile never crosses into the next group's rows of C
ENDS = (13, 13, 40, 41, 70)  # token ends: 13, 0 (empty), 27, 1 and 29 tokens per group


def ceil_div(a: int, b: int) -> int:
    return -(-a // b)


# ---------------------------------------------------------------- host side
def make_problem(ends=ENDS, seed: int = 0):
    """X (T, M) tokens, dY (T, N), the (G M, N) result (zeros), all in emulated global memory (small integers)."""
    rng = np.random.default_rng(seed)
    t = ends[-1] if ends else 0
    x, dy, out = emu.alloc((max(t, 1), M)), emu.alloc((max(t, 1), N)), emu.alloc((len(ends) * M, N))
    x[:] = rng.integers(-3, 4, x.shape)
    dy[:] = rng.integers(-3, 4, dy.shape)
    return x, dy, out


def make_templates(x, dy, out):
    """TMA atoms over all tokens: A = X^T (M, T) and B = dY^T (N, T), both M- / N-innermost; C (G M, N) rows."""
    t = x.shape[0]
    mn_major = tk.LayoutLeft
    xt = tk.make_tensor(x, tk.make_layout((M, t), (1, M)))
    dyt = tk.make_tensor(dy, tk.make_layout((N, t), (1, N)))
    c = tk.make_tensor(out, tk.make_layout(out.shape, tk.LayoutRight))
    tma_a = tk.make_tma_copy(tk.SM90_TMA_LOAD, xt, tk.make_layout((I(BLK_M), I(BLK_K)), mn_major))
    tma_b = tk.make_tma_copy(tk.SM90_TMA_LOAD, dyt, tk.make_layout((I(BLK_N), I(BLK_K)), mn_major))
    tma_c = tk.make_tma_copy(tk.SM90_TMA_STORE, c, tk.make_layout((I(BLK_M), I(BLK_N)), tk.LayoutRight))
    return tma_a, tma_b, tma_c


# ---------------------------------------------------------------- device side
def units_of(ends, cta: int, ncta: int) -> list[tuple[int, int, int]]:
    """This CTA's output tiles (group, m, n), round robin over all groups' tiles (empty groups have tiles too)."""
    tiles = [(g, m, n) for g in range(len(ends)) for m in range(M // BLK_M) for n in range(ceil_div(N, BLK_N))]
    return tiles[cta::ncta]


def token_range(ends, g: int) -> tuple[int, int]:
    lo = ends[g - 1] if g else 0
    return lo, max(lo, ends[g])


def slabs(ends, g: int) -> int:
    lo, hi = token_range(ends, g)
    return ceil_div(hi - lo, BLK_K)


class Producer:
    """The loads of one CTA in order, one slab ahead of the consumer, switching slot pairs at group changes."""

    def __init__(self, tma_a, tma_b, sdesc, slots, sA, sB, full, ends, log, bug):  # noqa: N803
        self.tma, self.sdesc, self.slots, self.smem, self.full = (tma_a, tma_b), sdesc, slots, (sA, sB), full
        self.ends, self.log, self.bug = ends, log, bug
        self.extents = [tuple(t.tensormap.global_dim) for t in self.tma]  # (M, T) and (N, T)
        self.group, self.switches, self.pair = None, 0, None

    def switch(self, g: int) -> None:
        """Point the next slot pair at group g: templates to smem, token extent = the group's end, publish."""
        pair = 0 if self.bug == "one_slot" else self.switches % 2
        end = token_range(self.ends, g)[1]
        for i, (name, tma) in enumerate(zip("AB", self.tma)):
            emu.tensormap_copy_to_shared(self.sdesc[i], tma.tensormap)
            if self.bug != "no_extent":
                emu.tensormap_replace_global_dim(self.sdesc[i], end, 1)
            emu.tensormap_cp_fenceproxy(self.slots[pair] + i, self.sdesc[i], name=f"{name} of group {g}")
        for i in range(2):
            emu.tensormap_acquire(self.slots[pair] + i)
            emu.prefetch_tensormap(self.slots[pair] + i)
        self.log.append(f"CTA {emu.block_idx().x}: group {g}: token extent set to {end} in slot pair {pair}")
        self.group, self.pair, self.switches = g, pair, self.switches + 1

    def issue(self, i: int, g: int, m: int, n: int, j: int) -> None:
        """Load slab j of tile (g, m, n) into stage i % STAGES: A's and B's boxes at the group's token j * BLK_K."""
        if g != self.group:
            self.switch(g)
        s = i % STAGES
        emu.set_barrier_transaction_bytes(self.full[s], (BLK_M + BLK_N) * BLK_K * 4)
        k0 = token_range(self.ends, g)[0] + j * BLK_K
        for op, (tma, rows, coord) in enumerate(zip(self.tma, (BLK_M, BLK_N), (m, n))):
            gX = tk.domain_offset((0, k0), tma.get_tma_tensor(self.extents[op]))  # noqa: N806 - CuTe's names
            tile = tk.local_tile(gX, (I(rows), I(BLK_K)), (coord, 0))
            thr = tma.get_slice(0)
            emu.copy(emu.with_tensormap(tma, self.slots[self.pair] + op, self.full[s]), thr.partition_S(tile),
                     thr.partition_D(self.smem[op][s]))


def grouped_k_kernel(tma_a, tma_b, tma_c, ends, workspace, log, bug=None):
    cta, ncta = emu.block_idx().x, emu.grid_dim().x
    sA = [emu.shared_tensor(tk.make_layout((I(BLK_M), I(BLK_K)), tk.LayoutLeft)) for _ in range(STAGES)]  # noqa: N806
    sB = [emu.shared_tensor(tk.make_layout((I(BLK_N), I(BLK_K)), tk.LayoutLeft)) for _ in range(STAGES)]  # noqa: N806
    sC = emu.shared_tensor(tk.make_layout((I(BLK_M), I(BLK_N)), tk.LayoutRight))  # noqa: N806
    sdesc = [emu.shared_alloc(128, 128) for _ in range(2)]
    full = emu.shared_barrier(STAGES)
    for bar in full:
        emu.initialize_barrier(bar, 1)
    emu.fence_barrier_init()
    for t in (tma_a, tma_b, tma_c):
        emu.prefetch_tma_descriptor(t.tensormap)
    base = emu.TensorMapPtr(workspace.ctypes.data) + 4 * cta  # two pairs (A, B) per CTA
    prod = Producer(tma_a, tma_b, sdesc, (base, base + 2), sA, sB, full, ends, log, bug)
    units = units_of(ends, cta, ncta)
    loads = [(g, m, n, j) for g, m, n in units for j in range(slabs(ends, g))]
    if loads:
        prod.issue(0, *loads[0])
    i = 0
    for g, m, n in units:
        acc = np.zeros((BLK_M, BLK_N), np.float32)
        for _ in range(slabs(ends, g)):
            if i + 1 < len(loads):
                prod.issue(i + 1, *loads[i + 1])  # the next slab, maybe of the next group, before this one's wait
            s = i % STAGES
            emu.wait_barrier(full[s], (i // STAGES) & 1)
            a = np.asarray(sA[s].iterator.view((BLK_K, BLK_M)))  # [token, m]
            b = np.asarray(sB[s].iterator.view((BLK_K, BLK_N)))  # [token, n]
            acc += a.T @ b  # the wgmma (imm-trans-a) the emulator does not have
            i += 1
        epilogue(tma_c, sC, acc, g, m, n, out_rows=len(ends) * M)
    emu.tma_store_arrive()
    emu.tma_store_wait(0)
    log.append(f"CTA {cta}: {len(units)} tiles, {len(loads)} slabs, {prod.switches} slot switches")


def epilogue(tma_c, sC, acc, g: int, m: int, n: int, out_rows: int) -> None:  # noqa: N803
    emu.tma_store_wait(0)  # the previous tile's store has read sC
    sC.iterator.view((BLK_M, BLK_N))[:] = acc
    emu.fence_view_async_shared()
    gC = tma_c.get_tma_tensor((out_rows, N))  # noqa: N806 - CuTe's names
    t = tk.local_tile(gC, (I(BLK_M), I(BLK_N)), (g * (M // BLK_M) + m, n))
    thr = tma_c.get_slice(0)
    emu.copy(tma_c, thr.partition_S(sC), thr.partition_D(t))
    emu.tma_store_arrive()


def run_grouped_k(ends=ENDS, num_ctas: int = 2, bug=None, strict: bool = True, seed: int = 0):
    """Launch the along-K kernel; returns (log, stats, max |error| per group against numpy)."""
    ends = tuple(int(e) for e in ends)
    x, dy, out = make_problem(ends, seed)
    tma_a, tma_b, tma_c = make_templates(x, dy, out)
    workspace = emu.alloc((num_ctas * 4 * 128,), np.uint8, align=128)  # 2 pairs of descriptor slots per CTA
    log: list[str] = []
    stats = emu.launch(grouped_k_kernel, (num_ctas, 1, 1), tma_a, tma_b, tma_c, ends, workspace, log, bug,
                       strict=strict)
    errors = []
    for g in range(len(ends)):
        lo, hi = token_range(ends, g)
        errors.append(float(np.abs(out[g * M:(g + 1) * M] - x[lo:hi].T @ dy[lo:hi]).max()))
    return log, stats, errors


# ---------------------------------------------------------------- the walkthrough
def main() -> None:
    from .walkthroughs import heading, say, show_broken_run, step

    heading("grouped-k: grouped_mm along K (MoE weight gradients), per-group token extents edited on the device")
    sizes = [hi - lo for lo, hi in (token_range(ENDS, g) for g in range(len(ENDS)))]
    step(1, f"Host: {len(ENDS)} experts, token ends {list(ENDS)} (sizes {sizes}: an empty group, a 1-token one,")
    say(f"none a multiple of the {BLK_K}-token slab); dW[g] = X[g]^T dY[g], X (T, {M}), dY (T, {N}), fp32.")
    x, dy, out = make_problem()
    for name, t in zip(("A = X^T", "B = dY^T", "C"), make_templates(x, dy, out)):
        say(f"{name:9s}{t.op.name:16s} {t.tensormap}", indent=6)
    step(2, "Device: 2 persistent CTAs; at each group change the producer sets the token extent of its copies of")
    say("A and B to the group's end (tensormap.replace global_dim, dim 1) and publishes them to its other slot pair:")
    log, stats, errors = run_grouped_k()
    for line in log:
        say(line, indent=6)
    say(f"instructions: {dict(sorted(stats.items()))}")
    step(3, "Check: each dW[g] against numpy:")
    for g, err in enumerate(errors):
        say(f"group {g} ({sizes[g]} tokens): max |dW - X^T dY| = {err:g} {'OK' if err == 0 else 'MISMATCH'}", indent=6)
    if any(errors):
        raise AssertionError("grouped-k walkthrough: dW[g] does not match numpy")
    step(4, "Without the extent edit the last slab of a group reads the next group's tokens:")
    show_broken_run(run_grouped_k, "no_extent", "dW[g]", 300)
    step(5, "With one slot pair, the producer (a slab ahead) rewrites the descriptor a load of the previous group")
    say("may still read; the default strict launch raises RaceError, strict=False warns and runs on:")
    show_broken_run(run_grouped_k, "one_slot", "dW[g]", 300)


if __name__ == "__main__":
    main()
