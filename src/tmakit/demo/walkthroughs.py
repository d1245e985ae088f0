"""The walkthroughs of examples/, step by step: host objects from the real host API (``make_tma_copy``,
``get_tma_tensor``, ``local_tile``, ``get_slice``/``partition_S``/``partition_D``, ``create_tma_multicast_mask``),
then the boxes moved by a backend (emulator or GPU), then the shared / global contents.

Every walkthrough is ``fn(backend, figures: Path | None) -> None`` and prints to stdout.
"""

from __future__ import annotations

import contextlib
import io
from pathlib import Path

import numpy as np

import tmakit as tk

from .backends import load_job, store_job

I = tk.Int  # noqa: E741 - CuTe's Int<N>


# ---------------------------------------------------------------- printing helpers
def heading(title: str) -> None:
    print()
    print("=" * 100)
    print(title)
    print("=" * 100)


def step(n: int, text: str) -> None:
    print(f"\n[{n}] {text}")


def say(text: str = "", indent: int = 4) -> None:
    for line in text.splitlines() or [""]:
        print(" " * indent + line)


def show_broken_run(run, bug: str, result: str, limit: int = 0) -> None:
    """Run a walkthrough's kernel with ``bug`` (``run(bug=bug, strict=False)``, the errors per group last in what it
    returns): print the emulator's first report (``limit`` > 0: cut there) and which groups' ``result`` is wrong."""
    import warnings

    from tmakit import emu

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        errors = run(bug=bug, strict=False)[-1]
    first = next((str(w.message) for w in caught if issubclass(w.category, emu.EmuWarning)), "no report")
    say(f"first report: {first[:limit] + '...' if 0 < limit < len(first) else first}", indent=6)
    bad = [g for g, e in enumerate(errors) if e]
    say(f"groups whose {result} is wrong: {bad or 'none'}", indent=6)


def matrix(a: np.ndarray, width: int = 3, sep: str = "  ", indent: int = 4, fmt=None) -> str:
    rows = []
    for r in np.asarray(a):
        rows.append(" " * indent + sep.join((fmt(v) if fmt else f"{int(v):{width}d}") for v in r))
    return "\n".join(rows)


def printed(obj_print, *args) -> str:
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        obj_print(*args)
    return buf.getvalue().rstrip("\n")


def abbreviated_tensor(t, head: int = 2, tail: int = 1) -> str:
    lines = printed(tk.print_tensor, t).splitlines()
    body = lines[1:]
    if len(body) > head + tail + 1:
        body = body[:head] + ["  // more lines"] + body[-tail:]
    return "\n".join([lines[0], *body])


def smem_view(image: np.ndarray, dtype, shape) -> np.ndarray:
    n = int(np.prod(shape))
    return image[: n * np.dtype(dtype).itemsize].view(dtype).reshape(shape)


def gmem_tensor(buf, dtype: str, shape):
    return tk.make_tensor(tk.make_gmem_ptr(dtype, buf.address), tk.make_layout(tuple(shape), tk.LayoutRight))


def _coords(thr, tile) -> tuple[int, ...]:
    return tuple(int(c) for c in thr.partition_S(tile).iterator)


def _figure(figures: Path | None, name: str, fn, *args, **kw) -> None:
    if figures is None:
        return
    figures.mkdir(parents=True, exist_ok=True)
    fig = fn(*args, **kw)
    paths = []
    for ext in ("png", "svg"):
        p = figures / f"{name}.{ext}"
        fig.savefig(p, dpi=110 if ext == "png" else None, bbox_inches="tight")
        paths.append(str(p))
    import matplotlib.pyplot as plt

    plt.close(fig)
    print(f"    figure: {paths[0]} (+ .svg)")


# ---------------------------------------------------------------- TMA load (examples/tma_load_basic.py)
def _tile_load_host(backend, op=tk.SM90_TMA_LOAD, cluster_size: int = 1, N=6, K=8, CTA_N=2, CTA_K=4):  # noqa: N803
    data = np.arange(N * K, dtype=np.float32).reshape(N, K)
    buf = backend.gmem(data)
    g = gmem_tensor(buf, "fp32", (N, K))
    smem_layout = tk.make_layout((I(CTA_N), I(CTA_K)), tk.LayoutRight)
    kw = {"cluster_size": cluster_size} if cluster_size > 1 else {}
    tma = tk.make_tma_copy(op, g, smem_layout, **kw)
    return data, buf, g, smem_layout, tma


def load_000(backend, figures: Path | None = None, prefetch: bool = False) -> None:
    N, K, CTA_N, CTA_K = 6, 8, 2, 4  # noqa: N806 - the tutorial's names
    title = "prefetch: TMA prefetch, then load (examples/tma_prefetch.py)" if prefetch else \
        "load: TMA load of a [6,8] tensor in [2,4] tiles (examples/tma_load_basic.py)"
    heading(title)
    data, buf, g, smem_layout, tma = _tile_load_host(backend)
    step(1, "Host: a row-major [N,K] = [6,8] fp32 tensor in global memory (values 0..47).")
    say(f"gmem_tensor layout: {g.layout}")
    print(matrix(data, width=2, sep="  ", indent=6))
    step(2, "Host: the smem layout of one CTA's tile, static ints: [CTA_N,CTA_K] = [2,4], row-major.")
    say(f"smem_layout = {smem_layout}")
    step(3, "Host: tma_load = make_tma_copy(SM90_TMA_LOAD, gmem_tensor, smem_layout) builds the descriptor.")
    say(str(tma).rstrip())
    step(4, "The TensorMap it encodes (cuTensorMapEncodeTiled fields, innermost dimension first):")
    say(tma.tensormap.explain().rstrip(), indent=6)
    grid = (N // CTA_N, K // CTA_K)
    step(5, f"Device: grid = [N/CTA_N, K/CTA_K] = {list(grid)} CTAs; each one loads one tile.")
    coord = tma.get_tma_tensor((N, K))
    say(f"gmem_tensor_coord = tma_load.get_tma_tensor(shape(gmem_tensor)) = {coord}")
    say("Its values are TMA coordinates (innermost first: (col,row)), not data.")
    cta = (1, 1)
    tile = tk.local_tile(coord, (I(CTA_N), I(CTA_K)), cta)
    say(f"CTA {cta}: local_tile(gmem_tensor_coord, Tile<_2,_4>, {cta}) =")
    say(printed(tk.print_tensor, tile), indent=6)
    thr = tma.get_slice(0)
    src = thr.partition_S(tile)
    smem = tk.make_tensor(np.zeros(CTA_N * CTA_K, np.float32), smem_layout)
    say(f"partition_S -> {src}")
    say(f"partition_D -> {thr.partition_D(smem)}")
    say(f"one TMA instruction per CTA: cp.async.bulk.tensor.2d at coordinates {tuple(src.iterator)} "
        f"-> tile rows {CTA_N * cta[0]}..{CTA_N * cta[0] + CTA_N - 1}, cols {CTA_K * cta[1]}..{CTA_K * cta[1] + 3}")
    nbytes = CTA_N * CTA_K * 4
    step(6, f"initialize_barrier(mbar, 1); set_barrier_transaction_bytes(mbar, {nbytes}); "
         + ("prefetch(tma_load, partition_S(...)) warms L2 (no smem, no barrier); " if prefetch else "")
         + "copy(tma_load.with(mbar), ...); wait_barrier(mbar, 0).")
    if prefetch:
        say("Prefetch lowers to cp.async.bulk.prefetch.tensor.2d.L2.global with the same descriptor and coordinates:")
        say("it only brings the box into L2, so the load that follows hits in L2. It never writes shared memory.")
    jobs, blocks = [], []
    for bx in range(grid[0]):
        for by in range(grid[1]):
            t = tk.local_tile(coord, (I(CTA_N), I(CTA_K)), (bx, by))
            jobs.append(load_job(_coords(thr, t), prefetch=prefetch))
            blocks.append((bx, by))
    step(7, f"Run all {len(jobs)} CTAs on the {backend.describe()}.")
    images = backend.load_boxes(tma.tensormap, buf, jobs, nbytes)
    for (bx, by), img in zip(blocks, images):
        s = smem_view(img, np.float32, (CTA_N, CTA_K))
        print(f"    block: ({bx}, {by}), value: {s[0, 0]:f}, {s[0, 1]:f}")
    s11 = smem_view(images[blocks.index(cta)], np.float32, (CTA_N, CTA_K))
    say(f"CTA {cta} shared memory (the tile at rows 2..3, cols 4..7):")
    print(matrix(s11, width=2, indent=6))
    ok = all(np.array_equal(smem_view(img, np.float32, (CTA_N, CTA_K)),
                            data[bx * CTA_N:(bx + 1) * CTA_N, by * CTA_K:(by + 1) * CTA_K])
             for (bx, by), img in zip(blocks, images))
    say(f"check: every CTA holds exactly its tile: {'OK' if ok else 'MISMATCH'}")
    if not ok:
        raise AssertionError("load walkthrough: shared memory does not match the global tiles")
    if not prefetch:
        from .. import viz

        _figure(figures, "load_tile_ownership", viz.tile_ownership, (N, K), (CTA_N, CTA_K), highlight=cta,
                values=data)
        _figure(figures, "load_smem_layout", viz.layout_grid, smem_layout, color_by=4,
                title="smem_layout (_2,_4):(_4,_1)")


def prefetch_000(backend, figures: Path | None = None) -> None:
    load_000(backend, figures, prefetch=True)


# ---------------------------------------------------------------- multicast (examples/tma_multicast_rows.py)
def _share_offsets(tma, smem_layout, cs, elem_bytes=4):
    smem = tk.make_tensor(np.zeros(int(tk.size(smem_layout)), np.float32), smem_layout)
    return [int(tma.get_slice(r).partition_D(smem).iterator.offset) * elem_bytes for r in range(cs)]


def _multicast_cluster(backend, cluster_shape, N, K, CTA_N, CTA_K, figures, name):  # noqa: N803
    cn, ck = cluster_shape
    cs = cn * ck
    data, buf, g, smem_layout, tma = _tile_load_host(backend, tk.SM90_TMA_LOAD_MULTICAST, cs, N, K, CTA_N, CTA_K)
    offs = _share_offsets(tma, smem_layout, cs)
    if any(o % 128 for o in offs):
        say(f"The tutorial's shapes: [{N},{K}] fp32 in [{CTA_N},{CTA_K}] tiles. Each CTA's share starts at smem byte "
            f"offsets {offs}:")
        say("PTX requires the shared address of cp.async.bulk.tensor to be 128-byte aligned, so these boxes are")
        say("illegal: on an H200 this exact launch fails with CUDA_ERROR_MISALIGNED_ADDRESS (716), a sticky error.")
        if backend.name == "emu":
            from ..emu.errors import EmuError

            c0 = _coords(tma.get_slice(1), tk.local_tile(tma.get_tma_tensor((N, K)), (I(CTA_N), I(CTA_K)), (0, 0)))
            try:
                backend.load_boxes(tma.tensormap, buf, [load_job((0, 0), mask=(1 << cs) - 1, expect=0),
                                                        load_job(c0, mask=(1 << cs) - 1, dst_offset=offs[1],
                                                                 expect=0)][:2] + [load_job((0, 0), issue=False,
                                                                                            expect=0)] * (cs - 2),
                                   CTA_N * CTA_K * 4, cluster=cs)
            except EmuError as e:
                say(f"the emulator refuses it: {type(e).__name__}: {e}")
        widen = 128 // (CTA_K * 4)
        K, CTA_K = K * widen, CTA_K * widen  # noqa: N806
        say(f"So we widen the columns {widen}x: [{N},{K}] fp32 in [{CTA_N},{CTA_K}] tiles (128-byte rows); "
            "the split is the same.")
        data, buf, g, smem_layout, tma = _tile_load_host(backend, tk.SM90_TMA_LOAD_MULTICAST, cs, N, K, CTA_N, CTA_K)
    coord = tma.get_tma_tensor((N, K))
    say(f"gmem_tensor: [{N},{K}] fp32 row-major, values 0..{N * K - 1}; smem_layout = {smem_layout}")
    say(f"tma_load = make_tma_copy(SM90_TMA_LOAD_MULTICAST, gmem_tensor, smem_layout, Int<{cs}>) ->")
    say(str(tma).rstrip(), indent=6)
    say(f"TensorMap: {tma.tensormap}")
    say(f"each CTA's box is {tma.tensormap.box_dim[::-1]} (rows, cols): the tile's {CTA_N} rows split over "
        f"{cs} CTAs along the slowest-moving dimension")
    clusters = (N // CTA_N, K // CTA_K)
    grid = (clusters[0] * cn, clusters[1] * ck)
    cluster_layout = tk.make_layout((I(cn), I(ck)), (I(1), I(cn)))  # block_rank_in_cluster = x + y * cn
    full = (1 << cs) - 1
    say(f"grid = {list(grid)} CTAs, clusterDim = {cn}x{ck} -> {list(clusters)} clusters; "
        f"cluster layout {cluster_layout}; tma_mcast_mask = (1 << {cs}) - 1 = {full:#0{cs + 2}b}")
    say(f"(= create_tma_multicast_mask(cluster_layout, cta_coord, modes=(0,1)) = "
        f"{tk.create_tma_multicast_mask(cluster_layout, (0, 0), (0, 1)):#0{cs + 2}b} for every CTA)")
    smem = tk.make_tensor(np.zeros(CTA_N * CTA_K, np.float32), smem_layout)
    nbytes = CTA_N * CTA_K * 4
    jobs, blocks = [], []
    show = (clusters[0] - 1, clusters[1] - 1)
    for cx in range(clusters[0]):
        for cy in range(clusters[1]):
            tile = tk.local_tile(coord, (I(CTA_N), I(CTA_K)), (cx, cy))
            for r in range(cs):
                thr = tma.get_slice(r)
                off = int(thr.partition_D(smem).iterator.offset) * 4
                jobs.append(load_job(_coords(thr, tile), mask=full, expect=nbytes, dst_offset=off))
                bx, by = cx * cn + r % cn, cy * ck + r // cn
                blocks.append((bx, by))
                if (cx, cy) == show:
                    rows = tma.tensormap.box_dim[1]
                    say(f"cluster {show} block ({bx},{by}) rank {r}: get_slice({r}) issues box at TMA coords "
                        f"{jobs[-1]['coords']} = tile rows {off // 4 // CTA_K}..{off // 4 // CTA_K + rows - 1} "
                        f"(smem offset {off} B), multicast to mask {full:#0{cs + 2}b}")
    say(f"every CTA's barrier expects the whole tile, {nbytes} bytes: its own share plus what the others multicast")
    images = backend.load_boxes(tma.tensormap, buf, jobs, nbytes, cluster=cs)
    say(f"ran {len(jobs)} CTAs on the {backend.describe()}:")
    for (bx, by), img in zip(blocks, images):
        s = smem_view(img, np.float32, (CTA_N, CTA_K))
        print(f"    block: ({bx}, {by}), value: {s[0, 0]:f}, {s[0, 1]:f}")
    ok = True
    for (bx, by), img in zip(blocks, images):
        cx, cy = bx // cn, by // ck
        ok &= np.array_equal(smem_view(img, np.float32, (CTA_N, CTA_K)),
                             data[cx * CTA_N:(cx + 1) * CTA_N, cy * CTA_K:(cy + 1) * CTA_K])
    first = blocks.index((show[0] * cn, show[1] * ck))
    say(f"cluster {show}: shared memory of each of its {cs} CTAs (identical):")
    shown = smem_view(images[first], np.float32, (CTA_N, CTA_K))
    say(f"(first {min(CTA_K, 8)} of {CTA_K} columns)" if CTA_K > 8 else "")
    print(matrix(shown[:, :8], width=3, indent=6))
    say(f"check: every CTA of every cluster holds its cluster's whole tile: {'OK' if ok else 'MISMATCH'}")
    if not ok:
        raise AssertionError("multicast walkthrough: shared memory does not match the cluster tiles")
    from .. import viz

    _figure(figures, f"{name}_split", viz.multicast_split, (CTA_N, CTA_K), cs)
    _figure(figures, f"{name}_mask", viz.multicast_mask, cluster_layout, (0, 0), (0, 1))


def multicast_000(backend, figures: Path | None = None) -> None:
    heading("multicast: TMA multicast load with a 1x2 and a 2x2 cluster (examples/tma_multicast_rows.py)")
    step(1, "A 1x2 cluster loads the [6,8] tensor's [2,4] tiles: both CTAs get a copy of their cluster's tile;")
    say("CTA 0 issues row 0 of the tile, CTA 1 issues row 1, and each box is multicast to both CTAs' smem.")
    _multicast_cluster(backend, (1, 2), 6, 8, 2, 4, figures, "multicast_1x2")
    step(2, "A 2x2 cluster multicasts [4,4] tiles of an [8,8] tensor: each of the 4 CTAs issues one row.")
    say("CuTe slices the slowest-moving smem dimension first, so every share stays contiguous in smem.")
    _multicast_cluster(backend, (2, 2), 8, 8, 4, 4, figures, "multicast_2x2")


# ------------------------------------------------- tiled load (examples/tma_load_tiles.py): 1024x1024 fp32, 16x16 tiles
M001 = 1024


def _gmem_1024(backend, data=None):
    if data is None:
        data = np.arange(M001 * M001, dtype=np.float32).reshape(M001, M001)
    buf = backend.gmem(data)
    return data, buf, gmem_tensor(buf, "fp32", (M001, M001))


def _tile_jobs(tma, coord, tiles, tile_shape, **kw):
    """Per-CTA TMA coordinates. The slice offset comes from the real partition of tile (0,0); CTA (m,n)'s tile
    origin adds (n*CTA_N, m*CTA_M) (innermost first). Spot-checked against local_tile + partition_S."""
    thr = tma.get_slice(0)
    base = _coords(thr, tk.local_tile(coord, tile_shape, (0, 0)))
    tm_, tn = int(tile_shape[0]), int(tile_shape[1])
    for m, n in ((1, 0), (tiles[0] - 1, tiles[1] - 1)):
        want = (base[0] + n * tn, base[1] + m * tm_)
        assert _coords(thr, tk.local_tile(coord, tile_shape, (m, n))) == want
    return [(base[0] + n * tn, base[1] + m * tm_) for m in range(tiles[0]) for n in range(tiles[1])]


def load_001(backend, figures: Path | None = None) -> None:
    heading("load: 1024x1024 fp32 in 16x16 tiles, CTA 7's coordinate tensor (examples/tma_load_tiles.py)")
    data, buf, g = _gmem_1024(backend)
    smem_layout = tk.make_layout((I(16), I(16)), tk.LayoutRight)
    tma = tk.make_tma_copy(tk.SM90_TMA_LOAD, g, smem_layout)
    step(1, "Host: gmem_layout = make_layout((M,N), LayoutRight) with M = N = 1024; smem (16,16) row-major.")
    say(f"tma_load = make_tma_copy(SM90_TMA_LOAD, gmem_tensor, {smem_layout}); TensorMap: {tma.tensormap}")
    coord = tma.get_tma_tensor((M001, M001))
    step(2, "Device: print(gmem_tensor_coord) -- the coordinates, not the data:")
    say(str(coord))
    step(3, "if (cute::block(7)) print_tensor(gmem_tensor_coord_cta)  -- CTA 7 = blockIdx (7,0), rows 112..127:")
    tile7 = tk.local_tile(coord, (I(16), I(16)), (7, 0))
    say(abbreviated_tensor(tile7))
    tiles = (M001 // 16, M001 // 16)
    starts = _tile_jobs(tma, coord, tiles, (I(16), I(16)))
    jobs = [load_job(c) for c in starts]
    step(4, f"Run all {len(jobs)} CTAs (grid {{64, 64, 1}}) on the {backend.describe()}.")
    images = backend.load_boxes(tma.tensormap, buf, jobs, 16 * 16 * 4)
    s7 = smem_view(images[7 * 64], np.float32, (16, 16))
    say("CTA 7's shared memory, rows 0..2 and 15, first 8 columns (gmem value = row * 1024 + col):")
    print(matrix(s7[[0, 1, 2, 15], :8], width=7, indent=6))
    bad = sum(not np.array_equal(smem_view(img, np.float32, (16, 16)),
                                 data[m * 16:(m + 1) * 16, n * 16:(n + 1) * 16])
              for (m, n), img in zip(((m, n) for m in range(64) for n in range(64)), images))
    say(f"check: all {len(jobs)} tiles equal their global tiles: {'OK' if bad == 0 else f'{bad} MISMATCHES'}")
    if bad:
        raise AssertionError("tiled load: tiles differ")


def store_001(backend, figures: Path | None = None, op: str | None = None) -> None:
    reduce = op is not None
    heading("reduce: TMA store-reduce (add) of 32x32 tiles into 1024x1024 fp32 (examples/tma_store.py)"
            if reduce else "store: TMA store of 32x32 tiles into 1024x1024 fp32 (examples/tma_store.py)")
    init = (np.tile(np.arange(M001, dtype=np.float32), (M001, 1)) if reduce
            else np.zeros((M001, M001), np.float32))
    data, buf, g = _gmem_1024(backend, init)
    smem_layout = tk.make_layout((I(32), I(32)), tk.LayoutRight)
    copy_op = tk.SM90_TMA_REDUCE_ADD if reduce else tk.SM90_TMA_STORE
    tma = tk.make_tma_copy(copy_op, g, smem_layout)
    step(1, f"Host: tma = make_tma_copy({copy_op.name if hasattr(copy_op, 'name') else copy_op}, gmem_tensor, "
         f"{smem_layout}); grid {{32, 32, 1}}, CTA_M = 32 threads per CTA.")
    say(f"TensorMap: {tma.tensormap}")
    if reduce:
        say("The one-line change from the store: SM90_TMA_STORE -> SM90_TMA_REDUCE_ADD "
            "(cp.reduce.async.bulk.tensor.2d.global.shared::cta.add.tile.bulk_group).")
        try:
            tk.make_tma_copy(tk.SM90_TMA_REDUCE_MIN, g, smem_layout)
            say("SM90_TMA_REDUCE_MIN on fp32: accepted")
        except tk.TmaDescriptorError as e:
            say(f"(not every op exists for every dtype: SM90_TMA_REDUCE_MIN on fp32 -> TmaDescriptorError: {e})")
        say("global memory before: every row is 0, 1, 2, ..., 1023 (gmem[r][c] = c)")
    step(2, "Each CTA: thread i fills smem row i with the value i; tma_store_fence() (fence.proxy.async.shared::cta)")
    say("makes those generic-proxy writes visible to the TMA (async proxy); thread 0 issues the "
        + ("reduce" if reduce else "store") + ";")
    say("tma_store_arrive() commits the bulk group, tma_store_wait<0>() waits for it (no mbarrier for stores).")
    coord = tma.get_tma_tensor((M001, M001))
    tiles = (M001 // 32, M001 // 32)
    starts = _tile_jobs(tma, coord, tiles, (I(32), I(32)))
    tile = np.repeat(np.arange(32, dtype=np.float32)[:, None], 32, axis=1)
    images = np.repeat(tile.reshape(1, -1).view(np.uint8), len(starts), axis=0)
    jobs = [store_job(c, op="add" if reduce else None) for c in starts]
    step(3, f"Run all {len(jobs)} CTAs on the {backend.describe()}.")
    backend.store_boxes(tma.tensormap, buf, jobs, images)
    out = backend.read(buf)
    expect = init + (np.arange(M001) % 32)[:, None].astype(np.float32)
    say("global memory after, rows 0..2 and 30..33, first 8 columns:")
    print(matrix(out[[0, 1, 2, 30, 31, 32, 33], :8], width=4, indent=6))
    if reduce:
        say("gmem[r][c] = c + (r % 32): each value is the old global value plus the CTA's smem value")
    else:
        say("gmem[r][c] = r % 32: every 32-row tile holds its CTA's rows 0..31")
    ok = np.array_equal(out, expect)
    say(f"check: all {M001 * M001} elements as expected: {'OK' if ok else 'MISMATCH'}")
    if not ok:
        raise AssertionError("store walkthrough: global memory differs")


def reduce_001(backend, figures: Path | None = None) -> None:
    store_001(backend, figures, op="add")


def multicast_001(backend, figures: Path | None = None) -> None:
    heading("multicast: the 16x16 tile, 2-CTA cluster, and the get_slice bug (examples/tma_multicast_slices.py)")
    data = np.arange(256, dtype=np.float32).reshape(16, 16)
    buf = backend.gmem(data)
    g = gmem_tensor(buf, "fp32", (16, 16))
    smem_layout = tk.make_layout((I(16), I(16)), tk.LayoutRight)
    tma = tk.make_tma_copy(tk.SM90_TMA_LOAD_MULTICAST, g, smem_layout, cluster_size=2)
    step(1, "Host: a 16x16 tile of 0..255 (row-major); make_tma_copy(SM90_TMA_LOAD_MULTICAST, ..., Int<2>) prints:")
    say(str(tma).rstrip(), indent=6)
    say("two 'threads' = the two CTAs of the cluster; ctaid 1 starts at logical (8,0) of the tile. "
        f"Box per CTA: {tma.tensormap.box_dim[::-1]} (rows, cols)")
    coord = tk.local_tile(tma.get_tma_tensor((16, 16)), (I(16), I(16)), (0, 0))
    smem = tk.make_tensor(np.zeros(256, np.float32), smem_layout)
    share = {s: (_coords(tma.get_slice(s), coord), int(tma.get_slice(s).partition_D(smem).iterator.offset) * 4)
             for s in range(2)}
    for s, (c, off) in share.items():
        say(f"get_slice({s}): partition_S starts at TMA coords {c} (col,row), partition_D at smem byte {off}")
    mask = tk.create_tma_multicast_mask(tk.make_layout(I(2)), 0, (0,))
    say(f"tma_mcast_mask = {mask:#04b}; each CTA's barrier expects 16*16*4 = 1024 bytes")
    cases = [((0, 0), "WRONG: both CTAs call get_slice(0)"), ((1, 1), "WRONG: both CTAs call get_slice(1)"),
             ((0, 1), "RIGHT: CTA r calls get_slice(r)"), ((1, 0), "also RIGHT: CTA 0 -> slice 1, CTA 1 -> slice 0")]
    for n, (slices, text) in enumerate(cases, start=2):
        step(n, f"{text} (slices {slices}); smem starts zeroed.")
        jobs = [load_job(share[s][0], mask=mask, expect=1024, dst_offset=share[s][1]) for s in slices]
        images = backend.load_boxes(tma.tensormap, buf, jobs, 1024, cluster=2)
        a, b = (smem_view(img, np.float32, (16, 16)) for img in images)
        same = np.array_equal(a, b)
        say(f"shared memory of {'both CTAs (identical)' if same else 'CTA 0'}:")
        print(matrix(a, width=3, indent=4))
        if not same:
            say("shared memory of CTA 1:")
            print(matrix(b, width=3, indent=4))
        filled = [r for r in range(16) if np.array_equal(a[r], data[r])]
        zero = [r for r in range(16) if not a[r].any() and data[r].any()]
        desc = "the whole tile" if len(filled) == 16 else \
            f"rows {filled[0]}-{filled[-1]} loaded, rows {zero[0]}-{zero[-1]} left zero"
        say(f"result: {desc}")
    from .. import viz

    _figure(figures, "multicast_16x16_split", viz.multicast_split, (16, 16), 2)


WALKTHROUGHS = {
    "load": [load_000, load_001],
    "prefetch": [prefetch_000],
    "multicast": [multicast_000, multicast_001],
    "store": [store_001],
    "reduce": [reduce_001],
}


def extra_figures(figures: Path) -> None:
    """The pictures that belong to no single walkthrough: swizzles and a swizzled smem layout."""
    from .. import viz

    print()
    for span in (32, 64, 128):
        _figure(figures, f"swizzle_{span}B", viz.swizzle_chunks, span)
    sw = tk.composition(tk.Swizzle(3, 3, 3), tk.make_layout((I(8), I(64)), tk.LayoutRight))
    _figure(figures, "layout_sw128_bf16", viz.layout_grid, sw, period=8,
            title=f"{sw}: 128B swizzle on bf16 elements (color = 16-byte chunk of the unswizzled row)")
