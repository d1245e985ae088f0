"""CPU tests of the bandwidth kernels: NVRTC compiles them for sm_90a with the TMA instructions in their SASS and no
local-memory traffic; the layout planner picks the right path (flat / strided / transpose / fallback) without a GPU."""

from __future__ import annotations

import ctypes
import dataclasses
import math

import pytest

from tmakit.cuda import packed
from tmakit.kernels import KERNELS_DIR
from tmakit.kernels import bandwidth as bw


def _patch(monkeypatch, name, value):
    """Replace ``name`` in every module of the bandwidth package that uses it (the launcher builders)."""
    import sys

    for mod in [m for k, m in sys.modules.items() if k.startswith("tmakit.kernels.bandwidth")]:
        if hasattr(mod, name):
            monkeypatch.setattr(mod, name, value)


class FakeTensor:
    """Just enough of a torch tensor for the planner: shape, strides (elements), element size, address."""

    def __init__(self, shape, strides=None, elem=2, ptr=1 << 20):
        self.shape = tuple(shape)
        if strides is None:
            strides, acc = [], 1
            for n in reversed(self.shape):
                strides.insert(0, acc)
                acc *= n
        self._strides, self._elem, self._ptr = tuple(strides), elem, ptr

    def stride(self):
        return self._strides

    def element_size(self):
        return self._elem

    def data_ptr(self):
        return self._ptr

    def numel(self):
        return math.prod(self.shape)

    def permute(self, dims):
        return FakeTensor([self.shape[d] for d in dims], [self._strides[d] for d in dims], self._elem, self._ptr)


def test_plan_flat_contiguous():
    p = bw.plan_copy(FakeTensor((3, 5, 7)), FakeTensor((3, 5, 7)))
    assert p.kind == "flat" and p.dims == [(105, 1, 1)]


def test_plan_permute_keeping_inner_dim_is_strided_copy():
    x = FakeTensor((32, 64, 128, 128)).permute((0, 2, 1, 3))
    p = bw.plan_copy(x, FakeTensor(x.shape))
    assert p.kind == "strided"
    assert p.dims[0] == (128, 1, 1) and len(p.dims) == 4


def test_plan_transpose_when_inner_dim_moves():
    x = FakeTensor((32, 64, 128, 128)).permute((0, 3, 1, 2))
    p = bw.plan_copy(x, FakeTensor(x.shape))
    assert p.kind == "transpose"
    assert p.dims[0][1] == 1 and p.dims[1][2] == 1  # p = src inner, q = dst inner
    assert bw.plan_copy(x, FakeTensor(x.shape), allow_transpose=False).kind is None


@pytest.mark.parametrize("rows,n,pitch,elem,ok", [
    (4, 100, 112, 2, False), (64, 9, 16, 2, False), (8, 3, 8, 4, False), (4, 100, 112, 4, True), (2, 24, 32, 2, True)])
def test_dst_rows_ending_inside_a_16_byte_unit_are_not_tma_stored(rows, n, pitch, elem, ok):
    """TMA stores write whole 16-byte units of dst's rows (docs/HARDWARE.md §3): a padded dst whose rows end inside
    one (a bf16 (4, 100) view of 112-element rows: the H200 zeroed columns 100-103) is not planned for TMA; the op
    falls back. Rows of a whole number of units plan as before."""
    src = FakeTensor((rows, n), (pitch, 1), elem)
    dst = FakeTensor((rows, n), (pitch, 1), elem, ptr=1 << 24)
    p = bw.plan_copy(src, dst)
    assert (p.kind == "strided") == ok, p
    if not ok:
        assert "16-byte boundary" in p.reason
    t = bw.plan_copy(FakeTensor((n, rows), (1, pitch), elem), FakeTensor((n, rows), (rows, 1), elem, ptr=1 << 24))
    assert t.kind is None or (rows * elem) % 16 == 0  # a transpose's dst rows are `rows` long


@pytest.mark.parametrize("n,elem", [(1, 2), (17, 2), (4301841, 2), (300, 2), (1, 4), (5, 4), (4097, 8), (33, 1)])
def test_flat_maps_never_end_inside_a_16_byte_unit(monkeypatch, n, elem):
    """A contiguous pair whose size is not a whole number of 16-byte units: a map's store or reduction would update
    the bytes after dst up to the next unit (docs/HARDWARE.md §3; the H200 turned the 7 halves after a 1-element f16
    ``reduce_into(..., "min", method="store-reduce")`` into min(x, 0)). Store-reduce is refused with that rule (the
    op then combines or falls back); copies take the bulk engine, which stores the last bytes by ``st.global``.
    Whole units still plan a flat map."""
    from tmakit.tma.tensormap import DataType

    monkeypatch.setattr(bw, "sm_count", lambda t: 132)
    _patch(monkeypatch, "_kernel", lambda f, name, opts=(): object())
    dt = {1: DataType.UINT8, 2: DataType.FLOAT16, 4: DataType.UINT32, 8: DataType.UINT64}[elem]
    src, dst = FakeTensor((n,), elem=elem), FakeTensor((n,), elem=elem, ptr=1 << 30)
    src.device = dst.device = type("Device", (), {"index": 0})()
    red = bw.launcher_for(src, dst, op=bw.REDUCE_OPS.index("min"), dtype=dt, allow_transpose=False, engine="tensor")
    assert red.kind is None and "not a multiple of 16" in red.reason and "16-byte units" in red.reason
    cfg = dataclasses.replace(bw.COPY_CONFIG, engine="tensor", bulk_below=0)
    cp = bw.launcher_for(src, dst, config=cfg)
    assert cp.kind == "bulk", cp
    monkeypatch.setattr(bw, "_flat_launcher", lambda *a: type("Launcher", (), {})())  # maps need a driver
    whole, whole_dst = FakeTensor((n * 16,), elem=elem), FakeTensor((n * 16,), elem=elem, ptr=1 << 30)
    whole.device = whole_dst.device = src.device
    red = bw.launcher_for(whole, whole_dst, op=bw.REDUCE_OPS.index("min"), dtype=dt, allow_transpose=False,
                          engine="tensor")
    assert red.kind == "flat", red


def test_plan_2d_transpose_merges_nothing_and_keeps_rank_2():
    x = FakeTensor((4096, 1000)).permute((1, 0))
    p = bw.plan_copy(x, FakeTensor(x.shape))
    assert p.kind == "transpose" and len(p.dims) == 2


@pytest.mark.parametrize("src,reason", [
    (FakeTensor((64, 64), ptr=(1 << 20) + 8), "16-byte aligned"),
    (FakeTensor((64, 64), strides=(65, 1), elem=2), "multiple of 16"),
    (FakeTensor((64, 64), strides=(2, 2), elem=2), "no unit-stride"),
    (FakeTensor((64, 64), strides=(0, 1), elem=2), "broadcast"),
    (FakeTensor((2,) * 6, strides=(4096, 1024, 256, 64, 16, 1), elem=4), "at most 5"),
])
def test_plan_fallback_reasons(src, reason):
    p = bw.plan_copy(src, FakeTensor(src.shape, src.stride(), elem=src.element_size()))
    assert p.kind is None and reason in p.reason


def test_boxes_heuristic_limits():
    box = bw._boxes([256, 100000], 8, 32 * 1024)
    assert box == [256, 16]
    box = bw._boxes([9, 3, 1000], 2, 16 * 1024)
    assert box[0] == 8 and box[1] == 3 and all(1 <= b <= 256 for b in box)  # never larger than the tensor
    assert bw._boxes([7, 3], 2, 16 * 1024)[0] == 8  # inner dim under 16 bytes: one 16-byte box overhanging it


def test_transpose_config_wide_overrides_by_inner_extent():
    wide = bw.TransposeConfig(kq=4, consumers=8, xpose=2, wide=(("kq", 2), ("ctas_per_sm", 2)), wide_min=16)
    big = bw.plan_copy(FakeTensor((16384, 16384)).permute((1, 0)), FakeTensor((16384, 16384)))
    c = bw.transpose_config_for(big, wide)
    assert (c.kq, c.ctas_per_sm, c.consumers, c.xpose, c.wide) == (2, 2, 8, 2, ())
    x = FakeTensor((32, 64, 128, 128)).permute((0, 3, 1, 2))  # inner dim 128 elements = 2 slabs of 64
    narrow = bw.plan_copy(x, FakeTensor(x.shape))
    assert bw.transpose_config_for(narrow, wide) == wide
    edge = bw.plan_copy(FakeTensor((64, 1024)).permute((1, 0)), FakeTensor((1024, 64)))  # 1024 / 64 = 16 slabs
    assert bw.transpose_config_for(edge, wide).kq == 2
    big_only = dataclasses.replace(wide, wide_bytes=256 << 20)
    assert bw.transpose_config_for(edge, big_only) == big_only  # 128 KiB: too small
    assert bw.transpose_config_for(big, big_only).kq == 2  # 512 MiB
    mid = bw.plan_copy(FakeTensor((8192, 8192)).permute((1, 0)), FakeTensor((8192, 8192)))  # 128 MiB
    assert bw.transpose_config_for(mid, big_only).kq == 4
    d = bw.PERSISTENT_TRANSPOSE[2]  # 16384^2 bf16 takes the wide shape, 8192^2 and the permute do not
    assert bw.transpose_config_for(big, d).kq == 2 and bw.transpose_config_for(mid, d) == d
    assert bw.transpose_config_for(narrow, d) == d
    lean = bw.TRANSPOSE_CONFIG[2]  # one-slab lean tiles at 13 per SM, two slabs from 128 MiB wide
    assert lean.lean == 1 and (lean.kq, lean.resident) == (1, 12)
    assert bw.transpose_config_for(narrow) == lean and bw.transpose_config_for(edge) == lean  # 2 slabs; 128 KiB
    for wide_plan in (big, mid):
        c = bw.transpose_config_for(wide_plan)
        assert (c.kq, c.resident, c.lean, c.group, c.xpose) == (2, 8, 1, 16, 2)
    x4 = FakeTensor((32, 64, 256, 256)).permute((0, 3, 1, 2))  # 256 MiB but only 4 slabs wide: one-slab tiles
    assert bw.transpose_config_for(bw.plan_copy(x4, FakeTensor(x4.shape))) == lean


def test_grid_persistent_or_runs_of_tiles():
    c = bw.CopyConfig()
    assert bw._grid(c, 100000, 132) == 132 and bw._grid(c, 50, 132) == 50
    r = bw.CopyConfig(ctas_per_sm=2, tiles_per_cta=2)
    assert bw._grid(r, 32768, 132) == 16384 and bw._order(r) == 1
    assert bw._grid(r, 300, 132) == 264  # never fewer CTAs than the persistent grid
    assert bw._grid(r, 10, 132) == 10


def test_default_override_tuples_name_real_fields():
    for cfg in (bw.COPY_CONFIG, bw.REDUCE_CONFIG):
        flat = dataclasses.replace(cfg, **dict(cfg.flat), flat=())
        assert flat.tiles_per_cta > 0 and not flat.flat
    for cfg in (*bw.TRANSPOSE_CONFIG.values(), *bw.PERSISTENT_TRANSPOSE.values()):
        dataclasses.replace(cfg, **dict(cfg.wide), wide=())


def test_flat_overrides_for_contiguous_copies_and_combine_of_any_size():
    """Contiguous copies and combine reductions take the lean one-tile CTA at every size (measured ahead of torch
    from 64 KiB up); strided copies and store-reduce keep their configs; from 1 GiB the combine drops the lean CTA."""
    from tmakit.tma.tensormap import DataType

    flat, strided = bw.Plan("flat"), bw.Plan("strided")
    c = bw.COPY_CONFIG
    for size in (64 << 10, 1 << 20, 64 << 20, 1 << 30):
        got = bw.flat_config(flat, c, size)
        assert (got.engine, got.lean, got.piece, got.tiles_per_cta, got.pdl) == ("bulk", bw.Lean.ONE_TILE_ALL_THREADS,
                                                                                  4096, 1, 1)
    assert bw.flat_config(strided, c, 1 << 30) == c
    r = bw.REDUCE_CONFIG
    for size in (64 << 10, 16 << 20, 512 << 20):
        got = bw.flat_config(flat, r, size, 0, DataType.FLOAT32)  # combine add
        assert (got.tiles_per_cta, got.lean, got.pdl) == (1, bw.Lean.ONE_TILE_ALL_THREADS, 1)
    assert bw.flat_config(flat, r, 1 << 30, 0, DataType.FLOAT32).lean == bw.Lean.OFF  # flat_big
    store_reduce = dataclasses.replace(r, engine="tensor")
    assert bw.flat_config(flat, store_reduce, 1 << 30, 0, DataType.FLOAT32) == store_reduce
    assert bw.flat_config(flat, r, 1 << 30, 3, DataType.INT32) == r  # inc: store-reduce only


def test_transpose_default_is_one_tile_per_lean_cta(monkeypatch):
    """The transpose default: one CTA per tile (grid = tiles), 4 warps that all transpose, -DTP_LEAN=1, an input and
    an output image per CTA. 2-byte: one slab per tile, 12 per SM (2 x 8 KiB), or 2 slabs at 6 per SM (2 x 16 KiB)
    for tensors >= 128 MiB whose inner dim spans >= 16 slabs; 4-byte: 2 slabs, 12 per SM. The persistent shapes
    still build."""
    seen = []
    _patch(monkeypatch, "_kernel", lambda f, n, opts=(): seen.append(tuple(opts)) or object())
    _patch(monkeypatch, "MapTemplate", lambda tm: tm)
    _patch(monkeypatch, "_map", lambda *a, **k: None)
    for e, sizes, kq, per_sm in ((2, [4096, 4096], 1, 12), (4, [4096, 4096], 2, 12), (2, [128, 8192, 32], 1, 12),
                                 (2, [8192, 8192], 2, 6)):
        dims = [(sizes[0], 1, sizes[1])] + [(sizes[1], sizes[0], 1)] + [(n, 1 << 20, 1 << 20) for n in sizes[2:]]
        plan = bw.Plan("transpose", "", dims, e)
        launch = bw._transpose_launcher(plan, None, 132, 0, 0)
        t_ = 128 // e
        tiles = -(-sizes[0] // t_) * -(-sizes[1] // (kq * t_)) * (sizes[2] if len(sizes) > 2 else 1)
        assert launch.grid == launch.params.ntiles == tiles and launch.block == 128 and launch.params.kq == kq
        assert "-DTP_LEAN=1" in seen[-1] and "-DTP_CONSUMERS=4" in seen[-1]
        assert launch.smem >= 2 * (t_ * 128 * kq) + 1024
        assert (bw.SMEM_PER_SM + 1024) // (launch.smem + 1664) == per_sm
    plan = bw.Plan("transpose", "", [(4096, 1, 4096), (4096, 4096, 1)], 2)
    old = bw._transpose_launcher(plan, bw.PERSISTENT_TRANSPOSE[2], 132, 0, 0)
    assert "-DTP_LEAN=1" not in seen[-1] and old.block == 32 * 9


def test_reduce_default_one_2k_tile_per_four_warp_cta(monkeypatch):
    """The combine default from 32 MiB: one 2 KiB tile per lean CTA whose four warps all combine (one
    16-byte word per thread; bf16 add with bf16x2), the tile size a compile-time constant (no end tiles), shared
    memory padded so that 14 fit per SM by the padding arithmetic (13 by the driver's), launched with PDL."""
    from tmakit.tma.tensormap import DataType

    seen = []
    _patch(monkeypatch, "_kernel", lambda f, n, opts=(): seen.append(tuple(opts)) or object())
    for nbytes in (32 << 20, (256 << 20) + 4100):
        cfg = bw.flat_config(bw.Plan("flat"), bw.REDUCE_CONFIG, nbytes, 0, DataType.BFLOAT16)
        launch = bw._bulk_launcher(nbytes, 0, DataType.BFLOAT16, cfg, 132)
        p = launch.params
        assert launch.block == 128 and p.stages == 1 and launch.pdl
        assert {"-DBK_T1=2", "-DBK_T1_PIECE=2048", "-DBK_BF16X2=1", "-DBK_PDL=1716"} <= set(seen[-1])
        assert (bw.SMEM_PER_SM + 1024) // (launch.smem + 1664) == 14
        n16 = nbytes // 16 * 16
        assert p.piece == 2048 and p.main_tiles == p.tiles == -(-n16 // 2048)
        assert launch.grid == p.tiles  # one CTA per tile


def test_reduce_default_uses_plain_2k_tiles_from_1_gib():
    """``flat_big``: from 1 GiB the combine default is the plain one-tile shape (2 KiB tiles, not lean, no
    padding, no end tiles); below it, down to the smallest tensors, the lean 2 KiB shape; store-reduce is untouched."""
    from tmakit.tma.tensormap import DataType

    r = bw.REDUCE_CONFIG
    s5 = dataclasses.replace(r, flat=(("tiles_per_cta", 1), ("pieces", 1), ("piece", 2048), ("consumers", 1),
                                      ("stages", 1), ("ctas_per_sm", 24)), flat_big=(), flat_big_min=0)
    flat = bw.Plan("flat")
    for nbytes in (1 << 30, 4 << 30):
        big = bw.flat_config(flat, r, nbytes, 0, DataType.BFLOAT16)
        assert big == dataclasses.replace(bw.flat_config(flat, s5, nbytes, 0, DataType.BFLOAT16), flat_big_min=1 << 30)
    mid = bw.flat_config(flat, r, (1 << 30) - 16, 0, DataType.FLOAT32)
    assert mid.lean == 2 and mid.piece == 2048 and mid.consumers == 3 and mid.flat == () and mid.flat_big == ()
    assert bw.flat_config(flat, r, 64 << 10, 0, DataType.FLOAT32) == mid
    c = bw.CopyConfig(flat=(("stages", 3),), flat_min=1)
    assert bw.flat_config(flat, c, 1 << 40).stages == 3 and c.flat_big == ()


def test_param_structs_match_device_layout():
    # the .cu files static_assert the same sizes (NVRTC 13.0 has no offsetof)
    assert bw.StreamParams.main_tiles.offset == 72 and bw.StreamParams.fd.offset == 80
    assert ctypes.sizeof(bw.StreamParams) == 120
    assert bw.TransposeParams.ntiles.offset == 40 and bw.TransposeParams.counter.offset == 48
    assert bw.TransposeParams.fd.offset == 56 and ctypes.sizeof(bw.TransposeParams) == 128
    assert bw.BulkParams.tail.offset == 60 and bw.BulkParams.counter.offset == 64


nvrtc = pytest.importorskip("cuda.bindings.nvrtc")


@pytest.mark.parametrize("filename,expect", [
    ("stream.cu", {"UTMALDG", "UTMASTG", "UTMAREDG"}),
    ("transpose.cu", {"UTMALDG", "UTMASTG"}),
])
def test_kernels_compile_sm90a_with_tma_sass(filename, expect):
    from tmakit import cuda as tkc
    from tmakit.cuda import sass

    c = tkc.compile_file(KERNELS_DIR / filename)
    try:
        ops = sass.opcodes(c.cubin)
    except Exception as e:  # no disassembler in this environment
        pytest.skip(f"no nvdisasm/cuobjdump: {e}")
    assert expect <= set(ops), sorted(ops)
    assert not ({"LDL", "STL"} & set(ops)), "local-memory traffic in a bandwidth kernel"


@pytest.mark.parametrize("mode", [1, 2])
@pytest.mark.parametrize("dt, bf16x2", [(0, 0), (1, 0), (1, 1)])
def test_bulk_combine_dyn_and_bf16x2_variants(mode, dt, bf16x2):
    """The combine engine's dynamic tile counter (atomics on the counter, no local memory) and the packed bf16 add
    (HADD2 / HFMA2 on BF16_V2 pairs instead of fp32 unpack and repack)."""
    from tmakit import cuda as tkc
    from tmakit.cuda import sass

    c = tkc.compile_file(KERNELS_DIR / "bandwidth_bulk.cu", options=[
        f"-DBK_MODE={mode}", "-DBK_CONSUMERS=2", "-DBK_OP=0", f"-DBK_DT={dt}", f"-DBK_BF16X2={bf16x2}", "-DBK_DYN=8"])
    try:
        text = sass.disassemble(c.cubin)
    except Exception as e:  # no disassembler in this environment
        pytest.skip(f"no nvdisasm/cuobjdump: {e}")
    ops = sass.opcodes(text)
    assert ops["ATOMG"] + ops["RED"] > 0 and not ({"LDL", "STL"} & set(ops))
    assert ("BF16_V2" in text) == bool(bf16x2)


@pytest.mark.parametrize("op", [-1, 0])
def test_bulk_one_warp_mode_compiles_with_bulk_copies_both_ways(op):
    """bulk_mode 3 (one-warp CTAs): bulk loads and bulk stores, no block-wide barrier, no local memory."""
    from tmakit import cuda as tkc
    from tmakit.cuda import sass

    c = tkc.compile_file(KERNELS_DIR / "bandwidth_bulk.cu", options=["-DBK_MODE=3", f"-DBK_OP={op}", "-DBK_DT=1"])
    try:
        text = sass.disassemble(c.cubin)
    except Exception as e:  # no disassembler in this environment
        pytest.skip(f"no nvdisasm/cuobjdump: {e}")
    assert "UBLKCP.S.G" in text and "UBLKCP.G.S" in text and "BAR.SYNC" not in text
    assert not ({"LDL", "STL"} & set(sass.opcodes(text)))


def test_bulk_launcher_one_warp_mode_one_stage_and_resident_padding(monkeypatch):
    from tmakit.tma.tensormap import DataType

    _patch(monkeypatch, "_kernel", lambda f, n, opts=(): object())
    base = dataclasses.replace(bw.REDUCE_CONFIG, flat=(), piece=2048, pieces=1, tiles_per_cta=1, ctas_per_sm=16,
                               consumers=1)
    one = bw._bulk_launcher(256 << 20, 0, DataType.FLOAT32, dataclasses.replace(base, bulk_mode=3, stages=1), 132)
    assert one.block == 32 and one.params.stages == 1 and one.grid == (256 << 20) // 2048
    assert one.smem == 2 * 2048 + 1024  # src + dst stage and the alignment slack
    two = bw._bulk_launcher(256 << 20, 0, DataType.FLOAT32, base, 132)
    assert two.block == 64 and two.params.stages >= 1
    assert bw._bulk_launcher(256 << 20, 0, DataType.FLOAT32, dataclasses.replace(base, tiles_per_cta=2),
                             132).params.stages >= 2  # runs of 2 tiles refill: never one stage
    for res in (12, 16, 20, 24):
        padded = bw._bulk_launcher(256 << 20, 0, DataType.FLOAT32,
                                   dataclasses.replace(base, bulk_mode=3, stages=1, resident=res), 132)
        per_cta = padded.smem + 1664  # dynamic + static (rounded) + the 1 KiB the SM reserves per CTA
        assert (bw.SMEM_PER_SM + 1024) // per_cta == res, (res, padded.smem)
    assert bw.CopyConfig().resident == 0


@pytest.mark.parametrize("lag", [0, 1, 2, 3])
def test_copy_kernel_compiles_for_every_store_lag(lag):
    from tmakit import cuda as tkc

    tkc.compile_file(KERNELS_DIR / "stream.cu", options=[f"-DTMAKIT_STREAM_LAG={lag}"])


@pytest.mark.parametrize("coords", [0, 1, 2])
@pytest.mark.parametrize("mode", [0, 1, 2])
def test_transpose_kernel_compiles_for_every_coords_mode(coords, mode):
    from tmakit import cuda as tkc

    tkc.compile_file(KERNELS_DIR / "transpose.cu", options=[f"-DTP_COORDS={coords}", f"-DTP_MODE={mode}",
                                                                 "-DTP_CONSUMERS=8", "-DTP_NO=3"])


@pytest.mark.parametrize("xpose,expect", [(0, set()), (1, set()), (2, {"LDSM", "STSM"})])
@pytest.mark.parametrize("mode", [0, 2])
def test_transpose_kernel_smem_transposition_variants(xpose, expect, mode):
    from tmakit import cuda as tkc
    from tmakit.cuda import sass

    c = tkc.compile_file(KERNELS_DIR / "transpose.cu", options=[f"-DTP_XPOSE={xpose}", f"-DTP_MODE={mode}",
                                                                     "-DTP_CONSUMERS=8", "-DTP_NO=3"])
    try:
        ops = sass.opcodes(c.cubin)
    except Exception as e:  # no disassembler in this environment
        pytest.skip(f"no nvdisasm/cuobjdump: {e}")
    assert expect <= set(ops), sorted(ops)
    assert not ({"LDL", "STL"} & set(ops))


def test_bulk_launcher_lean_one_tile_cta(monkeypatch):
    """``CopyConfig.lean``: -DBK_T1 only for one tile of one piece per CTA in modes 2/3, one stage, one CTA per tile."""
    from tmakit.tma.tensormap import DataType

    seen = []
    _patch(monkeypatch, "_kernel", lambda f, n, opts=(): seen.append(tuple(opts)) or object())
    base = dataclasses.replace(bw.REDUCE_CONFIG, flat=(), piece=4096, pieces=1, tiles_per_cta=1, ctas_per_sm=24,
                               consumers=1, stages=1)
    for lean in (1, 2):
        launch = bw._bulk_launcher(256 << 20, 0, DataType.BFLOAT16, dataclasses.replace(base, lean=lean), 132)
        assert f"-DBK_T1={lean}" in seen[-1] and launch.block == 64 and launch.params.stages == 1
        assert launch.grid == launch.params.tiles == (256 << 20) // 4096
    m3 = bw._bulk_launcher(256 << 20, 0, DataType.FLOAT32, dataclasses.replace(base, lean=2, bulk_mode=3), 132)
    assert "-DBK_T1=2" in seen[-1] and m3.block == 32
    for other in (dict(tiles_per_cta=2, stages=2), dict(pieces=2), dict(bulk_mode=1)):  # lean does not apply
        bw._bulk_launcher(256 << 20, 0, DataType.FLOAT32, dataclasses.replace(base, lean=1, **other), 132)
        assert "-DBK_T1=0" in seen[-1]
    assert bw.CopyConfig().lean == 0 and bw.CopyConfig().end_piece == 0


@pytest.mark.parametrize("nbytes", [0, 10, 16, 100, 4096, 4097 * 33, (5 << 20) + 3, (9 << 20) + 14, 256 << 20])
@pytest.mark.parametrize("end", [(0, 0), (2048, 4 << 20), (1024, 8 << 20), (2048, 1 << 40), (3000, 1 << 20)])
def test_bulk_lean_tiles_cover_the_bytes_once(monkeypatch, nbytes, end):
    """The lean tile map (t < main_tiles: piece bytes at t * piece; then end tiles of `row` bytes from rest0, as
    run_t1 computes it) covers [0, n16) exactly once, in order, with no empty tile below p.tiles; extra CTAs of the
    grid (tile >= p.tiles) start at or past n16 and do nothing."""
    from tmakit.tma.tensormap import DataType

    _patch(monkeypatch, "_kernel", lambda f, n, opts=(): object())
    cfg = dataclasses.replace(bw.REDUCE_CONFIG, flat=(), piece=4096, pieces=1, tiles_per_cta=1, consumers=1,
                              stages=1, lean=1, end_piece=end[0], end_bytes=end[1])
    launch = bw._bulk_launcher(nbytes, 0, DataType.FLOAT32, cfg, 132)
    p = launch.params

    def tile(t):
        big = t < p.main_tiles
        off = t * p.piece if big else p.rest0 + (t - p.main_tiles) * p.row
        return off, min(p.n16 - off, p.piece if big else p.row)

    pos = 0
    for t in range(p.tiles):
        off, n = tile(t)
        assert off == pos and n > 0
        pos += n
    assert pos == p.n16 == nbytes // 16 * 16 and p.tail == nbytes % 16
    assert launch.grid >= p.tiles and tile(launch.grid - 1)[1] <= 0 or launch.grid == p.tiles
    if end[0] in (1024, 2048) and nbytes >= (256 << 20):
        assert p.row == end[0] and p.n16 - p.rest0 <= end[1] + p.piece


@pytest.mark.parametrize("mode, lean", [(2, 1), (2, 2), (3, 2)])
@pytest.mark.parametrize("op, dt", [(0, 1), (0, 0), (7, 5), (-1, 0)])
def test_bulk_lean_kernel_compiles_with_bulk_copies(mode, lean, op, dt):
    """The lean one-tile CTA: bulk loads and a bulk store, no local memory, fewer registers than the general CTA."""
    from tmakit import cuda as tkc
    from tmakit.cuda import sass

    opts = [f"-DBK_MODE={mode}", "-DBK_CONSUMERS=1", f"-DBK_OP={op}", f"-DBK_DT={dt}", f"-DBK_T1={lean}"]
    c = tkc.compile_file(KERNELS_DIR / "bandwidth_bulk.cu", options=opts)
    try:
        text = sass.disassemble(c.cubin)
    except Exception as e:  # no disassembler in this environment
        pytest.skip(f"no nvdisasm/cuobjdump: {e}")
    assert "UBLKCP.S.G" in text and "UBLKCP.G.S" in text
    assert not ({"LDL", "STL"} & set(sass.opcodes(text)))
    assert ("BAR.SYNC" in text) == (mode == 2)


def test_launch_config_structs_match_cuda_h():
    """ctypes mirrors of CUlaunchConfig / CUlaunchAttribute (cuda.h): sizes and offsets the driver reads."""
    assert ctypes.sizeof(packed._LaunchAttr) == 72 and packed._LaunchAttr.value.offset == 8
    assert ctypes.sizeof(packed._LaunchConfig) == 56
    assert (packed._LaunchConfig.smem.offset, packed._LaunchConfig.stream.offset, packed._LaunchConfig.attrs.offset,
            packed._LaunchConfig.nattrs.offset) == (24, 32, 40, 48)
    cfg = packed.launch_config(1000, 64, 19456, pdl=True)
    assert list(cfg.grid) == [1000, 1, 1] and list(cfg.block) == [64, 1, 1] and cfg.smem == 19456
    assert cfg.nattrs == 1 and cfg.attrs.contents.id == 6 and cfg.attrs.contents.value[0] == 1


def test_reduce_default_lean_launches_with_pdl(monkeypatch):
    """The default combine reduce from 32 MiB to 1 GiB: lean CTAs compiled with -DBK_PDL (the last wave of
    resident CTAs, 13 per SM x 132) and a launcher that launches with programmatic stream serialization; from
    1 GiB (session-5 shape, not lean) and below 32 MiB no PDL."""
    from tmakit.tma.tensormap import DataType

    seen = []
    _patch(monkeypatch, "_kernel", lambda f, n, opts=(): seen.append(tuple(opts)) or object())
    flat = bw.Plan("flat", "", [(1, 1, 1)], 2)
    for nbytes, want in ((256 << 20, True), (64 << 20, True), (1 << 30, False), (2 << 30, False)):
        cfg = bw.flat_config(flat, bw.REDUCE_CONFIG, nbytes, 0, DataType.BFLOAT16)
        launch = bw._bulk_launcher(nbytes, 0, DataType.BFLOAT16, cfg, 132)
        assert launch.pdl is want
        assert ("-DBK_PDL=1716" in seen[-1]) is want and any("BK_PDL" in o for o in seen[-1]) is want
    small = bw._bulk_launcher(1 << 20, 0, DataType.BFLOAT16, bw.REDUCE_CONFIG, 132)  # persistent shape
    assert small.pdl is False and not any("BK_PDL" in o for o in seen[-1])


def test_bulk_lean_pdl_kernel_waits_and_triggers():
    """With -DBK_PDL the lean CTA waits for the previous grid (ACQBULK = griddepcontrol.wait) and can let the next
    one launch (PREEXIT = griddepcontrol.launch_dependents); without it, neither."""
    from tmakit import cuda as tkc
    from tmakit.cuda import sass

    base = ["-DBK_MODE=2", "-DBK_CONSUMERS=1", "-DBK_OP=0", "-DBK_DT=1", "-DBK_T1=1"]
    texts = []
    for extra in ([], ["-DBK_PDL=1320"]):
        c = tkc.compile_file(KERNELS_DIR / "bandwidth_bulk.cu", options=base + extra)
        try:
            texts.append(sass.disassemble(c.cubin))
        except Exception as e:  # no disassembler in this environment
            pytest.skip(f"no nvdisasm/cuobjdump: {e}")
    plain, pdl = (set(sass.opcodes(t)) for t in texts)
    assert {"ACQBULK", "PREEXIT"} <= pdl and not ({"ACQBULK", "PREEXIT"} & plain)


def test_lean_transpose_falls_back_to_the_persistent_shape_past_the_grid_limit(monkeypatch):
    """One CTA per tile needs grid.x < 2^31: a tensor with more tiles takes the persistent shape."""
    seen = []
    _patch(monkeypatch, "_kernel", lambda f, n, opts=(): seen.append(tuple(opts)) or object())
    _patch(monkeypatch, "MapTemplate", lambda tm: tm)
    _patch(monkeypatch, "_map", lambda *a, **k: None)
    per = 256 // (64 * bw.TRANSPOSE_CONFIG[2].kq)  # tiles per (64 x 256) plane: 4 of one slab (the default)
    huge = bw.Plan("transpose", "", [(64, 1, 256), (256, 64, 1), ((1 << 31) // per, 1 << 14, 1 << 14)], 2)
    launch = bw._transpose_launcher(huge, None, 132, 0, 0)  # 2^31 tiles
    assert "-DTP_LEAN=1" not in seen[-1] and launch.grid <= 132 * 2
    fine = bw.Plan("transpose", "", [(64, 1, 256), (256, 64, 1), ((1 << 31) // per - 1, 1 << 14, 1 << 14)], 2)
    assert bw._transpose_launcher(fine, None, 132, 0, 0).grid == (1 << 31) - per and "-DTP_LEAN=1" in seen[-1]


def test_strided_copies_take_the_strided_overrides(monkeypatch):
    """A permute that keeps the unit-stride dim plans as "strided" and launches one 8 KiB box per CTA (grid = boxes,
    `tiles_per_cta` 1, no L2 promotion); contiguous copies and store-reduce never see the `strided` overrides."""
    seen = []
    _patch(monkeypatch, "_kernel", lambda f, n, opts=(): seen.append((f, tuple(opts))) or object())
    _patch(monkeypatch, "MapTemplate", lambda tm: tm)
    maps = []
    _patch(monkeypatch, "_map", lambda *a, **k: maps.append((a, k)))
    _patch(monkeypatch, "sm_count", lambda t: 132)
    monkeypatch.setattr(bw, "_launchers", {})

    class Dev:
        index = 0

    x = FakeTensor((32, 64, 128, 128)).permute((0, 2, 1, 3))
    y = FakeTensor((32, 128, 64, 128))
    for t in (x, y):
        t.device = Dev()
    launch = bw.launcher_for(x, y)
    p = launch.params
    box = [p.box[i] for i in range(p.rank)]
    assert math.prod(box) * 2 == 8192 and launch.grid == p.main_tiles  # one box per CTA
    assert seen[-1][0] == "stream.cu" and "-DTMAKIT_STREAM_ONE=1" in seen[-1][1]  # the lean one-box CTA
    assert p.stages == 1 and (bw.SMEM_PER_SM + 1024) // (launch.smem + 1664) == 12  # 12 per SM
    assert all(k.get("l2") == 0 for _, k in maps[-2:])
    c = bw.COPY_CONFIG
    assert bw.flat_config(bw.Plan("flat"), c, 1 << 30).box_bytes == c.box_bytes  # contiguous: untouched
    assert bw.REDUCE_CONFIG.strided == ()


def test_configs_are_values_passed_to_launcher_for(monkeypatch):
    """A config passed to ``launcher_for`` plans its own launcher (cached under that config); calls without one get
    the default's launcher, whatever was planned meanwhile. The default tables cannot be changed in place."""
    seen = []
    _patch(monkeypatch, "_kernel", lambda f, n, opts=(): seen.append((f, tuple(opts))) or object())
    _patch(monkeypatch, "MapTemplate", lambda tm: tm)
    _patch(monkeypatch, "_map", lambda *a, **k: None)
    _patch(monkeypatch, "sm_count", lambda t: 132)
    monkeypatch.setattr(bw, "_launchers", {})

    class Dev:
        index = 0

    x = FakeTensor((32, 64, 128, 128)).permute((0, 2, 1, 3))
    y = FakeTensor((32, 128, 64, 128))
    for t in (x, y):
        t.device = Dev()
    default = bw.launcher_for(x, y)
    assert "-DTMAKIT_STREAM_ONE=1" in seen[-1][1]  # the shipped strided shape: the lean one-box CTA
    plain = bw.launcher_for(x, y, config=dataclasses.replace(bw.COPY_CONFIG, strided=()))
    assert plain is not default and "-DTMAKIT_STREAM_ONE=1" not in seen[-1][1]
    assert bw.launcher_for(x, y) is default and len(seen) == 2
    with pytest.raises(TypeError):
        bw.TRANSPOSE_CONFIG[2] = bw.TRANSPOSE_CONFIG[4]
    with pytest.raises(dataclasses.FrozenInstanceError):
        bw.COPY_CONFIG.stages = 1


def test_stream_one_box_cta_compiles_with_tma_load_and_store():
    """``-DTMAKIT_STREAM_ONE=1`` (the lean one-box CTA of ``CopyConfig.lean`` on the tensor engine): the SASS still
    holds the tensor load and the tensor store / store-reduce, and no local memory."""
    from tmakit import cuda as tkc
    from tmakit.cuda import sass

    c = tkc.compile_file(KERNELS_DIR / "stream.cu", options=["-DTMAKIT_STREAM_ONE=1"])
    try:
        ops = sass.opcodes(c.cubin)
    except Exception as e:  # no disassembler in this environment
        pytest.skip(f"no nvdisasm/cuobjdump: {e}")
    assert {"UTMALDG", "UTMASTG", "UTMAREDG"} <= set(ops), sorted(ops)
    assert not ({"LDL", "STL"} & set(ops))


def test_stream_launcher_lean_one_box_per_cta(monkeypatch):
    """``lean`` with ``tiles_per_cta=1`` on the tensor engine: grid = tiles (+ the tail box), one stage, the
    ``-DTMAKIT_STREAM_ONE=1`` kernel, shared memory padded to ``resident``; without ``lean`` the persistent grid."""
    seen = []
    _patch(monkeypatch, "_kernel", lambda f, n, opts=(): seen.append(tuple(opts)) or object())
    _patch(monkeypatch, "MapTemplate", lambda tm, off=0: tm)
    _patch(monkeypatch, "_map", lambda *a, **k: None)
    base = dataclasses.replace(bw.COPY_CONFIG, strided=(), tiles_per_cta=1, box_bytes=8192, ctas_per_sm=12, stages=2)
    dims = [(128, 1, 1), (128, 128, 64 * 128), (64, 128 * 128, 128), (32, 64 * 128 * 128, 64 * 128 * 128)]
    plan = bw.Plan("strided", "", dims, 2)
    lean = bw._strided_launcher(plan, -1, None, dataclasses.replace(base, lean=1, resident=16), 132, 0, 0)
    assert "-DTMAKIT_STREAM_ONE=1" in seen[-1]
    box_bytes = lean.params.main_bytes
    assert box_bytes == 8192 and lean.grid == lean.params.main_tiles == 32 * 64 * 128 * 128 * 2 // box_bytes
    assert lean.params.stages == 1 and (bw.SMEM_PER_SM + 1024) // (lean.smem + 1664) == 16
    old = bw._strided_launcher(plan, -1, None, base, 132, 0, 0)
    assert "-DTMAKIT_STREAM_ONE=1" not in seen[-1] and old.params.stages == 2
    flat = bw._flat_launcher((64 << 20) + 6, 2, -1, None, dataclasses.replace(base, lean=1), 132, 0, 0)
    assert flat.grid == flat.params.main_tiles + 1 and flat.params.tail_bytes > 0  # the tail box has its own CTA


@pytest.mark.parametrize("consumers", [2, 4, 8])
def test_lean_transpose_in_place_compiles_to_ldmatrix_stmatrix(consumers):
    """``TransposeConfig.inplace`` (``-DTP_INPLACE=1``): the 8 x 8 blocks stay in registers across the block
    barrier (no local memory for any warp count) and go back with stmatrix.trans."""
    from tmakit import cuda as tkc
    from tmakit.cuda import sass

    c = tkc.compile_file(KERNELS_DIR / "transpose.cu", options=[
        "-DTP_LEAN=1", "-DTP_INPLACE=1", "-DTP_XPOSE=2", f"-DTP_CONSUMERS={consumers}"])
    try:
        ops = sass.opcodes(c.cubin)
    except Exception as e:  # no disassembler in this environment
        pytest.skip(f"no nvdisasm/cuobjdump: {e}")
    assert {"LDSM", "STSM", "UTMALDG", "UTMASTG"} <= set(ops), sorted(ops)
    assert not ({"LDL", "STL"} & set(ops))


def test_lean_transpose_in_place_launcher_halves_shared_memory(monkeypatch):
    """In place: one image per CTA (twice the CTAs per SM), only for 2-byte elements with xpose 2 and kq <= 2."""
    seen = []
    _patch(monkeypatch, "_kernel", lambda f, n, opts=(): seen.append(tuple(opts)) or object())
    _patch(monkeypatch, "MapTemplate", lambda tm: tm)
    _patch(monkeypatch, "_map", lambda *a, **k: None)
    plan = bw.Plan("transpose", "", [(4096, 1, 4096), (4096, 4096, 1)], 2)
    d = bw.TRANSPOSE_CONFIG[2]
    two = bw._transpose_launcher(plan, dataclasses.replace(d, kq=2, inplace=0, resident=0), 132, 0, 0)
    one = bw._transpose_launcher(plan, dataclasses.replace(d, kq=2, inplace=1, resident=0), 132, 0, 0)
    assert "-DTP_INPLACE=1" in seen[-1] and "-DTP_INPLACE=1" not in seen[-2]
    assert one.smem == 2 * 64 * 128 + 1024 and two.smem == 4 * 64 * 128 + 1024
    f32 = bw.Plan("transpose", "", [(4096, 1, 4096), (4096, 4096, 1)], 4)
    bw._transpose_launcher(f32, dataclasses.replace(bw.TRANSPOSE_CONFIG[4], inplace=1), 132, 0, 0)
    assert "-DTP_INPLACE=1" not in seen[-1]  # 4-byte elements: the scalar path, never in place


def test_plain_transpose_plans_what_tma_cannot_describe():
    """Transposes whose rows are not 16-byte multiples (or whose base is off 16 bytes) plan as ``plain``: dims (p,
    q, batch) in elements; same-unit-dim pairs, 4+ dims and broadcasts do not."""
    torch = pytest.importorskip("torch")
    from tmakit.kernels.bandwidth import plan_plain_transpose

    x = torch.zeros(91, 58)  # rows of 232 bytes
    p = plan_plain_transpose(x.t(), torch.zeros(58, 91))
    assert p.kind == "plain" and p.dims == [(58, 1, 91), (91, 58, 1), (1, 0, 0)] and p.elem == 4
    b = torch.zeros(3, 17, 5, dtype=torch.float16)
    p = plan_plain_transpose(b.transpose(1, 2), torch.zeros(3, 5, 17, dtype=torch.float16))
    assert p.dims == [(5, 1, 17), (17, 5, 1), (3, 85, 85)] and p.elem == 2
    assert plan_plain_transpose(x[:, :32], torch.zeros(91, 32)) is None  # same unit-stride dim: a strided copy
    assert plan_plain_transpose(torch.zeros(2, 3, 4, 5).permute(3, 2, 1, 0), torch.zeros(5, 4, 3, 2)) is None
    assert plan_plain_transpose(torch.zeros(4, 1).expand(4, 6).t(), torch.zeros(6, 4)) is None
    assert plan_plain_transpose(torch.zeros(0, 5).t(), torch.zeros(5, 0)) is None


def test_plain_transpose_params_match_the_kernel_struct():
    """The ctypes struct and plain_transpose.cu's PlainTransposeParams list the same 64-bit fields in one order."""
    import re

    from tmakit.kernels import KERNELS_DIR
    from tmakit.kernels.bandwidth.transpose import PlainTransposeParams

    src = (KERNELS_DIR / "plain_transpose.cu").read_text()
    body = re.search(r"struct PlainTransposeParams \{(.*?)\};", src, re.S).group(1)
    names = [n for line in body.splitlines() for n in re.findall(r"i64 ([\w, ]+);", line.split("//")[0])]
    fields = [f.strip() for n in names for f in n.split(",")]
    assert fields == [f for f, _ in PlainTransposeParams._fields_] and ctypes.sizeof(PlainTransposeParams) == 8 * 9


def test_plain_transpose_packs_stores_only_where_every_row_is_word_aligned():
    from tmakit.kernels.bandwidth.plan import Plan
    from tmakit.kernels.bandwidth.transpose import plain_store_pack

    def plan(elem, d_p, n_b=1, d_b=0):
        return Plan("plain", dims=[(100, 1, d_p), (33, 100, 1), (n_b, 5000, d_b)], elem=elem)

    assert plain_store_pack(plan(2, 100), 0x1000) == 2  # bf16 rows of 200 bytes
    assert plain_store_pack(plan(2, 101), 0x1000) == 1  # rows of 202 bytes: every other row off the word
    assert plain_store_pack(plan(1, 100), 0x1000) == 4 and plain_store_pack(plan(1, 102), 0x1000) == 1
    assert plain_store_pack(plan(2, 100), 0x1008) == 1  # base off 16 bytes
    assert plain_store_pack(plan(2, 100, n_b=3, d_b=3301), 0x1000) == 1  # odd batch stride
    assert plain_store_pack(plan(2, 100, n_b=3, d_b=3300), 0x1000) == 2
    assert plain_store_pack(plan(4, 100), 0x1000) == 1 and plain_store_pack(plan(8, 100), 0x1000) == 1
