"""CUTLASS's ``57_hopper_grouped_gemm`` (ptr-array grouped GEMM) on the emulator, small shapes.

G groups, each with its own (M_g, N_g, K_g) and pointers: ``C_g = A_g @ B_g^T`` (A_g: M_g x K_g, B_g: N_g x K_g,
both K-major; C_g: M_g x N_g row-major; fp32 so numpy checks it exactly). Persistent CTAs walk the tiles of all
groups. The structure follows the seed's kernel:

1. ``prefetch_tma_descriptor`` on the template descriptors (kernel parameters);
2. the problem table (shapes and pointers) comes into shared memory with a bulk copy (``SM90_BULK_COPY_AUTO``:
   ``max_common_layout`` finds one contiguous vector, one ``cp.async.bulk`` G2S on an mbarrier);
3. ``tensormaps_init``: the templates are copied into shared memory once;
4. at each group change: ``tensormap.replace`` (global address, dims, strides) in shared memory,
   ``tensormap.cp_fenceproxy`` (copy + release) into this CTA's slots of a global workspace,
   ``fence.proxy.tensormap`` acquire, ``prefetch.tensormap``;
5. mainloop: ``get_tma_tensor((M_g, K_g))`` coordinate tensors, ``copy(tma.with(desc_ptr, bar), ...)`` loads of
   A_g / B_g tiles through the rewritten descriptors into a 2-stage ring; the emulator has no wgmma, so the
   consumer multiplies the shared tiles with numpy;
6. epilogue: the tile goes to shared memory and out with a TMA store through the group's C descriptor.

``tmakit demo grouped`` prints the walkthrough; ``python examples/grouped_gemm_descriptors.py`` runs it too.
"""

from __future__ import annotations

import numpy as np

import tmakit as tk
from tmakit import emu

I = tk.Int  # noqa: E741 - CuTe's Int<N>
BLK_M, BLK_N, BLK_K = 16, 16, 16
STAGES = 2
TABLE_COLS = 8  # per group, int64: M, N, K, ptr_A, ptr_B, ptr_C, 0, 0 (64 bytes: a bulk copy moves 16-byte units)
SHAPES = ((24, 20, 36), (0, 16, 16), (16, 12, 20), (40, 32, 8))  # an empty group; K_g not multiples of BLK_K


def ceil_div(a: int, b: int) -> int:
    return -(-a // b)


# ---------------------------------------------------------------- host side
def make_groups(shapes=SHAPES, seed: int = 0):
    """A_g, B_g (small integers, exact in fp32), C_g (zeros), all in emulated global memory, and the problem table."""
    rng = np.random.default_rng(seed)
    groups = []
    for m, n, k in shapes:
        a, b, c = emu.alloc((m, k)), emu.alloc((n, k)), emu.alloc((m, n))
        a[:] = rng.integers(-3, 4, a.shape)
        b[:] = rng.integers(-3, 4, b.shape)
        groups.append((a, b, c))
    table = emu.alloc((len(shapes), TABLE_COLS), np.int64)
    for g, ((m, n, k), (a, b, c)) in enumerate(zip(shapes, groups)):
        table[g, :6] = (m, n, k, a.ctypes.data, b.ctypes.data, c.ctypes.data)
    return groups, table


def make_templates(groups):
    """CUTLASS builds its TMA atoms on the host from placeholder problems; here from the first non-empty group.
    The kernel rewrites address, dims and strides per group; box, swizzle and dtype stay."""
    a, b, c = next(g for g in groups if g[0].size and g[1].size)
    k_major = tk.LayoutRight

    def tensor(x):
        return tk.make_tensor(x, tk.make_layout(x.shape, k_major))

    tma_a = tk.make_tma_copy(tk.SM90_TMA_LOAD, tensor(a), tk.make_layout((I(BLK_M), I(BLK_K)), k_major))
    tma_b = tk.make_tma_copy(tk.SM90_TMA_LOAD, tensor(b), tk.make_layout((I(BLK_N), I(BLK_K)), k_major))
    tma_c = tk.make_tma_copy(tk.SM90_TMA_STORE, tensor(c), tk.make_layout((I(BLK_M), I(BLK_N)), k_major))
    return tma_a, tma_b, tma_c


# ---------------------------------------------------------------- device side
def tile_schedule(prob: np.ndarray) -> list[tuple[int, int, int]]:
    """All output tiles (group, m, n), group by group (an empty group has none)."""
    return [(g, m, n) for g, (mg, ng, _kg) in enumerate(prob[:, :3].tolist())
            for m in range(ceil_div(mg, BLK_M)) for n in range(ceil_div(ng, BLK_N))]


def update_tensormaps(sdesc, slots, row, g: int, log, bug) -> None:
    """CUTLASS's ``tensormaps_perform_update`` + ``tensormaps_cp_fence_release`` + ``tensormaps_fence_acquire``."""
    m, n, k, pa, pb, pc = (int(v) for v in row[:6])
    for i, (name, addr, dims, row_bytes) in enumerate((("A", pa, (k, m), k * 4), ("B", pb, (k, n), k * 4),
                                                       ("C", pc, (n, m), n * 4))):
        emu.tma_descriptor_replace_addr_in_shared_mem(sdesc[i], addr)
        emu.tma_descriptor_replace_dims_strides_in_shared_mem(sdesc[i], dims + (1, 1, 1), (4, row_bytes, 0, 0, 0))
        emu.tensormap_cp_fenceproxy(slots + i, sdesc[i], name=f"{name} of group {g}")
    for i in range(3):
        if bug != "no_acquire":
            emu.tensormap_acquire(slots + i)
        emu.prefetch_tensormap(slots + i)
    log.append(f"CTA {emu.block_idx().x}: group {g} (M,N,K) = ({m},{n},{k}): tensormap.replace address/dims/strides "
               f"x3 in smem, cp_fenceproxy -> slots {int(slots):#x}.., acquire, prefetch")


def grouped_gemm_kernel(tma_a, tma_b, tma_c, table, workspace, log, bug=None):
    G = table.shape[0]  # noqa: N806
    cta, ncta = emu.block_idx().x, emu.grid_dim().x
    sA = [emu.shared_tensor(tk.make_layout((I(BLK_M), I(BLK_K)), tk.LayoutRight)) for _ in range(STAGES)]  # noqa: N806
    sB = [emu.shared_tensor(tk.make_layout((I(BLK_N), I(BLK_K)), tk.LayoutRight)) for _ in range(STAGES)]  # noqa: N806
    sC = emu.shared_tensor(tk.make_layout((I(BLK_M), I(BLK_N)), tk.LayoutRight))  # noqa: N806
    sprob = emu.shared_tensor(tk.make_layout((I(G), I(TABLE_COLS)), tk.LayoutRight), np.int64)
    sdesc = [emu.shared_alloc(128, 128) for _ in range(3)]
    full, table_bar = emu.shared_barrier(STAGES), emu.shared_barrier()
    for bar in (*full, table_bar):
        emu.initialize_barrier(bar, 1)
    emu.fence_barrier_init()
    # 1. descriptor prefetch (kernel parameters)  2. the problem table by bulk copy  3. tensormaps_init
    for t in (tma_a, tma_b, tma_c):
        emu.prefetch_tma_descriptor(t.tensormap)
    emu.set_barrier_transaction_bytes(table_bar, G * TABLE_COLS * 8)
    gprob = tk.make_tensor(table, tk.make_layout((I(G), I(TABLE_COLS)), tk.LayoutRight))
    emu.copy(tk.SM90_BULK_COPY_AUTO.with_(table_bar), gprob, sprob)
    emu.wait_barrier(table_bar, 0)
    prob = np.array(sprob.iterator.view((G, TABLE_COLS)))
    for s, t in zip(sdesc, (tma_a, tma_b, tma_c)):
        emu.tensormap_copy_to_shared(s, t.tensormap)
    slots = emu.TensorMapPtr(workspace.ctypes.data) + 3 * cta
    phase = [0] * STAGES
    current, ntiles = None, 0
    for g, m, n in tile_schedule(prob)[cta::ncta]:
        if g != current:
            if bug != "no_store_wait":
                emu.tma_store_wait(0)  # the previous group's C store read its descriptor: done before the rewrite
            update_tensormaps(sdesc, slots, prob[g], g, log, bug)
            current = g
        mg, ng, kg = (int(v) for v in prob[g, :3])
        gA = tma_a.get_tma_tensor((mg, kg))  # noqa: N806 - CuTe's names
        gB = tma_b.get_tma_tensor((ng, kg))  # noqa: N806
        gC = tma_c.get_tma_tensor((mg, ng))  # noqa: N806
        acc = mainloop(tma_a, tma_b, slots, gA, gB, sA, sB, full, phase, m, n, ceil_div(kg, BLK_K))
        epilogue(tma_c, slots + 2, gC, sC, acc, m, n)
        ntiles += 1
    emu.tma_store_arrive()
    emu.tma_store_wait(0)
    log.append(f"CTA {cta}: {ntiles} tiles")


def _load(tma, desc, coord, tile, k, smem, bar):
    t = tk.local_tile(coord, (I(tile[0]), I(BLK_K)), (tile[1], k))
    thr = tma.get_slice(0)
    emu.copy(emu.with_tensormap(tma, desc, bar), thr.partition_S(t), thr.partition_D(smem))


def mainloop(tma_a, tma_b, slots, gA, gB, sA, sB, full, phase, m, n, k_tiles):  # noqa: N803
    """Producer and consumer of a 2-stage ring, interleaved in the one emulated thread: load k-tile k + 1 while
    k-tile k is multiplied."""
    acc = np.zeros((BLK_M, BLK_N), np.float32)
    tx = (BLK_M + BLK_N) * BLK_K * 4

    def issue(k):
        s = k % STAGES
        emu.set_barrier_transaction_bytes(full[s], tx)
        _load(tma_a, slots + 0, gA, (BLK_M, m), k, sA[s], full[s])
        _load(tma_b, slots + 1, gB, (BLK_N, n), k, sB[s], full[s])

    if k_tiles:
        issue(0)
    for k in range(k_tiles):
        if k + 1 < k_tiles:
            issue(k + 1)
        s = k % STAGES
        emu.wait_barrier(full[s], phase[s])
        phase[s] ^= 1
        a = sA[s].iterator.view((BLK_M, BLK_K))
        b = sB[s].iterator.view((BLK_N, BLK_K))
        acc += np.asarray(a) @ np.asarray(b).T  # the wgmma the emulator does not have
    return acc


def epilogue(tma_c, desc, gC, sC, acc, m, n):  # noqa: N803
    emu.tma_store_wait(0)  # the previous tile's store has read sC
    sC.iterator.view((BLK_M, BLK_N))[:] = acc
    emu.fence_view_async_shared()
    t = tk.local_tile(gC, (I(BLK_M), I(BLK_N)), (m, n))
    thr = tma_c.get_slice(0)
    emu.copy(emu.with_tensormap(tma_c, desc), thr.partition_S(sC), thr.partition_D(t))
    emu.tma_store_arrive()


def run_grouped(shapes=SHAPES, num_ctas: int = 2, bug=None, strict: bool = True, seed: int = 0):
    """Launch the grouped GEMM; returns (groups, log, stats, errors per group vs numpy)."""
    groups, table = make_groups(shapes, seed)
    tma_a, tma_b, tma_c = make_templates(groups)
    workspace = emu.alloc((num_ctas * 3 * 128,), np.uint8, align=128)  # 3 descriptor slots per CTA
    log: list[str] = []
    stats = emu.launch(grouped_gemm_kernel, (num_ctas, 1, 1), tma_a, tma_b, tma_c, table, workspace, log, bug,
                       strict=strict)
    errors = [float(np.abs(c - a @ b.T).max()) if c.size else 0.0 for a, b, c in groups]
    return groups, log, stats, errors


# ---------------------------------------------------------------- the walkthrough
def main() -> None:
    from .walkthroughs import heading, say, show_broken_run, step

    heading("grouped: ptr-array grouped GEMM with device-side tensor maps (examples/grouped_gemm_descriptors.py)")
    step(1, f"Host: {len(SHAPES)} groups (M_g, N_g, K_g) = {list(SHAPES)}; tiles {BLK_M}x{BLK_N}x{BLK_K} fp32.")
    say("Group 1 is empty; K_g = 36, 20, 8 are not multiples of BLK_K (the TMA zero-fills the tail of the box).")
    groups, _table = make_groups()
    templates = make_templates(groups)
    step(2, "Host: template TMA atoms from the first non-empty group (the kernel rewrites address/dims/strides):")
    for name, t in zip("ABC", templates):
        say(f"{name}: {t.op.name:16s} {t.tensormap}", indent=6)
    step(3, "Host: the problem table, 64 bytes per group (M, N, K, ptr_A, ptr_B, ptr_C), is moved to smem by")
    say("copy(SM90_BULK_COPY_AUTO.with(bar), gmem_table, smem_table); CuTe's dispatch on these layouts:")
    g = len(SHAPES)
    lay = tk.make_layout((I(g), I(TABLE_COLS)), tk.LayoutRight)

    class _Smem:  # the shared side of the plan, for printing on the host
        smem, address, dtype = None, 0, np.dtype(np.int64)

    plan = tk.bulk_copy_plan(tk.SM90_BULK_COPY_AUTO.with_("bar"), tk.make_tensor(_table, lay),
                             tk.make_tensor(_Smem(), lay))
    say(str(plan), indent=6)
    say(str(plan.atom).rstrip(), indent=6)
    step(4, "Device: 2 persistent CTAs walk the tiles of all groups; at each group change the producer rewrites")
    say("its 3 descriptors (A, B, C) in smem and publishes them to its slots of a global workspace:")
    groups, log, stats, errors = run_grouped()
    for line in log:
        say(line, indent=6)
    say(f"instructions: {dict(sorted(stats.items()))}")
    say("Each CTA has its own 3 slots: a slot is rewritten only after the TMA operations that read it completed")
    say("(loads waited on their full barrier; stores drained with tma_store_wait before the group change).")
    step(5, "Check: each C_g against numpy's A_g @ B_g^T:")
    for gi, ((m, n, k), err) in enumerate(zip(SHAPES, errors)):
        say(f"group {gi}: ({m},{n},{k}) max |C - A B^T| = {err:g} {'OK' if err == 0 else 'MISMATCH'}", indent=6)
    if any(errors):
        raise AssertionError("grouped walkthrough: C_g does not match numpy")
    step(6, "What the emulator catches: the same kernel without fence.proxy.tensormap acquire (strict=False runs on")
    say("with the stale cached descriptor and warns; the default strict launch raises RaceError):")
    show_broken_run(run_grouped, "no_acquire", "C_g")
    step(7, "... and rewriting the C descriptor while the previous group's TMA store may still read it:")
    show_broken_run(run_grouped, "no_store_wait", "C_g")


if __name__ == "__main__":
    main()
