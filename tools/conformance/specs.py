"""Random tensor-map specs: mostly valid ones with edge mutations (validator vs driver), and maps the seed kernels
can run (emulator vs hardware)."""

from __future__ import annotations

import numpy as np


def _rand_spec(rng, tmm):
    """A random, often valid TensorMap spec as a dict of fields."""
    DT = tmm.DataType
    dtype = DT(int(rng.integers(0, 16))) if rng.random() < 0.25 else DT(int(rng.choice(
        [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12])))
    bits = tmm.DTYPE_BITS[dtype]
    eb = max(1, bits // 8)
    mode = "im2col" if rng.random() < 0.2 else "tiled"
    rank = int(rng.integers(3, 6)) if mode == "im2col" else int(rng.integers(1, 6))
    interleave = 0
    if rank >= 3 and rng.random() < 0.15:
        interleave = int(rng.integers(1, 3))
    swz = int(rng.choice([0, 0, 1, 2, 3, 3])) if rng.random() < 0.93 else int(rng.integers(4, 7))
    if interleave == 2 and rng.random() < 0.8:
        swz = 1
    span = {0: 256, 1: 32, 2: 64, 3: 128}.get(swz, 128)
    packed = dtype in (DT.U4_ALIGN8B, DT.U4_ALIGN16B, DT.U6_ALIGN16B)
    # inner box: a multiple of 16 bytes that fits the span
    inner_units = max(1, int(rng.integers(1, max(2, min(span, 256 * eb) // 16 + 1))))
    box0 = min(256, max(1, inner_units * 16 // eb))
    if packed:
        box0 = 128
    dims = [int(rng.integers(1, 600)) for _ in range(rank)]
    if packed:
        dims[0] = 128 * int(rng.integers(1, 4))
    align = 32 if (interleave == 2 or dtype in (DT.U4_ALIGN16B, DT.U6_ALIGN16B)) else 16
    strides, s = [], max(1, dims[0] * bits // 8)
    for i in range(1, rank):
        s = -(-s // align) * align + align * int(rng.integers(0, 3))
        strides.append(s)
        s *= dims[i]
        if s >= 2**39:
            s = 2**20
    box = [box0] + [int(rng.integers(1, 257)) if rng.random() < 0.3 else int(rng.integers(1, 33))
                    for _ in range(rank - 1)]
    es = [1] + [int(rng.integers(1, 9)) if rng.random() < 0.3 else 1 for _ in range(rank - 1)]
    floaty = dtype in (DT.FLOAT16, DT.FLOAT32, DT.FLOAT64, DT.BFLOAT16, DT.FLOAT32_FTZ, DT.TFLOAT32,
                       DT.TFLOAT32_FTZ)
    oob = 1 if floaty and rng.random() < 0.3 else 0
    addr = 256 * int(rng.integers(0, 2**30))
    spec = dict(dtype=dtype, global_dim=dims, global_strides=strides, box_dim=box, element_strides=es,
                interleave=interleave, swizzle=swz, l2_promotion=int(rng.integers(0, 4)), oob_fill=oob,
                global_address=addr, mode=mode)
    if mode == "im2col":
        lo_hi = {3: 32768, 4: 128, 5: 16}[rank]
        nsp = rank - 2
        lo = [int(rng.integers(-min(lo_hi, 4), 1)) for _ in range(nsp)]
        up = [int(rng.integers(0, min(lo_hi, 4))) for _ in range(nsp)]
        spec.update(pixel_box_lower_corner=lo, pixel_box_upper_corner=up,
                    channels_per_pixel=box0, pixels_per_column=int(rng.integers(1, 257)))
    return spec


def _mutate(rng, spec):
    """Set 1 field to an edge value (or change the rank)."""
    rank = len(spec["global_dim"])
    what = rng.integers(0, 16)
    i = int(rng.integers(0, rank))
    pick = lambda xs: int(rng.choice(xs))  # noqa: E731
    if what == 0:
        spec["global_dim"][i] = pick([0, 1, 2, 2**31, 2**32 - 1, 2**32, 2**32 + 1])
    elif what == 1 and rank > 1:
        j = int(rng.integers(0, rank - 1))
        spec["global_strides"][j] = pick([0, 8, 16, 24, 32, 48, 100, 112, 2**39, 2**40 - 32, 2**40 - 16, 2**40,
                                          2**40 + 16, 2**41])
    elif what == 2:
        spec["box_dim"][i] = pick([0, 1, 2, 3, 8, 128, 255, 256, 257, 512])
    elif what == 3:
        spec["box_dim"][0] = pick([1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 96, 128, 160, 256])
    elif what == 4:
        spec["element_strides"][i] = pick([0, 1, 2, 3, 7, 8, 9, 16])
    elif what == 5:
        spec["interleave"] = pick([0, 1, 2])
    elif what == 6:
        spec["swizzle"] = pick([0, 1, 2, 3, 4, 5, 6])
    elif what == 7:
        spec["oob_fill"] = pick([0, 1])
    elif what == 8:
        spec["global_address"] = pick([0, 8, 16, 24, 32, 48, 64, 96, 128, 256, 2**47 + 16, 2**47 + 128,
                                       2**63 + 256, 2**64 - 256])
    elif what == 9:
        spec["dtype"] = int(rng.integers(0, 16))
    elif what == 10:  # rank change, lists kept consistent
        new = pick([1, 2, 3, 4, 5, 6]) if spec["mode"] == "tiled" else pick([1, 2, 3, 4, 5, 6])
        while len(spec["global_dim"]) < new:
            spec["global_dim"].append(int(rng.integers(1, 16)))
            spec["global_strides"].append(16 * int(rng.integers(1, 2**16)))
            spec["box_dim"].append(int(rng.integers(1, 8)))
            spec["element_strides"].append(1)
        while len(spec["global_dim"]) > new:
            for key in ("global_dim", "box_dim", "element_strides"):
                spec[key].pop()
            if spec["global_strides"]:
                spec["global_strides"].pop()
        if spec["mode"] == "im2col":
            n = max(0, new - 2)
            spec["pixel_box_lower_corner"] = (spec["pixel_box_lower_corner"] + [0] * 3)[:n]
            spec["pixel_box_upper_corner"] = (spec["pixel_box_upper_corner"] + [0] * 3)[:n]
    elif what == 11:
        spec["l2_promotion"] = pick([0, 1, 2, 3])
    elif what == 12 and spec["mode"] == "im2col":
        n = len(spec["pixel_box_lower_corner"])
        if n:
            j = int(rng.integers(0, n))
            edge = {3: 32768, 4: 128, 5: 16}.get(rank, 16)
            key = "pixel_box_lower_corner" if rng.random() < 0.5 else "pixel_box_upper_corner"
            spec[key][j] = pick([-edge - 1, -edge, -1, 0, 1, edge - 1, edge, -(2**15), 2**15 - 1])
    elif what == 13 and spec["mode"] == "im2col":
        spec["channels_per_pixel"] = pick([0, 1, 2, 4, 8, 16, 32, 64, 128, 255, 256, 257])
    elif what == 14 and spec["mode"] == "im2col":
        spec["pixels_per_column"] = pick([0, 1, 2, 255, 256, 1023, 1024, 1025, 2048])
    elif what == 15 and spec["mode"] == "im2col":  # zero-area box
        n = len(spec["pixel_box_lower_corner"])
        if n:
            j = int(rng.integers(0, n))
            spec["global_dim"][j + 1] = 1
            spec["pixel_box_lower_corner"][j] = 0
            spec["pixel_box_upper_corner"][j] = -1
    return spec


LOAD_DTYPES = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12]
FLOATY = {6, 7, 8, 9, 10, 11, 12}


class Gmem:
    """A device buffer with random contents and its host copy (index 0 = the tensor map's global_address)."""

    def __init__(self, tkc, rng, nbytes, offset):
        self.nbytes = nbytes + offset
        self.dev = tkc.DeviceBuffer(self.nbytes + 256)
        self.host = rng.integers(0, 256, self.nbytes + 256, dtype=np.uint8)
        self.dev.upload(self.host.tobytes())
        self.offset = offset

    @property
    def address(self):
        return self.dev.ptr + self.offset

    def view(self):
        return self.host[self.offset:].copy()

    def device_view(self):
        return np.frombuffer(self.dev.download(), np.uint8)[self.offset:]


def _fits(tmm, spec, max_box_bytes) -> bool:
    """Whether ``spec`` is a valid sm_90 map whose box fits ``max_box_bytes`` of shared memory."""
    tm = tmm.TensorMap(global_address=1 << 20, **spec)
    try:
        tm.validate("sm_90")
    except Exception:
        return False
    return tm.smem_bytes <= max_box_bytes


def _rand_tiled_for_hw(rng, tmm, max_box_bytes=16384, allow_interleave=False):
    # Interleaved layouts are off by default: the emulator refuses them (the H200 fills a different, larger shared
    # area than the dense-row model; first run: crashed chunks with CUDA_ERROR_ILLEGAL_ADDRESS).
    """A random valid tiled map small enough for the fuzz, as (spec without address, total bytes)."""
    DT = tmm.DataType
    for _ in range(1000):
        dtype = DT(int(rng.choice(LOAD_DTYPES)))
        eb = tmm.DTYPE_BITS[dtype] // 8
        rank = int(rng.integers(1, 6))
        interleave = 0
        if allow_interleave and rank >= 3 and rng.random() < 0.1:
            interleave = int(rng.integers(1, 3))
        swz = int(rng.integers(0, 4))
        if interleave == 2:
            swz = 1
        span = {0: 256, 1: 32, 2: 64, 3: 128}[swz]
        max_inner = min(span, 256 * eb) if swz else min(256 * eb, 512)
        inner = 16 * int(rng.integers(1, max_inner // 16 + 1))
        box0 = inner // eb
        if box0 > 256:
            continue
        if interleave:
            box0 = int(rng.integers(1, 9)) * (16 // eb if eb <= 16 else 1)
        dims = [int(rng.integers(1, 80)) for _ in range(rank)]
        dims[0] = int(rng.integers(max(1, box0 // 2), box0 * 3 + 2))
        align = 32 if interleave == 2 else 16
        strides, s = [], dims[0] * eb
        for i in range(1, rank):
            s = -(-s // align) * align + align * int(rng.integers(0, 2))
            strides.append(s)
            s *= dims[i]
        total = s if rank > 1 else dims[0] * eb
        if total > (8 << 20):
            continue
        box = [box0] + [int(rng.integers(1, min(dims[i] + 4, 33))) for i in range(1, rank)]
        es = [1] + [int(rng.choice([1, 1, 1, 2, 3, 4, 8])) for _ in range(rank - 1)]
        if rng.random() < 0.1:
            es[0] = int(rng.integers(1, 4))
        oob = 1 if int(dtype) in FLOATY and rng.random() < 0.3 else 0
        spec = dict(dtype=dtype, global_dim=dims, global_strides=strides, box_dim=box, element_strides=es,
                    interleave=interleave, swizzle=swz, l2_promotion=int(rng.integers(0, 4)), oob_fill=oob)
        if _fits(tmm, spec, max_box_bytes):
            return spec, total
    raise RuntimeError("could not generate a map")


def _rand_im2col_for_hw(rng, tmm, max_box_bytes=16384, inside=False):
    """A random valid im2col map as (spec, bytes); ``inside``: pixel-box corners inside the tensor (lower >= 0,
    upper <= 0, box not empty), the only maps im2col stores take without trapping."""
    DT = tmm.DataType
    for _ in range(2000):
        dtype = DT(int(rng.choice(LOAD_DTYPES)))
        eb = tmm.DTYPE_BITS[dtype] // 8
        rank = int(rng.integers(3, 6))
        nsp = rank - 2
        swz = int(rng.integers(0, 4))
        span = {0: 256, 1: 32, 2: 64, 3: 128}[swz]
        cmax = min(256, (span if swz else 256 * eb) // eb)
        cpp = (16 // eb if eb < 16 else 1) * int(rng.integers(1, max(2, cmax * eb // 16 + 1)))
        if cpp > cmax or cpp < 1:
            continue
        C = int(rng.integers(cpp, cpp * 3 + 1))
        spatial = [int(rng.integers(1, {3: 40, 4: 12, 5: 6}[rank])) for _ in range(nsp)]
        N = int(rng.integers(1, 4))
        dims = [C] + spatial + [N]
        strides, s = [], C * eb
        for i in range(1, rank):
            s = -(-s // 16) * 16 + 16 * int(rng.integers(0, 2))
            strides.append(s)
            s *= dims[i]
        if s > (8 << 20):
            continue
        rng_c = {3: 8, 4: 4, 5: 3}[rank]
        lo = [int(rng.integers(-rng_c, 1)) for _ in range(nsp)]
        up = [int(rng.integers(-rng_c, rng_c)) for _ in range(nsp)]
        if inside:
            lo = [int(rng.integers(0, min(3, d))) for d in spatial]
            up = [-int(rng.integers(0, d - x)) for d, x in zip(spatial, lo)]
        es = [1] + [int(rng.choice([1, 1, 2])) for _ in range(rank - 1)]
        oob = 1 if int(dtype) in FLOATY and rng.random() < 0.3 else 0
        spec = dict(dtype=dtype, global_dim=dims, global_strides=strides, box_dim=[cpp] + [1] * (rank - 1),
                    element_strides=es, swizzle=swz, oob_fill=oob, mode="im2col", pixel_box_lower_corner=lo,
                    pixel_box_upper_corner=up, channels_per_pixel=cpp, pixels_per_column=int(rng.integers(1, 65)))
        if _fits(tmm, spec, max_box_bytes):
            return spec, s
    raise RuntimeError("could not generate an im2col map")


def _rand_interleave_basics(rng, tmm):
    """(dtype, element bytes, rank, interleave, chunk bytes, swizzle) of a random interleaved map (32B needs SW32)."""
    dtype = tmm.DataType(int(rng.choice(LOAD_DTYPES)))
    rank = int(rng.integers(3, 6))  # the draw order of sessions 9-11, so their seeds replay the same maps
    il = int(rng.integers(1, 3))
    swz = 1 if il == 2 else int(rng.integers(0, 4))
    return dtype, tmm.DTYPE_BITS[dtype] // 8, rank, il, 16 * il, swz


def _chunked_strides(rng, dims, chunk, first_max):
    """Byte strides of dims 1.. of an interleaved map (the first 1..first_max-1 chunks, each next one the previous
    extent plus 0-2 chunks) and the bytes its boxes can reach (dim 0 counts chunks)."""
    strides, s = [], chunk * int(rng.integers(1, first_max))
    for i in range(1, len(dims)):
        strides.append(s)
        s = s * dims[i] + chunk * int(rng.integers(0, 3))
    return strides, sum((d - 1) * st for d, st in zip(dims[1:], strides)) + dims[0] * chunk


def _rand_interleaved_for_hw(rng, tmm, max_box_bytes=16384):
    """A random valid INTERLEAVE_16B/32B tile map (half of them with element strides 1..3 on dims 1.. and 1..4 on
    dim 0, which steps over chunks), as (spec, bytes the loads can reach): dim 0 counts 16/32-byte chunks on the
    H200, so a row reaches globalDim[0] chunks."""
    for _ in range(2000):
        dtype, eb, rank, il, chunk, swz = _rand_interleave_basics(rng, tmm)
        box0 = max(1, 16 // eb) * int(rng.integers(1, 5))
        dims = [int(rng.integers(1, 12))] + [int(rng.integers(1, {3: 24, 4: 10, 5: 6}[rank])) for _ in range(rank - 1)]
        strides, reach = _chunked_strides(rng, dims, chunk, 5)
        if reach > (8 << 20):
            continue
        box = [box0] + [int(rng.integers(1, min(dims[i] + 3, 9))) for i in range(1, rank)]
        oob = 1 if int(dtype) in FLOATY and rng.random() < 0.3 else 0
        es = [1] * rank if rng.random() < 0.5 else [int(rng.integers(1, 5))] + [int(rng.integers(1, 4))
                                                                                for _ in range(rank - 1)]
        spec = dict(dtype=dtype, global_dim=dims, global_strides=strides, box_dim=box, element_strides=es,
                    interleave=il, swizzle=swz, l2_promotion=int(rng.integers(0, 4)), oob_fill=oob)
        if _fits(tmm, spec, max_box_bytes):
            return spec, reach
    raise RuntimeError("could not generate an interleaved map")


def _rand_interleaved_im2col_for_hw(rng, tmm, max_box_bytes=16384, inside=False):
    """A random valid INTERLEAVE_16B/32B im2col map (element strides 1: the emulator refuses others), as (spec,
    bytes the loads can reach). ``inside``: pixel-box corners inside the tensor (what stores take)."""
    for _ in range(2000):
        dtype, eb, rank, il, chunk, swz = _rand_interleave_basics(rng, tmm)
        dims = [int(rng.integers(1, 6))] + [int(rng.integers(1, {3: 12, 4: 8, 5: 5}[rank])) for _ in range(rank - 1)]
        strides, reach = _chunked_strides(rng, dims, chunk, 4)
        if reach > (8 << 20):
            continue
        spatial = dims[:rank - 2]  # the chunk dim and dims 1..rank-3 (coord_rules.im2col_spatial_dims)
        lo = [int(rng.integers(-3, 1)) for _ in spatial]
        up = [int(rng.integers(-3, 3)) for _ in spatial]
        if inside:
            lo = [int(rng.integers(0, min(3, d))) for d in spatial]
            up = [-int(rng.integers(0, d - x)) for d, x in zip(spatial, lo)]
        cpp = max(1, chunk // eb) * int(rng.integers(1, 3))
        oob = 1 if int(dtype) in FLOATY and rng.random() < 0.3 else 0
        spec = dict(dtype=dtype, global_dim=dims, global_strides=strides, box_dim=[cpp] + [1] * (rank - 1),
                    element_strides=[1] * rank, interleave=il, swizzle=swz, oob_fill=oob, mode="im2col",
                    pixel_box_lower_corner=lo, pixel_box_upper_corner=up, channels_per_pixel=cpp,
                    pixels_per_column=int(rng.integers(1, 65)))
        if _fits(tmm, spec, max_box_bytes):
            return spec, reach
    raise RuntimeError("could not generate an interleaved im2col map")


def _rand_coords(rng, tm, nonneg=False):
    """Start coordinates around the tensor (negative and past the end); the innermost one on a 16-byte boundary and
    im2col spatial starts inside the pixel box (others trap, see the probes). ``nonneg``: no negative starts
    (stores)."""
    from tmakit.tma.coord_rules import im2col_pixel_box, im2col_spatial_dims

    spatial = im2col_spatial_dims(tm) if tm.mode == "im2col" else ()
    out = []
    for i, d in enumerate(tm.global_dim):
        b = tm.box_dim[i] if tm.mode == "tiled" else 4
        lo = 0 if nonneg else -b - 2
        c = int(rng.integers(lo, d + 3))
        if rng.random() < 0.5:  # in-bounds start more often
            c = int(rng.integers(0, max(1, d)))
        if i in spatial:  # a spatial start outside the pixel box traps
            first, last = im2col_pixel_box(tm, spatial.index(i))
            c = int(rng.integers(first, last + 1))
        if i == 0 and int(tm.interleave) == 0:
            q = max(1, 16 // (tm.elem_bits // 8))
            c = (c // q) * q
        out.append(c)
    return out


def _start_inside(tm, coords) -> bool:
    return all(0 <= c < d for c, d in zip(coords, tm.global_dim))
