"""Every TMA store-reduce op on every legal element type against an independent reference (PTX semantics)."""

import numpy as np
import pytest

from tmakit.emu import tma_unit
from tmakit.emu.reduce_ops import reduce_bits
from tmakit.tma.errors import TmaDescriptorError
from tmakit.tma.reduce_rules import REDUCE_DTYPES
from tmakit.tma.tensormap import DataType as D
from tmakit.tma.tensormap import TensorMap

BITS = {D.UINT32: np.uint32, D.INT32: np.uint32, D.UINT64: np.uint64, D.INT64: np.uint64, D.FLOAT32: np.uint32,
        D.FLOAT16: np.uint16, D.BFLOAT16: np.uint16}
SIGNED = {D.INT32: 32, D.INT64: 64}
WIDTH = {np.uint16: 16, np.uint32: 32, np.uint64: 64}
pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")
CASES = [(op, dt) for op, dts in REDUCE_DTYPES.items() for dt in sorted(dts)]


def as_int(bits, dt):
    v = int(bits)
    if dt in SIGNED and v >= 1 << (SIGNED[dt] - 1):
        v -= 1 << SIGNED[dt]
    return v


def int_reference(op, dt, old, src):
    w = WIDTH[BITS[dt]]
    a, b = as_int(old, dt), as_int(src, dt)
    ua, ub = int(old), int(src)
    r = {"add": lambda: a + b, "min": lambda: min(a, b), "max": lambda: max(a, b),
         "inc": lambda: 0 if ua >= ub else ua + 1, "dec": lambda: ub if ua == 0 or ua > ub else ua - 1,
         "and": lambda: ua & ub, "or": lambda: ua | ub, "xor": lambda: ua ^ ub}[op]()
    return r % (1 << w)


def to_float(bits, dt):
    if dt == D.FLOAT32:
        return float(np.uint32(bits).view(np.float32))
    if dt == D.FLOAT16:
        return float(np.uint16(bits).view(np.float16))
    return float(np.uint32(int(bits) << 16).view(np.float32))


def round_to(x, dt):
    """Correctly rounded float (a Python float holding the exact sum) -> bits of dt."""
    if dt == D.FLOAT32:
        return int(np.float32(x).view(np.uint32))
    if dt == D.FLOAT16:
        return int(np.float16(x).view(np.uint16))
    f = np.float32(x).view(np.uint32)  # then round-half-even to the top 16 bits
    lo, hi = int(f) & 0xFFFF, int(f) >> 16
    return (hi + (lo > 0x8000 or (lo == 0x8000 and hi & 1))) & 0xFFFF


def float_reference(op, dt, old, src):
    a, b = to_float(old, dt), to_float(src, dt)
    nan = {D.FLOAT32: 0x7FFFFFFF, D.FLOAT16: 0x7FFF, D.BFLOAT16: 0x7FFF}[dt]
    if op == "add":
        s = a + b  # python float: exact enough (double rounding innocuous for p' >= 2p+2)
        return nan if s != s else round_to(s, dt)
    if a != a and b != b:
        return nan
    if a != a:
        return int(src)
    if b != b:
        return int(old)
    if a == b == 0:
        neg_a = np.signbit(a)
        return int(old) if (neg_a if op == "min" else not neg_a) else int(src)
    pick_a = a < b if op == "min" else a > b
    return int(old) if pick_a or a == b else int(src)


def special_bits(dt):
    if dt == D.FLOAT32:
        vals = [0.0, -0.0, 1.0, -1.0, np.inf, -np.inf, np.nan, 3.4e38, 1e-45, 1.0 + 2**-23, 2**-24]
        return [int(np.float32(v).view(np.uint32)) for v in vals]
    if dt in (D.FLOAT16, D.BFLOAT16):
        return [0x0000, 0x8000, 0x3C00, 0x3F80, 0x7C00, 0x7F80, 0xFC00, 0x7E00, 0x7FC0, 0x7BFF, 0x7F7F, 0x0001,
                0x3B80, 0x3F81, 0x1400]
    w = WIDTH[BITS[dt]]
    return [0, 1, 2, (1 << w) - 1, (1 << (w - 1)) - 1, 1 << (w - 1), 5, 100]


def operands(dt, rng):
    special = special_bits(dt)
    pairs = [(a, b) for a in special for b in special]
    t = BITS[dt]
    rnd = rng.integers(0, np.iinfo(t).max, size=(64, 2), dtype=t, endpoint=True)
    old = np.array([p[0] for p in pairs] + list(rnd[:, 0]), dtype=t)
    src = np.array([p[1] for p in pairs] + list(rnd[:, 1]), dtype=t)
    return old, src


@pytest.mark.parametrize("op,dt", CASES, ids=[f"{o}-{d.name}" for o, d in CASES])
def test_reduce_op_matches_reference(op, dt):
    rng = np.random.default_rng(7)
    old, src = operands(dt, rng)
    ref_fn = float_reference if dt in (D.FLOAT32, D.FLOAT16, D.BFLOAT16) else int_reference
    expect = np.array([ref_fn(op, dt, a, b) for a, b in zip(old, src)], dtype=BITS[dt])
    got = reduce_bits(op, dt, old.copy(), src.copy())
    bad = np.flatnonzero(got != expect)
    assert bad.size == 0, [(hex(old[i]), hex(src[i]), hex(got[i]), hex(expect[i])) for i in bad[:5]]


def test_round_to_nearest_even_cases():
    f32 = lambda v: np.array([np.float32(v).view(np.uint32)], np.uint32)  # noqa: E731
    got = reduce_bits("add", D.FLOAT32, f32(1.0), f32(2**-24))
    assert got[0] == np.float32(1.0).view(np.uint32)  # tie -> even
    got = reduce_bits("add", D.FLOAT32, f32(1.0 + 2**-23), f32(2**-24))
    assert got[0] == np.float32(1.0 + 2**-22).view(np.uint32)  # tie -> even (up)
    bf = lambda *b: np.array(b, np.uint16)  # noqa: E731
    assert reduce_bits("add", D.BFLOAT16, bf(0x3F80, 0x3F81), bf(0x3B80, 0x3B80)).tolist() == [0x3F80, 0x3F82]


def test_reduce_through_tensor_map_wraps_and_clips():
    g = np.full((4, 12), 0xFFFFFFFF, np.uint32)
    tm = TensorMap(D.UINT32, (12, 4), (48,), (8, 4))
    smem = np.zeros(1024, np.uint8)
    smem[:128].view(np.uint32)[:] = 2
    tma_unit.reduce(tm, (8, 2), g, smem, 0, "add")
    assert (g[2:4, 8:12] == 1).all() and (g[:2] == 0xFFFFFFFF).all() and (g[:, :8] == 0xFFFFFFFF).all()
    tma_unit.reduce(tm, (8, 2), g, smem, 0, "inc")  # old 1 < 2 -> 2
    assert (g[2:4, 8:12] == 2).all()
    tma_unit.reduce(tm, (8, 2), g, smem, 0, "inc")  # old 2 >= 2 -> 0
    assert (g[2:4, 8:12] == 0).all()
    tma_unit.reduce(tm, (8, 2), g, smem, 0, "dec")  # old 0 -> b
    assert (g[2:4, 8:12] == 2).all()


@pytest.mark.parametrize("op,dt", [("add", D.FLOAT64), ("add", D.INT64), ("min", D.FLOAT32), ("inc", D.INT32),
                                   ("xor", D.FLOAT32)])
def test_illegal_reduce_dtype_rejected(op, dt):
    a = np.zeros(8, BITS.get(dt, np.uint64))
    with pytest.raises(TmaDescriptorError, match="reduce"):
        reduce_bits(op, dt, a, a)
