#!/usr/bin/env python3
"""Differential fuzzer for tk.ops: random, edge-case-heavy inputs against torch references.

    PYTHONPATH=src python3 tools/fuzz_ops.py --seed 1 --seconds 240          # on an H100/H200
    PYTHONPATH=src python3 tools/fuzz_ops.py --seed 1 --ops gemm --case 17   # replay one case
    PYTHONPATH=src python3 tools/fuzz_ops.py --device cpu --seconds 20       # self-check: torch paths only

Case i runs ops[i % len(ops)] on inputs drawn from generators seeded by (seed, i) alone, so ``--ops OP --case i``
replays it (tk's launch caches key on pointers: a failure that needs earlier cases shows only with ``--max-cases``).
Silent per case unless it fails; the summary gives per op: cases, kernel vs torch-fallback path (tk.ops.last_path),
skips (torch's reference refused the inputs too), documented refusals, failures. Exit 1 on any failure (SCRIPT-ERROR:
this script's own code raised, most likely a fuzzer bug).

copy / transpose / permute / reduce_into: whole source and destination buffers (outside the views too) bit for bit
against torch's op on clones (float add in reduce_into is bit-identical per its docstring). A share of the GEMM-family
cases (``REPEAT``) calls the op a second time on the same arguments (``out=`` poisoned again in between) and checks
that call's result: the cached paths, keyed on addresses, then run. A share of all cases (``SIDE``) runs on a new
stream with ``out=`` poisoned on it just before the call, so an op launching on another stream shows. GEMMs:
relative Frobenius error against fp64 (fp8: operands dequantized with their scales, block scales expanded per
block; sums that cancel against 1 % of their terms' magnitudes, ``CANCEL``); out= tensors are
NaN-poisoned views of larger buffers; rows past the last offset of the grouped ops are not compared (left as they
are, as torch leaves them uninitialised). ``grouped_forms``: grouped_mm along K (2-D x 2-D) and batched (3-D x 3-D);
``grouped_grad`` / ``gemm_grad``: every grouped_mm form / gemm under autograd, the result and both gradients against
fp64 autograd of the same product; ``scaled_grouped_batch``: the fp8 batch. Tolerances come from the repo's tests
(the TOL_* constants).
"""

from __future__ import annotations

import argparse
import collections
import itertools
import math
import random
import re
import sys
import time

import torch

import tmakit as tk
from tmakit.ops import GemmError, quantize

F64, F32, BF16, F16 = torch.float64, torch.float32, torch.bfloat16, torch.float16
E4, E5, U32 = torch.float8_e4m3fn, torch.float8_e5m2, torch.uint32
BW_DTYPES = [F32, F32, BF16, BF16, F16, torch.int32, torch.uint8, torch.int64, F64, torch.int16, E4]
TOL_GEMM = {BF16: 1e-2, F16: 4e-3, F32: 1e-4}  # tests/test_gemm.py TOL
TOL_GROUPED = {BF16: 1e-2, F16: 1e-2, F32: 1e-3}  # tests/test_grouped_mm.py
TOL_LIST = 1e-2  # tests/test_gemm_list.py
TOL_FP8, TOL_FP8_FAST = {BF16: 8e-3, F16: 2e-3, F32: 1e-3}, 3e-2  # tests/test_scaled_mm.py (there max-relative)
TOL_FP8_GROUPED, TOL_FP8_GROUPED_FAST = {BF16: 8e-3, F16: 8e-3, F32: 1e-3}, 1e-2  # tests/test_scaled_grouped.py
CANCEL = 1e-2  # close(): the share of |A| @ |B|'s norm below which a product's norm counts as cancelled
TINY = [1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 31, 32, 33, 63, 64, 65, 127, 128, 129, 255, 256, 257]
PRIMES = [11, 13, 61, 67, 97, 131, 251, 509, 521, 1021, 1031, 2039, 2053, 4093]
LIMITS = dict(bw_bytes=64 << 20, dim=4096, flop=1 << 35, rows=8192)  # --device cpu: smaller (main)
STRICT = ((ValueError,), "TMA cannot run this op", False)  # strict=True may refuse, with this message


SIDE = 0.15  # share of the cases (CUDA) called on a new stream, out= poisoned on it just before
REPEAT = 0.3  # share of GEMM-family cases called twice (out= poisoned in between); the second result is checked


def repeatable():
    """The ops whose call may be repeated on the same arguments: they write only their outputs (not reduce_into)."""
    o = tk.ops
    return (o.gemm, o.grouped_mm, o.gemm_list, o.scaled_mm, o.scaled_gemm_list, o.scaled_grouped_mm)


class Skip(Exception):
    """torch's own reference refused these inputs."""


class Refused(Exception):
    """tk raised the documented error for inputs built to be refused."""


class Fail(Exception):
    """A wrong result, or an exception from the op under test."""


def dn(dt) -> str:
    return str(dt).replace("torch.", "").replace("bfloat", "bf").replace("float8_", "f8").replace("float", "f")


def desc(t) -> str:
    return f"{list(t.shape)}s{list(t.stride())}+{t.storage_offset()}@{t.data_ptr() % 128}:{dn(t.dtype)}"


class Case:
    """One case: its seeded generators, the repro notes, the call of the op under test."""

    def __init__(self, seed: int, index: int, dev):
        s = seed * 1_000_003 + index
        self.rng, self.dev, self.notes, self.path = random.Random(s), dev, [], ""
        self.gen = torch.Generator(device=dev).manual_seed(s)
        self.repeat = random.Random(s ^ 0x5EED).random() < REPEAT  # its own stream: the inputs stay as they were
        self.side = dev.type == "cuda" and random.Random(s ^ 0x51DE).random() < SIDE

    def note(self, **kw):
        self.notes += [f"{k}={dn(v) if isinstance(v, torch.dtype) else v}" for k, v in kw.items()]

    def call(self, fn, *args, expect=None, **kw):
        """The op, synchronised (async errors land here). ``expect``: (types, message fragment, required): an
        exception the inputs were built to raise (required) or may raise (strict=True)."""
        tk.ops.last_path = ""
        try:
            r = self._sync(self._on_side_stream(fn, args, kw) if self.side else fn(*args, **kw))
            if self.repeat and fn in repeatable():  # the call again, now on its cached path; its result is checked
                self.note(repeat=1)
                poison(kw.get("out"))
                r = self._sync(fn(*args, **kw))
        except Exception as e:
            self.path = tk.ops.last_path
            if expect and isinstance(e, expect[0]) and expect[1] in str(e):
                raise Refused() from None
            raise Fail(f"raised {type(e).__name__}: {' | '.join(str(e).splitlines())[:500]}") from e
        self.path = tk.ops.last_path
        if expect and expect[2]:
            raise Fail(f"expected {expect[0][0].__name__} ({expect[1]!r}), got a result")
        return r

    def _sync(self, r):
        """``r``, once the device has finished (asynchronous errors land in the call that caused them)."""
        if self.dev.type == "cuda":
            torch.cuda.synchronize(self.dev)
        return r

    def _on_side_stream(self, fn, args, kw):
        """The call on a new stream (after the current one's work): ``out=`` is poisoned again on that stream right
        before it, so an op that launched on another stream than the current one races the poison and shows it."""
        self.note(side_stream=1)
        main = torch.cuda.current_stream(self.dev)
        side = torch.cuda.Stream(self.dev)
        side.wait_stream(main)
        with torch.cuda.stream(side):
            poison(kw.get("out"))
            r = fn(*args, **kw)
        main.wait_stream(side)
        return r


def poison(out):
    """NaN into a floating ``out=`` tensor or list of them (others left as they are)."""
    for t in out if isinstance(out, (list, tuple)) else [] if out is None else [out]:
        if t.is_floating_point():
            t.fill_(float("nan"))


def ref(fn):
    """A torch reference; an exception means torch refuses the inputs too: skip the case."""
    try:
        return fn()
    except Exception as e:
        raise Skip(f"torch reference raised {type(e).__name__}: {str(e).splitlines()[0][:200]}") from e


# ---------------------------------------------------------------------------------------------------------------
# inputs and checks

def size(rng, hi: int) -> int:
    """A dimension in [1, hi]: tiny / odd / prime / power-of-two(ish) sizes, else log-uniform."""
    r = rng.random()
    pool = [x for x in (TINY if r < 0.3 else PRIMES if r < 0.45 else []) if x <= hi]
    if pool:
        return rng.choice(pool)
    if r < 0.6:
        return max(1, min(hi, rng.choice([1, 3]) << rng.randint(0, max(0, hi.bit_length() - 1))))
    return max(1, min(hi, int(math.exp(rng.uniform(0, math.log(hi + 1))))))


def align(rng, n: int, mult: int, p: float) -> int:
    """n rounded up to a multiple of ``mult`` with probability p (the kernels' 16-byte pitches)."""
    return -(-n // mult) * mult if n and rng.random() < p else n


def shrink(dims: list[int], budget: int) -> list[int]:
    while math.prod(dims) > budget:
        i = dims.index(max(dims))
        dims[i] = max(1, dims[i] // 2)
    return dims


def fill(c, numel: int, dtype, small=False):
    """Random values, never all zero: normal floats (fp8 too), nonzero ints ("small": 0..19, for inc/dec)."""
    if dtype.is_floating_point:
        return torch.randn(numel, generator=c.gen, device=c.dev, dtype=F64 if dtype == F64 else F32).to(dtype)
    if small:
        return torch.randint(0, 20, (numel,), generator=c.gen, device=c.dev).to(dtype)
    info = torch.iinfo(dtype)
    x = torch.randint(max(info.min, -(1 << 31)), min(info.max, (1 << 31) - 1) + 1, (numel,), generator=c.gen,
                      device=c.dev).to(dtype)
    return x.masked_fill_(x == 0, 1)


class Operand:
    """A random view ``t`` of logical ``shape`` into a 1-D buffer ``base``: permuted allocation (transposes),
    padded rows (pitches), a step, a storage offset (misaligned starts), broadcast dims; ``view_of(b)`` takes the
    same view of any buffer like ``base`` (references are built on clones)."""

    def __init__(self, c, shape, dtype, *, perm=0.3, pad=0.3, step=0.1, offset=0.1, expand=0.0, small=False,
                 poisoned=False):
        rng, r = c.rng, len(shape)
        p = list(range(r))
        if r > 1 and rng.random() < perm:
            rng.shuffle(p)
        bcast = {i for i in range(r) if shape[i] > 1 and rng.random() < 0.5} if rng.random() < expand else set()
        alloc = [1 if i in bcast else shape[i] for i in p]
        steps, pads = [1] * r, [0] * r
        if r and rng.random() < step:
            steps[rng.randrange(r)] = rng.choice([2, 3])
        if rng.random() < pad:
            # "a": pad the dim to a whole number of 16-byte units -- TMA-legal pitches around rows that end inside
            # one (TMA stores write whole 16-byte units: docs/HARDWARE.md §3)
            unit = max(1, 16 // torch.tensor([], dtype=dtype).element_size())
            pads = [rng.choice([0, 1, 2, 3, 8, 16, 64, "a", "a"]) for _ in range(r)]
            pads = [(-alloc[i] * steps[i]) % unit if q == "a" else q for i, q in enumerate(pads)]
        if math.prod(n * s + q for n, s, q in zip(alloc, steps, pads)) > 4 * math.prod(alloc) + 65536:
            steps, pads = [1] * r, [0] * r  # padding would multiply a many-dim tensor's size: plain
        starts = [rng.randint(0, q) for q in pads]
        off = rng.choice([1, 2, 3, 4, 8, 16, 64]) if rng.random() < offset else 0
        full = [n * s + q for n, s, q in zip(alloc, steps, pads)]
        count, inv = math.prod(full), sorted(range(r), key=p.__getitem__)

        def view_of(b):
            v = b[off:off + count].view(full)
            v = v[tuple(slice(s, s + n * st, st) for s, n, st in zip(starts, alloc, steps))].permute(inv)
            return v.expand(shape) if bcast else v

        self.base = fill(c, count + off, dtype, small)
        if poisoned:
            self.base.fill_(float("nan"))
        self.view_of, self.t = view_of, view_of(self.base)


def bw_shape(c, esize: int) -> list[int]:
    """A rank 1-5 shape of up to LIMITS["bw_bytes"] bytes, log-uniform in size, odd and tiny dims included."""
    rng = c.rng
    rank = rng.choice([1, 2, 2, 3, 3, 4, 5])
    per = max(1, round(math.exp(rng.uniform(0, math.log(LIMITS["bw_bytes"] // esize))) ** (1 / rank)))
    shape = [size(rng, 2 * per) if rng.random() < 0.5 else max(1, int(per * rng.uniform(0.5, 2))) for _ in range(rank)]
    return shrink(shape, LIMITS["bw_bytes"] // esize)


def same_bits(got, want, what):
    if got.dtype != want.dtype or tuple(got.shape) != tuple(want.shape):
        raise Fail(f"{what}: got {dn(got.dtype)} {list(got.shape)}, want {dn(want.dtype)} {list(want.shape)}")
    g, w = (torch.empty(t.shape, dtype=t.dtype, device=t.device).copy_(t).view(-1) for t in (got, want))
    gb, wb = g.view(torch.uint8).view(-1, g.element_size()), w.view(torch.uint8).view(-1, g.element_size())
    if not torch.equal(gb, wb):
        bad = (gb != wb).any(1)
        i = int(bad.nonzero()[0])
        raise Fail(f"{what}: {int(bad.sum())} of {bad.numel()} elements differ, first at flat index {i}: got "
                   f"{value(g, i)} want {value(w, i)}")


def value(t, i):
    try:
        return t[i:i + 1].double().tolist()[0]
    except Exception:  # a dtype without a conversion on this device
        return "?"


def close(got, want, tol, what, terms=None):
    """Relative Frobenius error within ``tol``. ``terms``: ``|A| @ |B|`` of a product; where the sums cancel (the
    result's norm far below that of its terms' magnitudes), errors are measured against ``CANCEL`` times the latter:
    a floating-point sum is accurate relative to its terms, not to a near-zero total."""
    got, want = got.double(), want.double()
    if got.numel() == 0:
        return
    nr = max(float(want.norm()), CANCEL * float(terms.norm()) if terms is not None else 0.0)
    err = math.inf if not bool(torch.isfinite(got).all()) else \
        float((got - want).norm()) / nr if nr > 0 else float(got.abs().max())
    if not err <= tol:
        raise Fail(f"{what}: rel err {err:.3e} > tol {tol:.0e}")


def result(r, want_shape, want_dtype, out=None):
    """The op's result: ``out`` itself when given, with nothing outside its (NaN-poisoned) buffer's view written; the
    right shape and dtype."""
    if out is not None:
        if r is not out.t:
            raise Fail("did not return its out tensor")
        b = out.base.clone()
        out.view_of(b).zero_()
        if int(b.isnan().sum()) != b.numel() - out.t.numel():
            raise Fail("wrote outside the out view")
    if tuple(r.shape) != tuple(want_shape) or r.dtype != want_dtype:
        raise Fail(f"result {list(r.shape)} {dn(r.dtype)}, want {list(want_shape)} {dn(want_dtype)}")


def out_args(c, shape, od, default):
    """(out Operand or None, keyword arguments): a poisoned out view, else an explicit or default out_dtype."""
    if c.rng.random() < 0.4:
        out = Operand(c, shape, od, perm=0.1, pad=0.35, step=0.05, offset=0.1, poisoned=True)
        c.note(out=desc(out.t))
        return out, dict(out=out.t, **({"out_dtype": od} if c.rng.random() < 0.3 else {}))
    return None, ({} if od == default and c.rng.random() < 0.5 else {"out_dtype": od})


# ---------------------------------------------------------------------------------------------------------------
# bandwidth ops

def reduce_ref(d, s, op):
    if d.dtype == U32:  # few torch ops take uint32: the same in int64 (inc/dec values are small)
        w = d.to(torch.int64)
        reduce_ref(w, s.to(torch.int64), op)
        d.copy_(w.to(U32))
    elif op == "copy":
        d.copy_(s)
    elif op == "add":
        d.add_(s)
    elif op in ("min", "max"):
        (torch.minimum if op == "min" else torch.maximum)(d, s, out=d)
    elif op in ("and", "or", "xor"):
        getattr(d, f"bitwise_{op}_")(s)
    elif op == "inc":  # PTX: d = (d >= s) ? 0 : d + 1
        d.copy_(torch.where(d >= s, torch.zeros_like(d), d + 1))
    else:  # dec, PTX: d = (d == 0 || d > s) ? s : d - 1
        d.copy_(torch.where((d == 0) | (d > s), s, d - 1))


def fuzz_pair(c, name):
    """copy(src, dst) / reduce_into(dst, src, op): separate buffers (src maybe broadcast, dtypes maybe differing),
    disjoint interleaved halves of one buffer, the same view (allowed), and the documented ValueErrors (shifted
    overlapping views, a destination writing an address twice)."""
    rng = c.rng
    if name == "copy":
        op, dt = "copy", rng.choice(BW_DTYPES)
    elif rng.random() < 0.55:
        dt, op = rng.choice([F32, F32, BF16, F16, F64]), rng.choice(["add", "add", "min", "max"])
    else:
        op = rng.choice(tk.ops.REDUCE_OPS)
        dt = rng.choice([U32, torch.int32] if op in ("inc", "dec") else
                        [torch.int32, torch.int32, torch.int64, torch.int16, torch.uint8])
    small, method = op in ("inc", "dec"), rng.choice(["auto"] * 3 + ["store-reduce", "combine"])
    shape, strict, kind = bw_shape(c, dt.itemsize), rng.random() < 0.1, rng.random()
    numel = math.prod(shape)
    c.note(op=op, dtype=dt, shape=shape, strict=strict, **({} if name == "copy" else {"method": method}))
    kw = dict(strict=strict, **({} if name == "copy" else {"method": method}))
    expect = (((ValueError,), "", False) if name == "reduce_into" else STRICT) if strict else None

    def run(dst, src, **more):
        floats = src.dtype.is_floating_point or dst.dtype.is_floating_point
        if name == "reduce_into" and op in ("inc", "dec") and floats:  # integer ops: a float operand is refused
            more["expect"] = ((ValueError,), "" if strict else "integer op", True)
        try:
            if name == "copy":
                return c.call(tk.ops.copy, src, dst, **kw, **more)
            return c.call(tk.ops.reduce_into, dst, src, op, **kw, **more)
        except Fail as e:  # torch has no uint32 ops to speak of: its fallback raises as torch does
            if dt == U32 and "UInt32" in str(e):
                raise Skip(f"torch has no uint32 {op} ({e})") from None
            raise

    if kind < 0.04 and numel >= 2:  # shifted views of one buffer
        x = fill(c, numel + 1, dt, small)
        c.note(kind="overlap")
        run(x[1:], x[:-1], expect=((ValueError,), "overlap", True))
    if kind < 0.07 and numel >= 2:  # a destination that writes an address twice
        src, dst = Operand(c, shape, dt, small=small).t, fill(c, 1, dt, small).expand(shape)
        c.note(kind="expanded-dst", src=desc(src))
        run(dst, src, expect=((ValueError,), "more than once", True))
    if kind < 0.16:  # disjoint interleaved halves of one buffer, or one view as both (each element read first)
        buf = fill(c, 2 * numel, dt, small)
        pair, (s, d) = buf.view(*shape[:-1], 2 * shape[-1]), rng.choice([(0, 1), (1, 0)])
        src, dst = (pair[..., s::2], pair[..., d::2]) if kind < 0.12 else (pair[..., ::2],) * 2
        want = buf.clone()
        wp = want.view(pair.shape)
        ref(lambda: reduce_ref(wp[..., d::2], wp[..., s::2], op) if kind < 0.12 else
            reduce_ref(wp[..., ::2], wp[..., ::2].clone(), op))
        c.note(kind="interleaved" if kind < 0.12 else "self", src=desc(src), dst=desc(dst))
        run(dst, src, expect=expect)
        return same_bits(buf, want, "buffer")
    dst = Operand(c, shape, dt, perm=0.25, pad=0.25, step=0.05, offset=0.08, small=small)
    sdt = dt if rng.random() < 0.93 or dt == U32 else rng.choice(BW_DTYPES[:6])
    src = Operand(c, shape, sdt, perm=0.25, pad=0.25, step=0.05, offset=0.08, expand=0.1, small=small)
    c.note(dst=desc(dst.t), src=desc(src.t))
    want, before = dst.base.clone(), src.base.clone()
    ref(lambda: reduce_ref(dst.view_of(want), src.t, op))
    if run(dst.t, src.t, expect=expect) is not dst.t:
        raise Fail("did not return dst")
    same_bits(dst.base, want, "dst buffer")
    same_bits(src.base, before, "src buffer")


def fuzz_layout(c, name):
    """transpose / permute: a new contiguous result, into a poisoned out view, or under autograd (backward too)."""
    rng = c.rng
    dt = rng.choice(BW_DTYPES)
    shape = bw_shape(c, dt.itemsize)
    r, strict = len(shape), rng.random() < 0.1
    x = Operand(c, shape, dt, expand=0.08)
    if name == "transpose":
        args = inv = (rng.randrange(-r, r), rng.randrange(-r, r))
        fn, view = tk.ops.transpose, x.t.transpose(*args)
    else:
        dims = list(range(r))
        rng.shuffle(dims)
        dims = [d - r if rng.random() < 0.2 else d for d in dims]
        args, inv = (dims if rng.random() < 0.3 else tuple(dims),), (sorted(range(r), key=lambda i: dims[i] % r),)
        fn, view = tk.ops.permute, x.t.permute(*args)
    mode = rng.choice(["new"] * 5 + ["out"] * 4 + (["grad"] if dt in (F32, BF16, F16, F64) else []))
    c.note(x=desc(x.t), args=args, mode=mode, strict=strict)
    before, want = x.base.clone(), ref(lambda: view.contiguous())
    expect = STRICT if strict else None
    if mode == "out":
        out = Operand(c, list(view.shape), dt, perm=0.3, pad=0.3, offset=0.1, poisoned=dt.is_floating_point)
        c.note(out=desc(out.t))
        wbuf = out.base.clone()
        out.view_of(wbuf).copy_(view)
        if c.call(fn, x.t, *args, out=out.t, strict=strict, expect=expect) is not out.t:
            raise Fail("did not return out")
        same_bits(out.base, wbuf, "out buffer")
    elif mode == "grad":
        xl = x.t.detach().requires_grad_()
        y = c.call(fn, xl, *args)
        same_bits(y.detach(), want, "result")
        g = fill(c, y.numel(), dt).view(y.shape)
        c.call(y.backward, g)
        same_bits(xl.grad, g.transpose(*inv) if name == "transpose" else g.permute(*inv), "grad")
    else:
        got = c.call(fn, x.t, *args, strict=strict, expect=expect)
        if not got.is_contiguous():
            raise Fail(f"result is not contiguous: {desc(got)}")
        same_bits(got, want, "result")
    same_bits(x.base, before, "x buffer")


# ---------------------------------------------------------------------------------------------------------------
# GEMMs

def fuzz_gemm(c):
    rng = c.rng
    dt = rng.choice([BF16] * 4 + [F16] * 4 + [F32])
    m, n, k = shrink([size(rng, LIMITS["dim"]) for _ in range(3)], LIMITS["flop"] // 2)
    n, k = align(rng, n, 8, 0.7), align(rng, k, 8, 0.7)  # 16-byte pitches: what the kernel reads as given
    m, n = (1 if rng.random() < 0.08 else m), (1 if rng.random() < 0.08 else n)
    if rng.random() < 0.03:
        m, n, k = rng.choice([(0, n, k), (m, 0, k), (m, n, 0)])
    a = Operand(c, (m, k), dt, perm=0.1, pad=0.2, step=0.03, offset=0.05, expand=0.03)
    b = Operand(c, (k, n), dt, perm=0.5, pad=0.2, step=0.03, offset=0.05, expand=0.03)
    od = dt if rng.random() < 0.6 else rng.choice([BF16, F16, F32])
    c.note(a=desc(a.t), b=desc(b.t), od=od)
    out, kw = out_args(c, (m, n), od, dt)
    if rng.random() < 0.3:  # tuning knobs (and strict) also skip the routing of small problems to cuBLAS
        kw.update(rng.choice([{"stream_k": "off"}, {"stream_k": "all"}, {"split": 2}, {"k_rotate": True},
                              {"split": 3, "split_mode": "atomic"}, {"split": 4, "split_mode": "head"},
                              {"split": 2, "split_mode": "fixup"}, {"pdl": True}, {"strict": True}]))
    c.note(kw={k_: dn(v) if isinstance(v, torch.dtype) else v for k_, v in kw.items() if k_ != "out"})
    want, terms = a.t.double() @ b.t.double(), a.t.double().abs() @ b.t.double().abs()
    r = c.call(tk.ops.gemm, a.t, b.t, expect=((GemmError,), "", False) if kw.get("strict") else None, **kw)
    result(r, (m, n), od, out)
    close(r, want, TOL_GEMM[od], "gemm", terms)


def fuzz_gemm_grad(c):
    """tk.ops.gemm under autograd (its custom op's formula): the result and both gradients (one or both operands
    requiring grad) against fp64 autograd."""
    rng = c.rng
    dt = rng.choice([BF16] * 4 + [F16] * 4 + [F32])
    m, n, k = shrink([size(rng, LIMITS["dim"]) for _ in range(3)], LIMITS["flop"] // 6)
    n, k = align(rng, n, 8, 0.7), align(rng, k, 8, 0.7)
    a = Operand(c, (m, k), dt, perm=0.1, pad=0.2, step=0.03, offset=0.05).t
    b = Operand(c, (k, n), dt, perm=0.5, pad=0.2, step=0.03, offset=0.05).t
    needs = rng.choice([(True, True), (True, True), (True, False), (False, True)])
    c.note(a=desc(a), b=desc(b), grads=needs)
    a, b = a.detach().requires_grad_(needs[0]), b.detach().requires_grad_(needs[1])
    y = c.call(tk.ops.gemm, a, b)
    if not y.requires_grad:
        raise Fail("the result has no grad_fn: gradients would be lost")
    gy = fill(c, y.numel(), dt).view(y.shape)
    path = c.path
    c.call(y.backward, gy)
    c.path = path
    grads, ys = [], []
    for sign in (1, 0):  # fp64 reference, then its terms' magnitudes (cancellation)
        r64 = [(x.detach().double() if sign else x.detach().double().abs()).requires_grad_(x.requires_grad)
               for x in (a, b)]
        y64 = r64[0] @ r64[1]
        y64.backward(gy.double() if sign else gy.double().abs())
        grads.append([x.grad for x in r64])
        ys.append(y64.detach())
    close(y.detach(), ys[0], TOL_GEMM[dt], "gemm result", ys[1])
    for nm, x, w, t in zip("ab", (a, b), grads[0], grads[1]):
        if x.requires_grad:
            if x.grad is None or tuple(x.grad.shape) != tuple(x.shape) or x.grad.dtype != x.dtype:
                raise Fail(f"d{nm}: {None if x.grad is None else (list(x.grad.shape), dn(x.grad.dtype))}, want "
                           f"{list(x.shape)} {dn(x.dtype)}")
            close(x.grad, w, TOL_GEMM[dt], f"gemm d{nm}", t)


def moe(c, mult):
    """Group sizes (empty, one-row and larger-than-a-tile groups), rows past the last offset, N and K (mostly
    multiples of ``mult``), their end offsets on the device."""
    rng = c.rng
    groups, mean = rng.choice([1, 1, 2, 3, 4, 8, 16, 33, 64]), rng.choice([1, 4, 16, 100, 300, 1000])
    sizes = [0 if (x := rng.random()) < 0.15 else 1 if x < 0.25 else rng.randint(0, 2 * mean) for _ in range(groups)]
    while sum(sizes) > LIMITS["rows"]:
        sizes = [s // 2 for s in sizes]
    ends, tail = list(itertools.accumulate(sizes)), rng.choice([0, 0, 0, 1, 5])
    m = ends[-1] + tail
    n, k = shrink([align(rng, size(rng, 2048), mult, 0.85) for _ in range(2)], LIMITS["flop"] // 2 // max(1, m))
    c.note(sizes=sizes[:12] + (["..."] if groups > 12 else []), tail=tail, n=n, k=k)
    return ends, m, n, k, torch.tensor(ends, dtype=torch.int32, device=c.dev)


def by_group(ends, n, dev, product):
    """fp64 rows [0, ends[-1]) of a grouped product: ``product(g, lo, hi)`` gives group g's rows."""
    want = torch.zeros(ends[-1], n, dtype=F64, device=dev)
    for g, (lo, hi) in enumerate(zip([0] + ends[:-1], ends)):
        want[lo:hi] = product(g, lo, hi)
    return want


def fuzz_grouped(c):
    rng = c.rng
    dt = rng.choice([BF16] * 4 + [F16] * 4 + [F32])
    ends, m, n, k, offs = moe(c, 8)
    a = Operand(c, (m, k), dt, perm=0.1, pad=0.2, step=0.03, offset=0.05).t
    layout = rng.choice(["nk", "nk", "kn", "kn", "any"])  # w.transpose(-2, -1) of a (G, N, K) w; row-major; any
    if layout == "nk":
        b = Operand(c, (len(ends), n, k), dt, perm=0, pad=0.15, step=0, offset=0.05).t.transpose(-2, -1)
    else:
        b = Operand(c, (len(ends), k, n), dt, perm=0.5 * (layout == "any"), pad=0.2, step=0.1 * (layout == "any"),
                    offset=0.05).t
    od = dt if rng.random() < 0.6 else rng.choice([BF16, F16, F32])
    c.note(a=desc(a), b=desc(b), b_layout=layout, od=od)
    out, kw = out_args(c, (m, n), od, dt)
    if rng.random() < 0.1:
        kw["check_offs"] = True
    c.note(kw={k_: dn(v) if isinstance(v, torch.dtype) else v for k_, v in kw.items() if k_ != "out"})
    want = by_group(ends, n, c.dev, lambda g, lo, hi: a[lo:hi].double() @ b[g].double())
    r = c.call(tk.ops.grouped_mm, a, b, offs, **kw)
    result(r, (m, n), od, out)
    close(r[:ends[-1]], want, TOL_GROUPED[od], "grouped_mm")


def grouped_dtypes(c):
    dt = c.rng.choice([BF16] * 4 + [F16] * 4 + [F32])
    return dt, dt if c.rng.random() < 0.6 else c.rng.choice([BF16, F16, F32])


def b_of(c, g, k, n, dt):
    """A (G, K, N) operand: ``w.transpose(-2, -1)`` of a (G, N, K) ``w``, row-major, or any strides."""
    layout = c.rng.choice(["nk", "nk", "kn", "kn", "any"])
    c.note(b_layout=layout)
    if layout == "nk":
        return Operand(c, (g, n, k), dt, perm=0, pad=0.15, step=0, offset=0.05).t.transpose(-2, -1)
    return Operand(c, (g, k, n), dt, perm=0.5 * (layout == "any"), pad=0.2, step=0.1 * (layout == "any"),
                   offset=0.05).t


def along_k_operands(c, dt):
    """2-D x 2-D grouped along K: ``a`` (M, K) mostly M-major (``x.t()`` of the tokens, as autograd passes it),
    ``b`` (K, N) mostly row-major; ``offs`` cut K. The tokens are K here: ``moe``'s rows."""
    ends, kt, m, n, offs = moe(c, 8)
    a = Operand(c, (kt, m), dt, perm=0, pad=0.2, step=0, offset=0.05).t.t() if c.rng.random() < 0.7 else \
        Operand(c, (m, kt), dt, perm=0.3, pad=0.2, step=0.03, offset=0.05).t
    b = Operand(c, (kt, n), dt, perm=0.3 * (c.rng.random() < 0.3), pad=0.2, step=0.03, offset=0.05).t
    return ends, a, b, offs


def batch_operands(c, dt):
    """3-D x 3-D, no offs: ``a`` (G, M, K) (batches maybe apart or permuted), ``b`` (G, K, N)."""
    rng = c.rng
    g = rng.choice([1, 1, 2, 3, 4, 8, 16, 33])
    m, n, k = shrink([size(rng, 1024), align(rng, size(rng, 2048), 8, 0.85), align(rng, size(rng, 2048), 8, 0.85)],
                     LIMITS["flop"] // 2 // g)
    a = Operand(c, (g, m, k), dt, perm=0.15, pad=0.2, step=0.03, offset=0.05).t
    return a, b_of(c, g, k, n, dt)


def grouped_product(form, a, b, ends):
    """What every form computes, differentiable (fp64 inputs give the reference; rows past the last offset zero)."""
    if form == "batch":
        return a @ b
    starts = [0] + ends[:-1]
    if form == "k":
        return torch.stack([a[:, lo:hi] @ b[lo:hi] for lo, hi in zip(starts, ends)])
    parts = [a[lo:hi] @ b[g] for g, (lo, hi) in enumerate(zip(starts, ends))]
    return torch.cat(parts + [a[ends[-1]:] @ b[0] * 0])


def fuzz_grouped_forms(c):
    """The forms beside 2-D x 3-D: along K (2-D x 2-D) and batched (3-D x 3-D), into new or out= results."""
    dt, od = grouped_dtypes(c)
    form = c.rng.choice(["k", "batch"])
    if form == "k":
        ends, a, b, offs = along_k_operands(c, dt)
        shape = (len(ends), a.shape[0], b.shape[1])
    else:
        (a, b), ends, offs = batch_operands(c, dt), None, None
        shape = (a.shape[0], a.shape[1], b.shape[2])
    c.note(form=form, a=desc(a), b=desc(b), od=od)
    out, kw = out_args(c, shape, od, dt)
    c.note(kw={k_: dn(v) if isinstance(v, torch.dtype) else v for k_, v in kw.items() if k_ != "out"})
    want = grouped_product(form, a.double(), b.double(), ends)
    terms = grouped_product(form, a.double().abs(), b.double().abs(), ends)
    r = c.call(tk.ops.grouped_mm, a, b, offs, **kw)
    result(r, shape, od, out)
    close(r, want, TOL_GROUPED[od], f"grouped_mm {form}", terms)


def fuzz_grouped_grad(c):
    """Autograd through every form: the result and both gradients (one or both operands requiring grad) against
    fp64 autograd of the same product; the loss reads only the rows the groups cover."""
    rng = c.rng
    dt, _ = grouped_dtypes(c)
    form = rng.choice(["rows", "rows", "k", "batch"])
    if form == "k":
        ends, a, b, offs = along_k_operands(c, dt)
    elif form == "batch":
        (a, b), ends, offs = batch_operands(c, dt), None, None
    else:
        ends, m, n, k, offs = moe(c, 8)
        a = Operand(c, (m, k), dt, perm=0.1, pad=0.2, step=0.03, offset=0.05).t
        b = b_of(c, len(ends), k, n, dt)
    needs = rng.choice([(True, True), (True, True), (True, False), (False, True)])
    c.note(form=form, a=desc(a), b=desc(b), grads=needs)
    a, b = a.detach().requires_grad_(needs[0]), b.detach().requires_grad_(needs[1])
    y = c.call(tk.ops.grouped_mm, a, b, offs)
    if not y.requires_grad:
        raise Fail("the result has no grad_fn: gradients would be lost")
    used = ends[-1] if form == "rows" else y.shape[0]
    gy = fill(c, y[:used].numel(), dt).view(y[:used].shape)
    path = c.path
    c.call(y[:used].backward, gy)
    c.path = path  # the summary counts the forward's path
    for sign in (1, 0):  # fp64 reference, then its terms' magnitudes (cancellation)
        r64 = [(x.detach().double().abs() if not sign else x.detach().double()).requires_grad_(x.requires_grad)
               for x in (a, b)]
        y64 = grouped_product(form, *r64, ends)
        y64[:used].backward(gy.double() if sign else gy.double().abs())
        if sign:
            want_y, want = y64.detach(), [x.grad for x in r64]
        else:
            terms = [x.grad for x in r64]
    close(y.detach()[:used], want_y[:used], TOL_GROUPED[dt], f"grouped_mm {form} result")
    for nm, x, w, t in zip("ab", (a, b), want, terms):
        if x.requires_grad:
            if x.grad is None or tuple(x.grad.shape) != tuple(x.shape) or x.grad.dtype != x.dtype:
                raise Fail(f"d{nm}: {None if x.grad is None else (list(x.grad.shape), dn(x.grad.dtype))}, want "
                           f"{list(x.shape)} {dn(x.dtype)}")
            close(x.grad, w, TOL_GROUPED[dt], f"grouped_mm {form} d{nm}", t)


def fuzz_gemm_list(c):
    rng = c.rng
    dt = rng.choice([BF16] * 4 + [F16] * 4 + [F32])
    count, b_mn, mixed = rng.choice([1, 1, 2, 3, 5, 17, 64, 200]), rng.random() < 0.4, rng.random() < 0.1
    mixed_dtypes = rng.random() < 0.15  # one launch per dtype pair: the op splits the list
    As, Bs, shapes = [], [], []
    for _ in range(count):
        if mixed_dtypes:
            dt = rng.choice([BF16, F16, BF16, F16, F32])
        m = 0 if rng.random() < 0.05 else size(rng, 2048)
        n, k = align(rng, size(rng, 1024), 8, 0.9), 0 if rng.random() < 0.03 else align(rng, size(rng, 1024), 8, 0.85)
        m, n, k = shrink([m, n, k], LIMITS["flop"] // 2 // count) if m and k else (m, n, k)
        As.append(Operand(c, (m, k), dt, perm=0.05, pad=0.1, step=0, offset=0.03).t)
        Bs.append(Operand(c, (n, k), dt, perm=0, pad=0.1, step=0, offset=0.03).t.t()
                  if (rng.random() < 0.5 if mixed else not b_mn) else
                  Operand(c, (k, n), dt, perm=0, pad=0.1, step=0, offset=0.03).t)
        shapes.append((m, n, k))
    od = dt if rng.random() < 0.7 else rng.choice([BF16, F16, F32])
    c.note(count=count, b_mn=b_mn, mixed=mixed, mixed_dtypes=mixed_dtypes, dtype=dt, od=od, shapes=shapes[:6],
           a0=desc(As[0]), b0=desc(Bs[0]))
    outs, kw = None, {}
    ods = [od] * count
    if rng.random() < 0.4:
        ods = [rng.choice([BF16, F16, F32]) if mixed_dtypes else od for _ in range(count)]
        outs = [Operand(c, (a.shape[0], b.shape[1]), o, perm=0.1, pad=0.35, offset=0.1, poisoned=True)
                for a, b, o in zip(As, Bs, ods)]
        kw["out"] = [o.t for o in outs]
    elif od != dt or mixed_dtypes or rng.random() < 0.3:
        kw["out_dtype"] = od
    wants = [a.double() @ b.double() for a, b in zip(As, Bs)]
    rs = c.call(tk.ops.gemm_list, As, Bs, **kw)
    if len(rs) != count:
        raise Fail(f"{len(rs)} results for {count} problems")
    for i, (r, w) in enumerate(zip(rs, wants)):
        try:
            result(r, w.shape, ods[i], outs[i] if outs else None)
        except Fail as e:
            raise Fail(f"problem {i} {shapes[i]} out {desc(outs[i].t) if outs else None}: {e}") from None
        close(r, w, TOL_LIST, f"problem {i} {shapes[i]}")


# ---------------------------------------------------------------------------------------------------------------
# FP8

def dequant(q, s, mode, block):
    """q (rows, K) fp8 in fp64 times its scales: 1 x ``block`` / 128x128 blocks ("block"), else one element (tensor,
    per expert) or one per row."""
    if mode == "block":
        return q.double() * s.double().repeat_interleave(block, 0)[:q.shape[0]].repeat_interleave(128, 1)[
            :, :q.shape[1]]
    return q.double() * (s.double().reshape(-1, 1) if s.numel() != 1 else s.double().reshape(()))


def scales(c, shape):
    """fp32 scales in [0.25, 2] (outputs stay far from fp16's range), sometimes a transposed-storage view."""
    s = torch.pow(2.0, 3 * torch.rand(shape, generator=c.gen, device=c.dev) - 2)
    return s.t().contiguous().t() if s.dim() == 2 and c.rng.random() < 0.15 else s


def fuzz_scaled_mm(c):
    rng = c.rng
    mode = rng.choice(["tensor", "row", "block"])
    fast, (ta, tb) = mode != "block" and rng.random() < 0.3, (rng.choice([E4, E4, E4, E5]) for _ in range(2))
    m, n, k = shrink([size(rng, LIMITS["dim"]) for _ in range(3)], LIMITS["flop"] // 2)
    n, k = align(rng, n, 16, 0.7), align(rng, k, 16, 0.75)
    od = rng.choice([BF16, BF16, BF16, F16, F32])
    if rng.random() < 0.4:  # values and scales from tmakit.ops.quantize (the full fp8 range)
        x = torch.randn(m, k, generator=c.gen, device=c.dev)
        x = x * torch.exp(0.5 * torch.randn(m, 1, generator=c.gen, device=c.dev))
        fa, fb = {"tensor": (quantize.quantize_tensor,) * 2, "row": (quantize.quantize_rows,) * 2,
                  "block": (quantize.quantize_1x128, quantize.quantize_128x128)}[mode]
        (qa, sa), (qw, sb) = fa(x, ta), fb(torch.randn(n, k, generator=c.gen, device=c.dev), tb)
        sb = sb.t() if mode == "row" else sb
    else:  # normal fp8 values, random scales
        qa, qw = fill(c, m * k, ta).view(m, k), fill(c, n * k, tb).view(n, k)
        shp = {"tensor": (rng.choice([(), (1,), (1, 1)]),) * 2, "row": ((m, 1), (1, n)),
               "block": ((m, -(-k // 128)), (-(-n // 128), -(-k // 128)))}[mode]
        sa, sb = scales(c, shp[0]), scales(c, shp[1])
    a = Operand(c, (m, k), ta, perm=0.1, pad=0.25, step=0.03, offset=0.05).t.copy_(qa)
    b = Operand(c, (n, k), tb, perm=0, pad=0.25, step=0.03, offset=0.05).t.copy_(qw).t() if rng.random() < 0.8 \
        else Operand(c, (k, n), tb, perm=0.3, pad=0.25, offset=0.05).t.copy_(qw.t())  # (K, N) row-major: fallback
    c.note(mode=mode, fast=fast, a=desc(a), b=desc(b), sa=desc(sa), sb=desc(sb), od=od)
    out, kw = out_args(c, (m, n), od, BF16)
    if rng.random() < 0.25:
        kw["bias"] = fill(c, n, od) if rng.random() < 0.9 else fill(c, 2 * n, od)[::2]
        c.note(bias=desc(kw["bias"]))
    want = dequant(a, sa, mode, 1) @ dequant(b.t(), sb, mode, 128).t() + (kw["bias"].double() if "bias" in kw else 0)
    kw["strict"] = rng.random() < 0.25  # the kernel where it can run (default calls route many to torch)
    c.note(strict=kw["strict"])
    r = c.call(tk.ops.scaled_mm, a, b, sa, sb, use_fast_accum=fast, expect=((GemmError,), "", False), **kw)
    result(r, (m, n), od, out)
    close(r, want, TOL_FP8_FAST if fast else TOL_FP8[od], "scaled_mm")


def fuzz_scaled_gemm_list(c):
    """Lists of fp8 problems, each with its own shapes, strides, types and scales (mostly one mode per list,
    sometimes mixed), against each problem's dequantized fp64 product."""
    rng = c.rng
    count = rng.choice([1, 2, 3, 5, 17, 64])
    mixed = rng.random() < 0.2
    list_mode, od = rng.choice(["tensor", "row", "block"]), rng.choice([BF16, BF16, F16, F32])
    fast = list_mode != "block" and not mixed and rng.random() < 0.25
    As, Bs, SA, SB, wants, shapes = [], [], [], [], [], []
    for _ in range(count):
        mode = rng.choice(["tensor", "row", "block"]) if mixed else list_mode
        ta, tb = (rng.choice([E4, E4, E4, E5]) for _ in range(2))
        m = 0 if rng.random() < 0.05 else size(rng, 1024)
        n, k = align(rng, size(rng, 1024), 16, 0.9), 0 if rng.random() < 0.03 else align(rng, size(rng, 2048), 16, 0.9)
        m, n, k = shrink([m, n, k], LIMITS["flop"] // 2 // count) if m and k else (m, n, k)
        qa, qw = fill(c, m * k, ta).view(m, k), fill(c, n * k, tb).view(n, k)
        shp = {"tensor": (rng.choice([(), (1,), (1, 1)]),) * 2, "row": ((m, 1), (1, n)),
               "block": ((m, -(-k // 128)), (-(-n // 128), -(-k // 128)))}[mode]
        sa, sb = scales(c, shp[0]), scales(c, shp[1])
        a = Operand(c, (m, k), ta, perm=0.05, pad=0.15, step=0, offset=0.03).t.copy_(qa)
        b = Operand(c, (n, k), tb, perm=0, pad=0.15, step=0, offset=0.03).t.copy_(qw).t()
        want = dequant(a, sa, mode, 1) @ dequant(b.t(), sb, mode, 128).t() if k else \
            torch.zeros(m, n, dtype=torch.float64, device=c.dev)
        As.append(a), Bs.append(b), SA.append(sa), SB.append(sb), wants.append(want), shapes.append((m, n, k, mode))
    c.note(count=count, mixed=mixed, mode=list_mode, fast=fast, od=od, shapes=shapes[:5], a0=desc(As[0]),
           b0=desc(Bs[0]))
    outs, kw = None, {}
    if rng.random() < 0.4:
        outs = [Operand(c, (a.shape[0], b.shape[1]), od, perm=0.1, pad=0.35, offset=0.1, poisoned=True)
                for a, b in zip(As, Bs)]
        kw["out"] = [o.t for o in outs]
    else:
        kw["out_dtype"] = od
    rs = c.call(tk.ops.scaled_gemm_list, As, Bs, SA, SB, use_fast_accum=fast, **kw)
    if len(rs) != count:
        raise Fail(f"{len(rs)} results for {count} problems")
    for i, (r, w) in enumerate(zip(rs, wants)):
        try:
            result(r, w.shape, od, outs[i] if outs else None)
        except Fail as e:
            raise Fail(f"problem {i} {shapes[i]} out {desc(outs[i].t) if outs else None}: {e}") from None
        close(r, w, TOL_FP8_FAST if fast else TOL_FP8[od], f"problem {i} {shapes[i]}")


def fuzz_scaled_grouped(c):
    rng = c.rng
    mode = rng.choice(["row", "expert", "block"])
    fast, (ta, tb) = mode != "block" and rng.random() < 0.3, (rng.choice([E4, E4, E4, E5]) for _ in range(2))
    ends, m, n, k, offs = moe(c, 16)
    g, kb, nb = len(ends), -(-k // 128), -(-n // 128)
    od = rng.choice([BF16, BF16, BF16, F16, F32])
    a = Operand(c, (m, k), ta, perm=0.1, pad=0.2, step=0.03, offset=0.05).t
    layout = "nk" if rng.random() < 0.85 else "any"  # torch requires each b[g] K-major: "any" runs a fallback
    b = Operand(c, (g, n, k), tb, perm=0, pad=0.1, step=0, offset=0.03).t.transpose(-2, -1) if layout == "nk" else \
        Operand(c, (g, k, n), tb, perm=0.4, pad=0.2, offset=0.05).t
    if mode == "block":
        sa, sb = scales(c, (m, kb)), scales(c, (g, nb, kb))
    else:
        sa = scales(c, rng.choice([(m,), (m, 1), (), (1,)]))
        sb = scales(c, (g, n) if mode == "row" else rng.choice([(g,), (g, 1)]))
    c.note(mode=mode, fast=fast, a=desc(a), b=desc(b), b_layout=layout, sa=desc(sa), sb=desc(sb), od=od)
    out, kw = out_args(c, (m, n), od, BF16)
    if rng.random() < 0.1:
        kw["check_offs"] = True
    wa = dequant(a, sa, mode, 1)
    want = by_group(ends, n, c.dev, lambda i, lo, hi: wa[lo:hi] @ dequant(b[i].t(), sb[i], mode, 128).t())
    kw["strict"] = rng.random() < 0.25
    c.note(strict=kw["strict"], check_offs=kw.get("check_offs", False))
    r = c.call(tk.ops.scaled_grouped_mm, a, b, sa, sb, offs, use_fast_accum=fast, expect=((GemmError,), "", False),
               **kw)
    result(r, (m, n), od, out)
    close(r[:ends[-1]], want, max(TOL_FP8_GROUPED[od], TOL_FP8_GROUPED_FAST if fast else 0), "scaled_grouped_mm")


def fuzz_scaled_grouped_batch(c):
    """3-D x 3-D fp8 batches (no offs): row-wise (torch's (G, M) and (G, N) scales), one scale for a and one per
    batch entry for b, or block-wise; a's batches sometimes apart in memory, b sometimes not K-major."""
    rng = c.rng
    mode = rng.choice(["row", "expert", "block"])
    fast, (ta, tb) = mode != "block" and rng.random() < 0.3, (rng.choice([E4, E4, E4, E5]) for _ in range(2))
    g = rng.choice([1, 1, 2, 3, 4, 8, 16, 33])
    m, n, k = shrink([size(rng, 1024), align(rng, size(rng, 2048), 16, 0.85), align(rng, size(rng, 2048), 16, 0.85)],
                     LIMITS["flop"] // 2 // g)
    kb, nb = -(-k // 128), -(-n // 128)
    od = rng.choice([BF16, BF16, BF16, F16, F32])
    a = Operand(c, (g, m, k), ta, perm=0.1, pad=0.2, step=0.03, offset=0.05).t
    b = Operand(c, (g, n, k), tb, perm=0, pad=0.1, step=0, offset=0.03).t.transpose(-2, -1) if rng.random() < 0.85 \
        else Operand(c, (g, k, n), tb, perm=0.4, pad=0.2, offset=0.05).t
    sa, sb = {"row": lambda: (scales(c, (g, m)), scales(c, (g, n))),
              "expert": lambda: (scales(c, rng.choice([(), (1,)])), scales(c, rng.choice([(g,), (g, 1)]))),
              "block": lambda: (scales(c, (g, m, kb)), scales(c, (g, nb, kb)))}[mode]()
    c.note(mode=mode, fast=fast, a=desc(a), b=desc(b), sa=desc(sa), sb=desc(sb), od=od)
    out, kw = out_args(c, (g, m, n), od, BF16)
    kw["strict"] = rng.random() < 0.25
    c.note(strict=kw["strict"])
    row = mode == "block" or sa.numel() > 1
    want = torch.stack([dequant(a[i], sa[i] if row else sa, mode, 1) @ dequant(b[i].t(), sb[i], mode, 128).t()
                        for i in range(g)])
    r = c.call(tk.ops.scaled_grouped_mm, a, b, sa, sb, use_fast_accum=fast, expect=((GemmError,), "", False), **kw)
    result(r, (g, m, n), od, out)
    close(r, want, max(TOL_FP8_GROUPED[od], TOL_FP8_GROUPED_FAST if fast else 0), "scaled_grouped_mm batch")


OPS = {"copy": lambda c: fuzz_pair(c, "copy"), "transpose": lambda c: fuzz_layout(c, "transpose"),
       "permute": lambda c: fuzz_layout(c, "permute"), "reduce_into": lambda c: fuzz_pair(c, "reduce_into"),
       "gemm": fuzz_gemm, "gemm_grad": fuzz_gemm_grad, "grouped_mm": fuzz_grouped,
       "grouped_forms": fuzz_grouped_forms, "grouped_grad": fuzz_grouped_grad, "gemm_list": fuzz_gemm_list,
       "scaled_mm": fuzz_scaled_mm,
       "scaled_gemm_list": fuzz_scaled_gemm_list,
       "scaled_grouped_mm": fuzz_scaled_grouped, "scaled_grouped_batch": fuzz_scaled_grouped_batch}


# ---------------------------------------------------------------------------------------------------------------
# driver

def run_one(fn, c):
    try:
        fn(c)
        return "ok", ""
    except Skip as e:
        return "skip", str(e)
    except Refused:
        return "refused", ""
    except Fail as e:
        return "fail", str(e)
    except Exception as e:  # this script's own code (building inputs or references) raised
        tb = e.__traceback__
        while tb.tb_next:
            tb = tb.tb_next
        return "script-error", f"{type(e).__name__}: {str(e).splitlines()[0][:300]} (line {tb.tb_lineno})"


def cuda_alive(dev) -> bool:
    try:
        torch.cuda.synchronize(dev)
        return float((torch.ones(1, device=dev) + 1).item()) == 2.0
    except Exception:
        return False


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--seconds", type=float, default=240, help="stop drawing new cases after this long")
    ap.add_argument("--device", default="cuda", help="cuda (default) or cpu (torch paths only: a self-check)")
    ap.add_argument("--ops", default=",".join(OPS), help="comma-separated subset of the default")
    ap.add_argument("--case", type=int, help="run only this case index (replay)")
    ap.add_argument("--max-cases", type=int)
    ap.add_argument("--show", type=int, default=3, help="print the first N failures of each kind (default 3)")
    ap.add_argument("--verbose", action="store_true", help="print every case")
    args = ap.parse_args(argv)
    names = [s.strip() for s in args.ops.split(",") if s.strip()]
    if not names or any(s not in OPS for s in names):
        ap.error(f"--ops: choose from {','.join(OPS)}")
    dev = torch.device(args.device)
    if dev.type == "cuda" and not torch.cuda.is_available():
        print("no CUDA device: run on a GPU, or pass --device cpu for a self-check of the script")
        return 2
    if dev.type == "cpu":
        LIMITS.update(bw_bytes=1 << 20, dim=256, flop=1 << 26, rows=600)
    torch.backends.cuda.matmul.allow_tf32 = False  # fp32 fallbacks are compared at 1e-4
    print(f"fuzz_ops: seed {args.seed}, {args.seconds:g} s, ops {','.join(names)}, device "
          f"{torch.cuda.get_device_name(dev) if dev.type == 'cuda' else 'cpu'}, torch {torch.__version__}", flush=True)
    stats, kinds, reasons = ({n: collections.Counter() for n in names} for _ in range(3))
    t0, broken, seen = time.monotonic(), False, collections.Counter()
    for i in [args.case] if args.case is not None else itertools.count():
        if args.case is None and (time.monotonic() - t0 > args.seconds or (args.max_cases and i >= args.max_cases)):
            break
        name = names[i % len(names)]
        c = Case(args.seed, i, dev)
        status, msg = run_one(OPS[name], c)
        stats[name].update(["cases", status])
        if c.path:
            fallback = c.path.startswith("torch:")
            stats[name]["fallback" if fallback else "kernel"] += 1
            kinds[name]["torch" if fallback else c.path.split(": ")[0]] += 1
            reasons[name].update([c.path[6:76]] if fallback else [])
        line = f"[{name} #{i}] {' '.join(c.notes)} path={c.path!r}"
        if args.verbose:
            print(f"{status:>12} {line} {msg}", flush=True)
        sig = (name, status, re.sub(r"\d+", "#", msg)[:90])
        seen[sig] += status in ("fail", "script-error")
        if status in ("fail", "script-error") and seen[sig] <= args.show:
            print(f"{status.upper()} {line}: {msg}\n    repro: PYTHONPATH=src python3 {sys.argv[0]} --seed {args.seed} "
                  f"--ops {name} --case {i}" + (" --device cpu" if dev.type == "cpu" else ""), flush=True)
        if status in ("fail", "script-error") and dev.type == "cuda" and not cuda_alive(dev):
            print(f"CUDA context broken after [{name} #{i}] {line}: stopping", flush=True)
            broken = True
            break
    print(f"\n{'op':<18}{'cases':>7}{'kernel':>8}{'torch':>7}{'skip':>6}{'refused':>8}{'FAIL':>6}  paths")
    for n in names:
        st = stats[n]
        print(f"{n:<18}{st['cases']:>7}{st['kernel']:>8}{st['fallback']:>7}{st['skip']:>6}{st['refused']:>8}"
              f"{st['fail'] + st['script-error']:>6}  " + ", ".join(f"{k} {v}" for k, v in kinds[n].most_common(6)))
        for r, v in reasons[n].most_common(2):
            print(f"{'':<20}torch x{v}: {r}")
    print("\nfailures by kind:" if any(seen.values()) else "")
    for (name, status, sig), v in sorted(seen.items(), key=lambda kv: -kv[1]):
        if v:
            print(f"{v:>6} x {status} in {name}: {sig}")
    total = sum(st["fail"] + st["script-error"] for st in stats.values())
    print(f"\n{sum(st['cases'] for st in stats.values())} cases in {time.monotonic() - t0:.0f} s, {total} failures"
          + (" (CUDA context broken: stopped)" if broken else ""))
    return 1 if total or broken else 0


if __name__ == "__main__":
    sys.exit(main())
