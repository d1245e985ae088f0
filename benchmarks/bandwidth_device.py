"""One device call for the bandwidth kernels: GPU tests, a tile/stage sweep, then the full benchmark.

    PYTHONPATH=src python3 benchmarks/bandwidth_device.py [tests] [host] [tp] [sweep] [bench]
                                                                    (default: tests, sweep, bench)

``host``: host microseconds per call on small tensors (tmakit vs torch; HEAD's package too when ``.oldsrc/src``
holds a copy of it) with cProfile tables; ``tp``: transpose/permute device experiments (tile order, tile shapes).

Each phase runs in its own subprocess under a time limit (a hung kernel costs one phase, not the call). Everything
lands in $OUT (or ./bench_out): pytest.log, sweep.json, bench.json, bench.md, bench.png; a short table prints last.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = Path(os.environ.get("OUT", ROOT / "bench_out"))
MiB = 1 << 20




def _reduce_matches_add(dt, sizes, spread=0):
    """ops.reduce_into(v, u, "add") equals torch's v.add_(u) bit for bit on the combine path, for each size (u scaled
    by 2^-spread .. 2^spread element-wise when spread > 0)."""
    import torch

    from tmakit import ops

    ok = True
    for nn in sizes:
        u = torch.randn(nn, device="cuda")
        if spread:
            u = u * torch.exp2(torch.randint(-spread, spread, (nn,), device="cuda").float())
        u = u.to(dt)
        v = torch.randn(nn, device="cuda").to(dt)
        ref = v.clone()
        ref.add_(u)
        ops.reduce_into(v, u, "add")
        ok = ok and bool(torch.equal(v, ref)) and ops.last_path == "tma:combine"
    return ok

def _check_reduce_variants(dname, variants, save):
    """Saves whether each (name, CopyConfig kwargs) variant's combine add equals add_ bit for bit (sizes with tails,
    operands spread over 2^+-40)."""
    from tmakit.kernels import bandwidth as bw

    dt = torch_dt(dname)
    for name, kw in variants:
        bw.REDUCE_CONFIG = bw.CopyConfig(**kw)
        ok = _reduce_matches_add(dt, (5, 4097 * 33, (3 << 20) + 5, 64 << 20, 160 << 20), spread=40)
        save(dict(case=f"check {dname}", cfg=name, ok=ok))


def _saver(name, label=None):
    """(save, rows): ``save(row)`` appends a result row, prints it and rewrites $OUT/<name>.json, so a call cut short
    still returns what it measured."""
    rows = []
    out = OUT / f"{name}.json"

    def save(row):
        rows.append(row)
        print(label or name, json.dumps(row), flush=True)
        out.write_text(json.dumps(rows, indent=1))

    return save, rows

def _env(src=None):
    e = dict(os.environ)
    e["PYTHONPATH"] = str(src or ROOT / "src") + os.pathsep + e.get("PYTHONPATH", "")
    e["PYTHONUNBUFFERED"] = "1"
    return e


def phase(name, argv, limit, src=None):
    t = time.time()
    print(f"=== {name} (limit {limit}s)", flush=True)
    try:
        r = subprocess.run(argv, env=_env(src), cwd=ROOT, timeout=limit, capture_output=True, text=True)
        out = r.stdout + r.stderr
        rc = r.returncode
    except subprocess.TimeoutExpired as e:
        out = (e.stdout or b"").decode() if isinstance(e.stdout, bytes) else (e.stdout or "")
        out += "\nTIMEOUT"
        rc = 124
    (OUT / f"{name}.log").write_text(out)
    print(out[-3000:], flush=True)
    print(f"=== {name}: rc={rc} in {time.time() - t:.0f}s", flush=True)
    return rc


# ------------------------------------------------------------------------------------------------------------------
# sweep (runs in subprocesses, one per op: `bandwidth_device.py _sweep copy|transpose|permute|reduce`)

B = dict(engine="bulk")
SW = dict(swizzle=1)
COPY_CFGS = [
    dict(),
    dict(SW),
    dict(SW, box_bytes=16384, stages=12),
    dict(SW, box_bytes=65536, stages=3),
    dict(flat_width=65536),
    dict(flat_width=4096),
    dict(SW, flat_width=65536),
    dict(box_bytes=16384, stages=12),
    dict(SW, ctas_per_sm=2, stages=3),
    dict(SW, lag=2),
    dict(),
]
TP_CFGS = {
    2: [
        dict(kq=4, stages=4, consumers=8),
        dict(kq=4, stages=5, consumers=8, no=2),
        dict(kq=4, stages=4, consumers=8, batch=1),
        dict(kq=4, stages=4, consumers=4, no=3, mode=1),
        dict(kq=2, stages=4, consumers=8, ctas_per_sm=2, no=2),
        dict(kq=4, stages=4, consumers=8),
    ],
    4: [
        dict(kq=2, stages=4, ctas_per_sm=2, no=4, batch=1),
        dict(kq=2, stages=4, ctas_per_sm=2, consumers=2, no=4, mode=1),
        dict(kq=4, stages=6, consumers=4, no=4, mode=1),
        dict(kq=8, stages=4, consumers=8, no=3, mode=1),
        dict(kq=4, stages=4, ctas_per_sm=2, consumers=8, no=3, batch=1),
        dict(kq=2, stages=4, ctas_per_sm=2, consumers=8, no=4, batch=1),
        dict(kq=2, stages=4, ctas_per_sm=2, no=4, batch=1),
    ],
}
PERM_CFGS = [
    dict(),
    dict(box_mode=1),
    dict(SW, box_mode=1),
    dict(SW, box_mode=1, box_bytes=16384, stages=12),
    dict(SW, box_mode=1, box_bytes=65536, stages=3),
    dict(SW),
]
PERM_T_CFGS = [TP_CFGS[2][0], TP_CFGS[2][1], TP_CFGS[2][3]]
RED_CFGS = [
    dict(lag=3, prefetch=1),
    dict(B, bulk_mode=2, piece=4096, pieces=4, stages=6, consumers=2),
    dict(B, bulk_mode=2, piece=4096, pieces=8, stages=3, consumers=2),
    dict(B, bulk_mode=2, piece=8192, pieces=4, stages=3, consumers=2),
    dict(B, bulk_mode=2, piece=8192, pieces=2, stages=6, consumers=1),
    dict(B, bulk_mode=2, piece=4096, pieces=2, stages=12, consumers=1),
    dict(B, bulk_mode=2, piece=4096, pieces=4, stages=6, consumers=4),
    dict(B, bulk_mode=2, piece=4096, pieces=4, stages=6, consumers=2),
]
PERM_CHECKS = [((5, 33, 17, 24), (1, 0, 2, 3)), ((3, 300, 40), (1, 0, 2)), ((32, 64, 128, 128), (0, 2, 1, 3)),
               ((4, 6, 8, 128), (2, 0, 1, 3)), ((2, 3, 5, 7, 64), (1, 0, 2, 3, 4))]


def _sweep(which):
    import torch

    from tmakit import ops
    from tmakit.bench.harness import time_op
    from tmakit.kernels import bandwidth as bw

    save, res = _saver(f"sweep_{which}", which)

    if which == "small":
        from tmakit.bench.harness import _nsets

        for mib in (1, 4, 16, 64, 128):
            nn = mib << 19
            k = _nsets(4 * nn)
            xs = [torch.randn(nn, device="cuda").to(torch.bfloat16) for _ in range(k)]
            ys = [torch.empty_like(xs[0]) for _ in range(k)]
            peer = time_op(lambda i: ys[i].copy_(xs[i]), k, reps=40)
            for kw in (dict(), dict(B, piece=32768, pieces=1, stages=6)):
                bw.COPY_CONFIG = bw.CopyConfig(**kw)
                ms = time_op(lambda i: ops.copy(xs[i], ys[i]), k, reps=40)
                save(dict(cfg=f"{mib} MiB {kw}", path=ops.last_path, tbs=4 * nn / ms / 1e9, ratio=peer / ms,
                          us=ms * 1e3, peer_us=peer * 1e3))
    if which == "permq":
        def time_q(fn, nsets, reps=30):
            for i in range(5):
                fn(i % nsets)
            torch.cuda.synchronize()
            st = [torch.cuda.Event(enable_timing=True) for _ in range(reps)]
            en = [torch.cuda.Event(enable_timing=True) for _ in range(reps)]
            torch.cuda._sleep(int(1e7))  # the host queues every launch before the GPU reaches them
            for i in range(reps):
                st[i].record()
                fn(i % nsets)
                en[i].record()
            torch.cuda.synchronize()
            import statistics

            return statistics.median(a.elapsed_time(b) for a, b in zip(st, en))

        for shape, dims in (((32, 64, 128, 128), (0, 2, 1, 3)), ((8, 128, 256, 64), (0, 2, 1, 3)),
                            ((32, 64, 128, 128), (0, 3, 1, 2))):
            xs = [torch.randn(shape, device="cuda").to(torch.bfloat16) for _ in range(2)]
            ys = [torch.empty(tuple(shape[d] for d in dims), device="cuda", dtype=torch.bfloat16) for _ in range(2)]
            fl = [torch.empty_like(xs[0]) for _ in range(2)]
            nb = xs[0].numel() * 2
            for kw in (dict(), dict(box_mode=1)):
                bw.COPY_CONFIG = bw.CopyConfig(**kw)
                for q in (False, True):
                    tf = time_q if q else (lambda fn, n, reps=30: time_op(fn, n, reps=reps))
                    pc = tf(lambda i: fl[i].copy_(xs[i]), 2)
                    ms = tf(lambda i: ops.permute(xs[i], dims, out=ys[i]), 2)
                    save(dict(case=str((shape, dims)), cfg=dict(kw, queued=q), path=ops.last_path,
                              tbs=2 * nb / ms / 1e9, vs_copy_same=pc / ms, vs_ceiling=2 * nb / ms / 1e9 / 4.26,
                              us=ms * 1e3))
            del xs, ys, fl
    if which == "copy":
        n = (1 << 30) // 2
        x = torch.randn(n, device="cuda").to(torch.bfloat16)
        y = torch.empty_like(x)
        for kw in COPY_CFGS:
            bw.COPY_CONFIG = bw.CopyConfig(**kw)
            bad = []
            for nb in (1, 7, 16, 255, 4097, 65536 + 48, (1 << 22) + 13, (3 << 20) + 130 * 1024 + 16):
                a = torch.randint(0, 255, (nb,), dtype=torch.uint8, device="cuda")
                b = torch.full((nb,), 77, dtype=torch.uint8, device="cuda")
                ops.copy(a, b)
                if not torch.equal(a, b):
                    bad.append(nb)
            y.fill_(7)
            ops.copy(x, y)
            ok = torch.equal(x, y) and not bad
            path = ops.last_path
            t0 = time.perf_counter()
            for _ in range(200):
                ops.copy(a[:1 << 20], b[:1 << 20])
            host_us = (time.perf_counter() - t0) / 200 * 1e6
            torch.cuda.synchronize()
            ms = time_op(lambda i: ops.copy(x, y), 1, reps=25)
            peer = time_op(lambda i: y.copy_(x), 1, reps=15)
            save(dict(cfg=kw, ok=ok, bad=bad, path=path, tbs=2 * n * 2 / ms / 1e9, ratio=peer / ms,
                      peer_tbs=2 * n * 2 / peer / 1e9, host_us=host_us))
        t0 = time.perf_counter()
        for _ in range(200):
            b[:1 << 20].copy_(a[:1 << 20])
        save(dict(cfg="torch host", host_us=(time.perf_counter() - t0) / 200 * 1e6))
        for mib in (128, 256):
            nn = mib << 19
            xs = [torch.randn(nn, device="cuda").to(torch.bfloat16) for _ in range(2)]
            ys = [torch.empty_like(xs[0]) for _ in range(2)]
            peer = time_op(lambda i: ys[i].copy_(xs[i]), 2, reps=30)
            for kw in (dict(), SW):
                bw.COPY_CONFIG = bw.CopyConfig(**kw)
                ms = time_op(lambda i: ops.copy(xs[i], ys[i]), 2, reps=30)
                save(dict(cfg=f"copy {mib} MiB {kw}", tbs=2 * nn * 2 / ms / 1e9, peer_tbs=2 * nn * 2 / peer / 1e9,
                          ratio=peer / ms))
    if which == "transpose":
        for dt in (torch.bfloat16, torch.float32):
            a = torch.randn(16384, 16384, device="cuda").to(dt)
            b = torch.empty_like(a)
            nb = a.numel() * a.element_size()
            peer_copy = time_op(lambda i: b.copy_(a), 1, reps=15)
            for kw in TP_CFGS[a.element_size()]:
                bw.TRANSPOSE_CONFIG = {a.element_size(): bw.TransposeConfig(**kw)}
                bad = []
                for shp in ((1000, 777), (33, 4096), (4096, 96), (7, 4000)):
                    u = torch.randn(shp, device="cuda").to(dt)
                    v = torch.full((shp[1], shp[0]), 77.0, device="cuda").to(dt)
                    ops.transpose(u, 0, 1, out=v)
                    if not torch.equal(v, u.t()):
                        bad.append(shp)
                b.fill_(7)
                ops.transpose(a, 0, 1, out=b)
                ok = torch.equal(b, a.t()) and not bad
                ms = time_op(lambda i: ops.transpose(a, 0, 1, out=b), 1, reps=20)
                peer2 = time_op(lambda i: b.copy_(a), 1, reps=10)
                pc = min(peer_copy, peer2)
                save(dict(dtype=str(dt), cfg=kw, ok=ok, bad=[str(x) for x in bad], tbs=2 * nb / ms / 1e9,
                          vs_copy=pc / ms, copy_tbs=2 * nb / pc / 1e9))
            del a, b
    if which == "permute":
        cases = (((32, 64, 128, 128), (0, 2, 1, 3)), ((8, 128, 256, 64), (0, 2, 1, 3)),
                 ((32, 64, 128, 128), (0, 3, 1, 2)))
        for shape, dims in cases:
            xs = [torch.randn(shape, device="cuda").to(torch.bfloat16) for _ in range(2)]
            ys = [torch.empty(tuple(shape[d] for d in dims), device="cuda", dtype=torch.bfloat16) for _ in range(2)]
            fl = [torch.empty_like(xs[0]) for _ in range(2)]
            nb = xs[0].numel() * 2
            peer_copy = time_op(lambda i: fl[i].copy_(xs[i]), 2, reps=30)
            cfgs = PERM_CFGS if dims != (0, 3, 1, 2) else PERM_T_CFGS
            for kw in cfgs:
                if dims == (0, 3, 1, 2):
                    bw.TRANSPOSE_CONFIG = {2: bw.TransposeConfig(**kw)}
                else:
                    bw.COPY_CONFIG = bw.CopyConfig(**kw)
                bad = []
                for dt in (torch.bfloat16, torch.float32):
                    for shp, dd in PERM_CHECKS:
                        u = torch.randn(shp, device="cuda").to(dt)
                        v = torch.full(tuple(shp[k] for k in dd), 77.0, device="cuda").to(dt)
                        ops.permute(u, dd, out=v)
                        if not torch.equal(v, u.permute(dd)):
                            bad.append((str(dt), shp, dd, ops.last_path))
                    base = torch.randn(512, 1024, device="cuda").to(dt)
                    u = base[:, 128:640]
                    v = torch.full(u.shape, 77.0, device="cuda").to(dt)
                    ops.copy(u, v)
                    if not torch.equal(u, v):
                        bad.append((str(dt), "slice"))
                ys[0].fill_(7)
                ops.permute(xs[0], dims, out=ys[0])
                ok = torch.equal(ys[0], xs[0].permute(dims)) and not bad
                ms = time_op(lambda i: ops.permute(xs[i], dims, out=ys[i]), 2, reps=30)
                save(dict(case=str((shape, dims)), cfg=kw, ok=ok, bad=[str(b) for b in bad[:4]], path=ops.last_path, tbs=2 * nb / ms / 1e9,
                          vs_copy_same=peer_copy / ms, vs_ceiling=2 * nb / ms / 1e9 / 4.26))
            del xs, ys, fl
    if which == "reduce":
        for dt, mib in ((torch.float32, 512), (torch.bfloat16, 512), (torch.float32, 256), (torch.bfloat16, 256)):
            n = (mib << 20) // (4 if dt == torch.float32 else 2)
            d = torch.randn(n, device="cuda").to(dt)
            s_ = torch.randn(n, device="cuda").to(dt)
            peer = time_op(lambda i: d.add_(s_), 1, reps=15)
            for kw in RED_CFGS if n * d.element_size() == 512 << 20 else RED_CFGS[:2]:
                bw.REDUCE_CONFIG = bw.CopyConfig(**kw)
                bad = []
                for nn in (1, 3, 5, 8, 100, 4097, 65536 + 24, (1 << 22) + 13, (3 << 19) + 33333):
                    for op in ("add", "max"):
                        u = torch.randn(nn, device="cuda").to(dt)
                        v = torch.randn(nn, device="cuda").to(dt)
                        ref = v.clone()
                        ops._torch_reduce(ref, u, op)
                        ops.reduce_into(v, u, op)
                        if not torch.equal(v, ref):
                            bad.append((nn, op, ops.last_path, (v.float() - ref.float()).abs().max().item()))
                ms = time_op(lambda i: ops.reduce_into(d, s_, "add"), 1, reps=20)
                peer2 = time_op(lambda i: d.add_(s_), 1, reps=10)
                pk = min(peer, peer2)
                save(dict(dtype=f"{dt} {mib} MiB", cfg=kw, ok=not bad, bad=[str(x) for x in bad[:4]], path=ops.last_path,
                          tbs=3 * n * d.element_size() / ms / 1e9, ratio=pk / ms))
            del d, s_


# ------------------------------------------------------------------------------------------------------------------
# host cost per call (`bandwidth_device.py _host LABEL`): 1000 calls on small tensors, one synchronize at the end

def _host(label):
    import cProfile
    import io
    import pstats

    import torch

    from tmakit import ops

    dev = torch.cuda.current_device()
    bf = torch.bfloat16
    x4 = torch.randn(4, 8, 16, 16, device="cuda").to(bf)
    o0213 = torch.empty(4, 16, 8, 16, device="cuda", dtype=bf)
    o0312 = torch.empty(4, 16, 8, 16, device="cuda", dtype=bf)
    x2 = torch.randn(64, 64, device="cuda").to(bf)
    o2 = torch.empty(64, 64, device="cuda", dtype=bf)
    a = torch.randn(2048, device="cuda")
    b = torch.empty_like(a)
    xs4 = [torch.randn(4, 8, 16, 16, device="cuda").to(bf) for _ in range(4)]
    os4 = [torch.empty(4, 16, 8, 16, device="cuda", dtype=bf) for _ in range(4)]
    as_ = [torch.randn(2048, device="cuda") for _ in range(4)]
    bs_ = [torch.empty_like(a) for _ in range(4)]
    rot = [0]

    def rotating(f):
        def g():
            rot[0] = (rot[0] + 1) & 3
            return f(rot[0])
        return g

    cases = [
        ("permute 0312 out, 4 address pairs", rotating(lambda i: ops.permute(xs4[i], (0, 3, 1, 2), out=os4[i]))),
        ("permute 0213 out, 4 address pairs", rotating(lambda i: ops.permute(xs4[i], (0, 2, 1, 3), out=os4[i]))),
        ("copy 8 KiB, 4 address pairs", rotating(lambda i: ops.copy(as_[i], bs_[i]))),
        ("torch b.copy_(a), 4 address pairs", rotating(lambda i: bs_[i].copy_(as_[i]))),
        ("permute 0213 out", lambda: ops.permute(x4, (0, 2, 1, 3), out=o0213)),
        ("permute 0213", lambda: ops.permute(x4, (0, 2, 1, 3))),
        ("permute 0312 out", lambda: ops.permute(x4, (0, 3, 1, 2), out=o0312)),
        ("permute 0312", lambda: ops.permute(x4, (0, 3, 1, 2))),
        ("transpose 2d out", lambda: ops.transpose(x2, 0, 1, out=o2)),
        ("copy 8 KiB", lambda: ops.copy(a, b)),
        ("reduce add 8 KiB", lambda: ops.reduce_into(b, a, "add")),
        ("torch y.copy_(x.permute 0312)", lambda: o0312.copy_(x4.permute(0, 3, 1, 2))),
        ("torch x.permute(0312).contiguous()", lambda: x4.permute(0, 3, 1, 2).contiguous()),
        ("torch y.copy_(x.t())", lambda: o2.copy_(x2.t())),
        ("torch b.copy_(a)", lambda: b.copy_(a)),
        ("torch b.add_(a)", lambda: b.add_(a)),
        ("torch.cuda.current_stream().cuda_stream", lambda: torch.cuda.current_stream().cuda_stream),
        ("torch._C._cuda_getCurrentRawStream", lambda: torch._C._cuda_getCurrentRawStream(dev)),
    ]
    rows = []
    for name, fn in cases:
        for _ in range(50):
            fn()
        torch.cuda.synchronize()
        best = []
        for _ in range(3):
            t0 = time.perf_counter()
            for _ in range(1000):
                fn()
            torch.cuda.synchronize()
            best.append((time.perf_counter() - t0) / 1000 * 1e6)
        rows.append(dict(label=label, case=name, us=min(best), path=ops.last_path if "torch" not in name else ""))
        print(f"host {label:4s} {name:40s} {min(best):7.2f} us  {rows[-1]['path']}", flush=True)
    (OUT / f"host_{label}.json").write_text(json.dumps(rows, indent=1))
    for name in ("permute 0312 out", "permute 0213") if os.environ.get("HOST_PROF") else ():
        fn = dict(cases)[name]
        pr = cProfile.Profile()
        pr.enable()
        for _ in range(1000):
            fn()
        pr.disable()
        torch.cuda.synchronize()
        sio = io.StringIO()
        pstats.Stats(pr, stream=sio).sort_stats("tottime").print_stats(12)
        (OUT / f"host_{label}_{name.replace(' ', '_')}.prof.txt").write_text(sio.getvalue())
        print("\n".join(sio.getvalue().splitlines()[:22]), flush=True)


# ------------------------------------------------------------------------------------------------------------------
# transpose / permute device experiments (`bandwidth_device.py _tp`): tile order, tile size, CTAs per SM, size

def _time_queued(fn, nsets, reps=30):
    """Median ms per call with every launch queued behind a GPU sleep: device time, not host time."""
    import statistics

    import torch

    for i in range(5):
        fn(i % nsets)
    torch.cuda.synchronize()
    st = [torch.cuda.Event(enable_timing=True) for _ in range(reps)]
    en = [torch.cuda.Event(enable_timing=True) for _ in range(reps)]
    torch.cuda._sleep(int(2e7))
    for i in range(reps):
        st[i].record()
        fn(i % nsets)
        en[i].record()
    torch.cuda.synchronize()
    return statistics.median(a.elapsed_time(b) for a, b in zip(st, en))


TP_EXP = [
    dict(coords=0),
    dict(coords=1),
    dict(coords=2),
    dict(coords=2, group=4),
    dict(coords=2, group=16),
    dict(coords=0),
    dict(coords=2),
]


def _tp():
    import torch

    from tmakit import ops
    from tmakit.bench.harness import time_op
    from tmakit.kernels import bandwidth as bw

    save, res = _saver("tp")
    base_t = dict(bw.TRANSPOSE_CONFIG)


    def checks(dt):
        bad = []
        for shp in ((1000, 777), (33, 4096), (4096, 96), (7, 4000), (3000, 8)):
            u = torch.randn(shp, device="cuda").to(dt)
            v = torch.full((shp[1], shp[0]), 77.0, device="cuda").to(dt)
            ops.transpose(u, 0, 1, out=v)
            if not torch.equal(v, u.t()):
                bad.append(shp)
        for shp, dd in (((5, 33, 17, 24), (1, 0, 2, 3)), ((2, 3, 5, 7, 64), (4, 3, 2, 1, 0)),
                        ((4, 6, 300, 128), (0, 3, 1, 2))):
            u = torch.randn(shp, device="cuda").to(dt)
            if not torch.equal(ops.permute(u, dd), u.permute(dd)):
                bad.append((shp, dd))
        return bad

    # permutes, 64 MiB (two sets), per call and queued; torch copy of the same size interleaved
    for shape, dims, cfgs in (((32, 64, 128, 128), (0, 2, 1, 3), [None]),
                              ((32, 64, 128, 128), (0, 3, 1, 2),
                               [dict(), dict(coords=0), dict(coords=1), dict(coords=2), dict(coords=0)]),
                              ((128, 64, 128, 128), (0, 3, 1, 2), [dict(coords=0), dict(coords=2)])):
        xs = [torch.randn(shape, device="cuda").to(torch.bfloat16) for _ in range(2)]
        ys = [torch.empty(tuple(shape[d] for d in dims), device="cuda", dtype=torch.bfloat16) for _ in range(2)]
        fl = [torch.empty_like(xs[0]) for _ in range(2)]
        nb = xs[0].numel() * 2
        for kw in cfgs:
          try:
            full = dict(base_t[2].__dict__, **(kw or {}))
            bw.TRANSPOSE_CONFIG = {**base_t, 2: bw.TransposeConfig(**full)}
            bad = checks(torch.bfloat16) if kw else []
            ys[0].fill_(7)
            ops.permute(xs[0], dims, out=ys[0])
            ok = torch.equal(ys[0], xs[0].permute(dims)) and not bad
            for q in (False, True):
                tf = _time_queued if q else (lambda fn, n, reps=30: time_op(fn, n, reps=reps))
                pc = tf(lambda i: fl[i].copy_(xs[i]), 2)
                ms = tf(lambda i: ops.permute(xs[i], dims, out=ys[i]), 2)
                pc2 = tf(lambda i: fl[i].copy_(xs[i]), 2)
                pt = tf(lambda i: ys[i].copy_(xs[i].permute(dims)), 2) if kw is None or kw == {} else float("nan")
                save(dict(case=str((shape, dims)), cfg=kw, queued=q, ok=ok, bad=[str(b) for b in bad[:3]],
                          path=ops.last_path, tbs=2 * nb / ms / 1e9, us=ms * 1e3,
                          vs_copy_same=min(pc, pc2) / ms, vs_ceiling=2 * nb / ms / 1e9 / 4.26, vs_torch=pt / ms))
          except Exception as ex:  # keep going: one failing config costs its row
            save(dict(case=str((shape, dims)), cfg=kw, ok=False, error=repr(ex)[:300]))
        del xs, ys, fl
    bw.TRANSPOSE_CONFIG = dict(base_t)
    # 16384^2 transposes: tile-order groups (runtime parameter) and fp32 tile shapes
    for dt in (torch.bfloat16, torch.float32):
        e = 2 if dt == torch.bfloat16 else 4
        a = torch.randn(16384, 16384, device="cuda").to(dt)
        b = torch.empty_like(a)
        nb = a.numel() * e
        exps = list(TP_EXP)
        if e == 4:
            exps += [dict(coords=2, stages=8), dict(coords=2, stages=8, no=6), dict(coords=2, kq=4, no=3, stages=3)]
        for kw in exps:
          try:
            full = dict(base_t[e].__dict__, **kw)
            bw.TRANSPOSE_CONFIG = {**base_t, e: bw.TransposeConfig(**full)}
            bad = checks(dt)
            b.fill_(7)
            ops.transpose(a, 0, 1, out=b)
            ok = torch.equal(b, a.t()) and not bad
            pc = time_op(lambda i: b.copy_(a), 1, reps=10)
            ms = time_op(lambda i: ops.transpose(a, 0, 1, out=b), 1, reps=20)
            pc2 = time_op(lambda i: b.copy_(a), 1, reps=10)
            save(dict(case=f"{dt} 16384^2", cfg=kw, ok=ok, bad=[str(x) for x in bad[:3]], tbs=2 * nb / ms / 1e9,
                      vs_copy=min(pc, pc2) / ms, copy_tbs=2 * nb / min(pc, pc2) / 1e9))
          except Exception as ex:  # keep going: one failing config costs its row
            save(dict(case=f"{dt} 16384^2", cfg=kw, ok=False, error=repr(ex)[:300]))
        del a, b
    bw.TRANSPOSE_CONFIG = dict(base_t)


# session 4: smem transposition variants, a store warp, L2 promotion; a plain LSU copy for the copy gap
# (`bandwidth_device.py _tp4` / `_lsu`)

TP4 = {
    2: [dict(), dict(xpose=9), dict(xpose=1), dict(xpose=2), dict(mode=2), dict(xpose=2, mode=2),
        dict(xpose=2, consumers=4), dict(xpose=2, l2=0), dict(xpose=2, mode=2, consumers=4), dict(),
        dict(xpose=2)],
    4: [dict(), dict(xpose=9), dict(mode=2), dict(l2=0), dict(l2=2), dict(mode=2, consumers=2), dict()],
}
TP4_PERM = [dict(), dict(xpose=2), dict(xpose=2, mode=2), dict(xpose=9), dict()]
# call 14: consumer count and tile/CTA shape under mode 2 (store warp)
X2 = dict(xpose=2, mode=2)
TP5 = {
    2: [dict(xpose=2), dict(X2), dict(X2, consumers=4), dict(X2, consumers=2), dict(X2, consumers=1),
        dict(X2, consumers=2, kq=2, ctas_per_sm=2), dict(X2, consumers=1, kq=2, ctas_per_sm=2),
        dict(X2, consumers=2, kq=1, ctas_per_sm=3), dict(X2, consumers=2, stages=5, no=2),
        dict(xpose=9, mode=2, consumers=2), dict(), dict(X2, consumers=2), dict(xpose=2)],
    4: [dict(), dict(mode=2, consumers=2), dict(mode=2, consumers=1), dict(mode=2, consumers=2, stages=5, no=3),
        dict(mode=2, consumers=2, ctas_per_sm=3), dict(mode=2, consumers=1, ctas_per_sm=3),
        dict(mode=2, consumers=2, kq=4, stages=4, no=3, ctas_per_sm=1), dict(mode=2, consumers=2, group=0),
        dict(xpose=9, mode=2, consumers=2), dict(), dict(mode=2, consumers=2)],
}
TP5_PERM = [dict(), dict(xpose=2), dict(X2, consumers=2), dict(X2, consumers=2, kq=2, ctas_per_sm=2),
            dict(X2, consumers=1, kq=2, ctas_per_sm=2), dict(X2, consumers=4), dict(xpose=2)]


def _tp4():
    import torch

    from tmakit import ops
    from tmakit.bench.harness import time_op
    from tmakit.kernels import bandwidth as bw

    save, res = _saver("tp4")
    base_t = dict(bw.TRANSPOSE_CONFIG)
    only = os.environ.get("TP4_ONLY", "tp,perm").split(",")
    tp_sets, perm_set = (TP5, TP5_PERM) if os.environ.get("TP_SET") == "tp5" else (TP4, TP4_PERM)


    def checks(dt):
        bad = []
        for shp in ((1000, 777), (33, 4096), (4096, 96), (7, 4000), (3000, 8), (129, 200)):
            u = torch.randn(shp, device="cuda").to(dt)
            v = torch.full((shp[1], shp[0]), 77.0, device="cuda").to(dt)
            ops.transpose(u, 0, 1, out=v)
            if not torch.equal(v, u.t()):
                bad.append(shp)
        for shp, dd in (((5, 33, 17, 24), (1, 0, 2, 3)), ((2, 3, 5, 7, 64), (4, 3, 2, 1, 0)),
                        ((4, 6, 300, 128), (0, 3, 1, 2)), ((3, 70, 130), (0, 2, 1))):
            u = torch.randn(shp, device="cuda").to(dt)
            if not torch.equal(ops.permute(u, dd), u.permute(dd)):
                bad.append((shp, dd))
        return bad

    def use(e, kw):
        full = dict(base_t[e].__dict__, **kw)
        bw.TRANSPOSE_CONFIG = {**base_t, e: bw.TransposeConfig(**full)}

    if "tp" in only:
        for dt in (torch.bfloat16, torch.float32):
            e = 2 if dt == torch.bfloat16 else 4
            a = torch.randn(16384, 16384, device="cuda").to(dt)
            b = torch.empty_like(a)
            nb = a.numel() * e
            for kw in tp_sets[e]:
                try:
                    use(e, kw)
                    diag = kw.get("xpose") == 9
                    bad = [] if diag else checks(dt)
                    b.fill_(7)
                    ops.transpose(a, 0, 1, out=b)
                    ok = (not diag) and torch.equal(b, a.t()) and not bad
                    pc = time_op(lambda i: b.copy_(a), 1, reps=10)
                    ms = time_op(lambda i: ops.transpose(a, 0, 1, out=b), 1, reps=20)
                    pc2 = time_op(lambda i: b.copy_(a), 1, reps=10)
                    save(dict(case=f"{dt} 16384^2", cfg=kw, ok=ok, diag=diag, bad=[str(x) for x in bad[:3]],
                              tbs=2 * nb / ms / 1e9, us=ms * 1e3, vs_copy=min(pc, pc2) / ms,
                              copy_tbs=2 * nb / min(pc, pc2) / 1e9))
                except Exception as ex:  # keep going: one failing config costs its row
                    save(dict(case=f"{dt} 16384^2", cfg=kw, ok=False, error=repr(ex)[:300]))
            del a, b
            bw.TRANSPOSE_CONFIG = dict(base_t)
    if "perm" in only:
        for shape in ((32, 64, 128, 128), (128, 64, 128, 128)):
            dims = (0, 3, 1, 2)
            xs = [torch.randn(shape, device="cuda").to(torch.bfloat16) for _ in range(2)]
            ys = [torch.empty(tuple(shape[d] for d in dims), device="cuda", dtype=torch.bfloat16) for _ in range(2)]
            fl = [torch.empty_like(xs[0]) for _ in range(2)]
            nb = xs[0].numel() * 2
            for kw in perm_set if shape[0] == 32 else perm_set[:4]:
                try:
                    use(2, kw)
                    diag = kw.get("xpose") == 9
                    ys[0].fill_(7)
                    ops.permute(xs[0], dims, out=ys[0])
                    ok = (not diag) and torch.equal(ys[0], xs[0].permute(dims))
                    for q in (False, True):
                        tf = _time_queued if q else (lambda fn, n, reps=30: time_op(fn, n, reps=reps))
                        pc = tf(lambda i: fl[i].copy_(xs[i]), 2)
                        ms = tf(lambda i: ops.permute(xs[i], dims, out=ys[i]), 2)
                        pc2 = tf(lambda i: fl[i].copy_(xs[i]), 2)
                        save(dict(case=str((shape, dims)), cfg=kw, queued=q, ok=ok, diag=diag, path=ops.last_path,
                                  tbs=2 * nb / ms / 1e9, us=ms * 1e3, copy_us=min(pc, pc2) * 1e3,
                                  vs_copy_same=min(pc, pc2) / ms, vs_ceiling=2 * nb / ms / 1e9 / 4.24))
                except Exception as ex:
                    save(dict(case=str((shape, dims)), cfg=kw, ok=False, error=repr(ex)[:300]))
            del xs, ys, fl
        bw.TRANSPOSE_CONFIG = dict(base_t)


LSU_SRC = r"""
extern "C" __global__ void __launch_bounds__(256) lsu_copy(const uint4* __restrict__ src, uint4* __restrict__ dst,
                                                           long long n16) {
  long long i = blockIdx.x * 256ll + threadIdx.x;
  const long long stride = (long long)gridDim.x * 256ll;
  for (; i + 3 * stride < n16; i += 4 * stride) {
    uint4 a = src[i], b = src[i + stride], c = src[i + 2 * stride], d = src[i + 3 * stride];
    dst[i] = a; dst[i + stride] = b; dst[i + 2 * stride] = c; dst[i + 3 * stride] = d;
  }
  for (; i < n16; i += stride) dst[i] = src[i];
}
// block-contiguous with K vectors per thread and optional streaming (evict-first) cache hints
template <int K, bool CS>
__device__ __forceinline__ void blk_copy(const uint4* __restrict__ src, uint4* __restrict__ dst, long long n16) {
  const long long base = blockIdx.x * (256ll * K) + threadIdx.x;
  uint4 v[K];
#pragma unroll
  for (int k = 0; k < K; ++k) if (base + k * 256 < n16) v[k] = CS ? __ldcs(src + base + k * 256) : src[base + k * 256];
#pragma unroll
  for (int k = 0; k < K; ++k) if (base + k * 256 < n16) { if (CS) __stcs(dst + base + k * 256, v[k]); else dst[base + k * 256] = v[k]; }
}
extern "C" __global__ void __launch_bounds__(256) lsu_blk2(const uint4* s, uint4* d, long long n) { blk_copy<2, false>(s, d, n); }
extern "C" __global__ void __launch_bounds__(256) lsu_blk8(const uint4* s, uint4* d, long long n) { blk_copy<8, false>(s, d, n); }
extern "C" __global__ void __launch_bounds__(256) lsu_blk4cs(const uint4* s, uint4* d, long long n) { blk_copy<4, true>(s, d, n); }
extern "C" __global__ void __launch_bounds__(256) lsu_blk8cs(const uint4* s, uint4* d, long long n) { blk_copy<8, true>(s, d, n); }
// block-contiguous: each block moves 4 x 256 vectors of one 16 KiB piece (as torch's vectorized elementwise copy)
extern "C" __global__ void __launch_bounds__(256) lsu_copy_blk(const uint4* __restrict__ src, uint4* __restrict__ dst,
                                                               long long n16) {
  const long long base = blockIdx.x * 1024ll + threadIdx.x;
  uint4 v[4];
#pragma unroll
  for (int k = 0; k < 4; ++k) if (base + k * 256 < n16) v[k] = src[base + k * 256];
#pragma unroll
  for (int k = 0; k < 4; ++k) if (base + k * 256 < n16) dst[base + k * 256] = v[k];
}
"""


# call 15: confirm the new defaults against the old ones across sizes, interleaved rounds
OLD_T = {2: dict(kq=4, stages=4, consumers=8, group=16),
         4: dict(kq=2, stages=4, ctas_per_sm=2, no=4, batch=1, group=4)}
A2 = dict(OLD_T[2], xpose=2)                                            # stmatrix, 1 CTA, 8 warps, mode 0
C2 = dict(A2, kq=2, ctas_per_sm=2, mode=2, consumers=2)                 # + 16 KiB tiles, 2 CTAs, store warp
TP6 = {
    2: [("old", OLD_T[2]), ("A x2", A2), ("C x2 m2 c2 kq2 2cta", C2), ("B x2 m2 c4", dict(A2, mode=2, consumers=4)),
        ("C4 x2 m2 c4 kq2 2cta", dict(C2, consumers=4)), ("C m0 c4 kq2 2cta", dict(C2, mode=0, consumers=4)),
        ("diag C", dict(C2, xpose=9))],
    4: [("old", OLD_T[4]), ("E m2 c2", dict(OLD_T[4], mode=2, consumers=2)),
        ("E m2 c2 no3", dict(OLD_T[4], mode=2, consumers=2, no=3))],
}


def _tp6():
    import math

    import torch

    from tmakit import ops
    from tmakit.bench.harness import time_op
    from tmakit.kernels import bandwidth as bw

    save, res = _saver("tp6")
    base_t = dict(bw.TRANSPOSE_CONFIG)


    def use(e, kw):
        bw.TRANSPOSE_CONFIG = {**base_t, e: bw.TransposeConfig(**kw)}

    for dt, sizes in ((torch.bfloat16, (4096, 8192, 16384, 32768)), (torch.float32, (4096, 8192, 16384, 32768))):
        e = 2 if dt == torch.bfloat16 else 4
        for n in sizes:
            nb = n * n * e
            k = max(1, math.ceil(4 * 60 * MiB / nb))
            xs = [torch.randn(n, n, device="cuda").to(dt) for _ in range(k)]
            ys = [torch.empty_like(xs[0]) for _ in range(k)]
            cfgs = TP6[e] if n == 16384 else [c for c in TP6[e] if not c[0].startswith(("diag", "C4", "C m0"))]
            cfgs = cfgs + [("default", None)]
            rounds = 3 if n == 16384 else 2
            acc = {name: [] for name, _ in cfgs}
            for name, kw in cfgs:  # correctness once per config (the big one)
                bw.TRANSPOSE_CONFIG = dict(base_t)
                if kw is not None:
                    use(e, kw)
                ys[0].fill_(7)
                ops.transpose(xs[0], 0, 1, out=ys[0])
                acc[name + " ok"] = bool(torch.equal(ys[0], xs[0].t()))
            for r in range(rounds):
                for name, kw in cfgs:
                    bw.TRANSPOSE_CONFIG = dict(base_t)
                    if kw is not None:
                        use(e, kw)
                    pc = time_op(lambda i: ys[i].copy_(xs[i]), k, reps=10)
                    ms = time_op(lambda i: ops.transpose(xs[i], 0, 1, out=ys[i]), k, reps=15)
                    pc2 = time_op(lambda i: ys[i].copy_(xs[i]), k, reps=10)
                    acc[name].append(min(pc, pc2) / ms)
            for name, kw in cfgs:
                v = acc[name]
                save(dict(case=f"{dt} {n}^2", cfg=name, ok=acc[name + " ok"], vs_copy=sum(v) / len(v),
                          rounds=[round(x, 4) for x in v]))
            del xs, ys
    bw.TRANSPOSE_CONFIG = dict(base_t)
    for shape, dims in (((32, 64, 128, 128), (0, 3, 1, 2)), ((128, 64, 128, 128), (0, 3, 1, 2)),
                        ((64, 64, 64, 64), (3, 2, 1, 0)), ((8, 128, 256, 64), (0, 3, 1, 2)),
                        ((16, 2048, 1024), (0, 2, 1))):
        xs = [torch.randn(shape, device="cuda").to(torch.bfloat16) for _ in range(2)]
        ys = [torch.empty(tuple(shape[d] for d in dims), device="cuda", dtype=torch.bfloat16) for _ in range(2)]
        fl = [torch.empty_like(xs[0]) for _ in range(2)]
        nb = xs[0].numel() * 2
        for name, kw in (("old", OLD_T[2]), ("A x2", A2), ("C", C2), ("default", None)):
            bw.TRANSPOSE_CONFIG = dict(base_t)
            if kw is not None:
                use(2, kw)
            ys[0].fill_(7)
            ops.permute(xs[0], dims, out=ys[0])
            ok = bool(torch.equal(ys[0], xs[0].permute(dims)))
            for q in (False, True):
                tf = _time_queued if q else (lambda fn, n, reps=30: time_op(fn, n, reps=reps))
                pc = tf(lambda i: fl[i].copy_(xs[i]), 2)
                ms = tf(lambda i: ops.permute(xs[i], dims, out=ys[i]), 2)
                pc2 = tf(lambda i: fl[i].copy_(xs[i]), 2)
                save(dict(case=str((shape, dims)), cfg=name, queued=q, ok=ok, us=ms * 1e3, copy_us=min(pc, pc2) * 1e3,
                          vs_copy_same=min(pc, pc2) / ms, vs_ceiling=2 * nb / ms / 1e9 / 4.24))
        del xs, ys, fl
    bw.TRANSPOSE_CONFIG = dict(base_t)


# call 16: refinements around the new shapes (full configs, no `wide` overrides), interleaved rounds
E4 = dict(OLD_T[4], mode=2, consumers=2)
TP7 = [
    (2, 16384, [("C", C2), ("C g8", dict(C2, group=8)), ("C g32", dict(C2, group=32)), ("C g0", dict(C2, group=0)),
                ("C s3 no4", dict(C2, stages=3, no=4)), ("C c3", dict(C2, consumers=3)), ("A", A2)]),
    (2, 32768, [("C", C2), ("C g8", dict(C2, group=8)), ("C g32", dict(C2, group=32)),
                ("C s3 no4", dict(C2, stages=3, no=4))]),
    (4, 16384, [("E", E4), ("E g8", dict(E4, group=8)), ("E g16", dict(E4, group=16)), ("E g2", dict(E4, group=2)),
                ("E s6", dict(E4, stages=6)), ("E c3", dict(E4, consumers=3)), ("old", OLD_T[4])]),
]
TP7_PERM = [("A", A2), ("A c4", dict(A2, consumers=4)), ("A s5 no2", dict(A2, stages=5, no=2)),
            ("A kq2", dict(A2, kq=2)), ("A g0", dict(A2, group=0)), ("B m2 c4", dict(A2, mode=2, consumers=4)),
            ("A m2 c8", dict(A2, mode=2))]


def _tp7():
    import math

    import torch

    from tmakit import ops
    from tmakit.bench.harness import time_op
    from tmakit.kernels import bandwidth as bw

    save, res = _saver("tp7")
    base_t = dict(bw.TRANSPOSE_CONFIG)


    def use(e, kw):
        bw.TRANSPOSE_CONFIG = {**base_t, e: bw.TransposeConfig(**kw)}

    for e, n, cfgs in TP7:
        dt = torch.bfloat16 if e == 2 else torch.float32
        nb = n * n * e
        k = max(1, math.ceil(4 * 60 * MiB / nb))
        xs = [torch.randn(n, n, device="cuda").to(dt) for _ in range(k)]
        ys = [torch.empty_like(xs[0]) for _ in range(k)]
        acc = {name: [] for name, _ in cfgs}
        oks = {}
        for name, kw in cfgs:
            use(e, kw)
            ys[0].fill_(7)
            ops.transpose(xs[0], 0, 1, out=ys[0])
            oks[name] = bool(torch.equal(ys[0], xs[0].t()))
        for r in range(3 if n == 16384 else 2):
            for name, kw in cfgs:
                use(e, kw)
                pc = time_op(lambda i: ys[i].copy_(xs[i]), k, reps=10)
                ms = time_op(lambda i: ops.transpose(xs[i], 0, 1, out=ys[i]), k, reps=15)
                pc2 = time_op(lambda i: ys[i].copy_(xs[i]), k, reps=10)
                acc[name].append(min(pc, pc2) / ms)
        for name, _ in cfgs:
            v = acc[name]
            save(dict(case=f"{dt} {n}^2", cfg=name, ok=oks[name], vs_copy=sum(v) / len(v),
                      rounds=[round(x, 4) for x in v]))
        del xs, ys
    shape, dims = (32, 64, 128, 128), (0, 3, 1, 2)
    xs = [torch.randn(shape, device="cuda").to(torch.bfloat16) for _ in range(2)]
    ys = [torch.empty(tuple(shape[d] for d in dims), device="cuda", dtype=torch.bfloat16) for _ in range(2)]
    fl = [torch.empty_like(xs[0]) for _ in range(2)]
    nb = xs[0].numel() * 2
    acc = {name: [] for name, _ in TP7_PERM}
    oks = {}
    for name, kw in TP7_PERM:
        use(2, kw)
        ys[0].fill_(7)
        ops.permute(xs[0], dims, out=ys[0])
        oks[name] = bool(torch.equal(ys[0], xs[0].permute(dims)))
    for r in range(2):
        for name, kw in TP7_PERM:
            use(2, kw)
            pc = _time_queued(lambda i: fl[i].copy_(xs[i]), 2)
            ms = _time_queued(lambda i: ops.permute(xs[i], dims, out=ys[i]), 2)
            pc2 = _time_queued(lambda i: fl[i].copy_(xs[i]), 2)
            acc[name].append((min(pc, pc2) / ms, 2 * nb / ms / 1e9 / 4.24, ms * 1e3))
    for name, _ in TP7_PERM:
        v = acc[name]
        save(dict(case=str((shape, dims)) + " queued", cfg=name, ok=oks[name],
                  vs_copy_same=sum(x[0] for x in v) / len(v), vs_ceiling=sum(x[1] for x in v) / len(v),
                  us=sum(x[2] for x in v) / len(v)))
    bw.TRANSPOSE_CONFIG = dict(base_t)


# call 17: L2 evict_first hints on the TMA copy and the combine reduce (LSU copies gained 1.2-2.2 % from
# __ldcs/__stcs in call 16), interleaved rounds against torch
HINT_COPY = [("default", {}), ("hint 1 both", dict(hint=1)), ("hint 2 loads", dict(hint=2)),
             ("hint 3 stores", dict(hint=3)), ("hint 2, 3 stages", dict(hint=2, stages=3)),
             ("hint 2, 16 KiB x 6", dict(hint=2, box_bytes=16384))]
HINT_RED = [("default", {}), ("hint 1 both", dict(hint=1)), ("hint 2 loads", dict(hint=2)),
            ("hint 3 stores", dict(hint=3))]


def _hint():
    import dataclasses

    import torch

    from tmakit import ops
    from tmakit.bench.harness import time_op
    from tmakit.kernels import bandwidth as bw

    save, res = _saver("hint")
    base_c, base_r = bw.COPY_CONFIG, bw.REDUCE_CONFIG


    for nbytes in (1 << 30, 4 << 30):
        n = nbytes // 2
        x = torch.randn(n, device="cuda").to(torch.bfloat16)
        y = torch.empty_like(x)
        acc = {name: [] for name, _ in HINT_COPY}
        oks = {}
        for name, kw in HINT_COPY:
            bw.COPY_CONFIG = dataclasses.replace(base_c, **kw)
            y.fill_(0)
            ops.copy(x, y)
            oks[name] = bool(torch.equal(x, y))
        for r in range(3):
            for name, kw in HINT_COPY:
                bw.COPY_CONFIG = dataclasses.replace(base_c, **kw)
                pc = time_op(lambda i: y.copy_(x), 1, reps=10)
                ms = time_op(lambda i: ops.copy(x, y), 1, reps=15)
                pc2 = time_op(lambda i: y.copy_(x), 1, reps=10)
                acc[name].append(min(pc, pc2) / ms)
        for name, _ in HINT_COPY:
            v = acc[name]
            save(dict(case=f"copy {nbytes >> 20} MiB", cfg=name, ok=oks[name], ratio=sum(v) / len(v),
                      rounds=[round(a, 4) for a in v]))
        del x, y
    bw.COPY_CONFIG = base_c
    for dt, mib in ((torch.float32, 256), (torch.bfloat16, 256), (torch.float32, 1024), (torch.bfloat16, 1024)):
        n = (mib << 20) // (4 if dt == torch.float32 else 2)
        d = torch.randn(n, device="cuda").to(dt)
        s_ = torch.randn(n, device="cuda").to(dt)
        acc = {name: [] for name, _ in HINT_RED}
        oks = {}
        for name, kw in HINT_RED:
            bw.REDUCE_CONFIG = dataclasses.replace(base_r, **kw)
            u = torch.randn(4097 * 33, device="cuda").to(dt)
            v = torch.randn(4097 * 33, device="cuda").to(dt)
            ref = v.clone()
            ref.add_(u)
            ops.reduce_into(v, u, "add")
            oks[name] = bool(torch.equal(v, ref)) and ops.last_path == "tma:combine"
        for r in range(3):
            for name, kw in HINT_RED:
                bw.REDUCE_CONFIG = dataclasses.replace(base_r, **kw)
                pk = time_op(lambda i: d.add_(s_), 1, reps=10)
                ms = time_op(lambda i: ops.reduce_into(d, s_, "add"), 1, reps=15)
                pk2 = time_op(lambda i: d.add_(s_), 1, reps=10)
                acc[name].append(min(pk, pk2) / ms)
        for name, _ in HINT_RED:
            v = acc[name]
            save(dict(case=f"reduce add {str(dt)[6:]} {mib} MiB", cfg=name, ok=oks[name], ratio=sum(v) / len(v),
                      rounds=[round(a, 4) for a in v]))
        del d, s_
    bw.REDUCE_CONFIG = base_r


# call 18: static round-robin tiles (persistent) vs the hardware's dynamic CTA scheduling (grid_mult > 1). LSU
# copies: persistent grid-stride 0.93, one small block per piece 0.96-0.98 (call 16).
DYN_COPY = [("default", {}), ("order1 gm4", dict(order=1, grid_mult=4)), ("order1 gm16", dict(order=1, grid_mult=16)),
            ("order1 gm64", dict(order=1, grid_mult=64)), ("order0 gm16", dict(grid_mult=16)),
            ("order1 gm16 2cta s3", dict(order=1, grid_mult=16, ctas_per_sm=2, stages=3))]
DYN_RED = [("default", {}), ("gm4", dict(grid_mult=4)), ("gm16", dict(grid_mult=16))]
DYN_TP = [(2, [("C", C2), ("C gm4", dict(C2, grid_mult=4)), ("C gm16", dict(C2, grid_mult=16))]),
          (4, [("E", E4), ("E gm4", dict(E4, grid_mult=4)), ("E gm16", dict(E4, grid_mult=16))])]
DYN_PERM = [("A", A2), ("A gm2", dict(A2, grid_mult=2)), ("A gm4", dict(A2, grid_mult=4)),
            ("A gm8", dict(A2, grid_mult=8))]


# call 19: contiguous runs per CTA + more CTAs than fit (the copy gained at grid_mult 64 in call 18)
DYN2_COPY = [("default", {}), ("o1 gm32", dict(order=1, grid_mult=32)), ("o1 gm64", dict(order=1, grid_mult=64)),
             ("o1 gm128", dict(order=1, grid_mult=128)), ("o1 gm256", dict(order=1, grid_mult=256)),
             ("o1 gm64 s4", dict(order=1, grid_mult=64, stages=4)),
             ("o1 gm64 2cta s3", dict(order=1, grid_mult=64, ctas_per_sm=2, stages=3))]
DYN2_RED = [("default", {}), ("o1 gm16", dict(order=1, grid_mult=16)), ("o1 gm64", dict(order=1, grid_mult=64)),
            ("o1 gm128", dict(order=1, grid_mult=128))]
DYN2_TP = [(2, [("C", C2), ("C o1 gm2", dict(C2, order=1, grid_mult=2)), ("C o0 gm2", dict(C2, grid_mult=2))]),
           (4, [("E", E4), ("E o1 gm2", dict(E4, order=1, grid_mult=2)), ("E o0 gm2", dict(E4, grid_mult=2))])]
DYN2_PERM = [("A", A2), ("A gm2", dict(A2, grid_mult=2)), ("A o1 gm2", dict(A2, order=1, grid_mult=2)),
             ("A gm3", dict(A2, grid_mult=3)), ("A o1 gm3", dict(A2, order=1, grid_mult=3))]


def _dyn():
    import dataclasses

    import torch

    from tmakit import ops
    from tmakit.bench.harness import time_op
    from tmakit.kernels import bandwidth as bw

    save, res = _saver("dyn")
    base_c, base_r, base_t = bw.COPY_CONFIG, bw.REDUCE_CONFIG, dict(bw.TRANSPOSE_CONFIG)
    two = os.environ.get("DYN_SET") == "2"
    dcopy, dred, dtp, dperm = (DYN2_COPY, DYN2_RED, DYN2_TP, DYN2_PERM) if two else (DYN_COPY, DYN_RED, DYN_TP,
                                                                                    DYN_PERM)


    def ab(case, cfgs, setter, check, run, peer, rounds=3, queued=False):
        tf = _time_queued if queued else (lambda fn, n, reps=15: time_op(fn, n, reps=reps))
        acc = {name: [] for name, _ in cfgs}
        oks = {}
        for name, kw in cfgs:
            setter(kw)
            oks[name] = check()
        for r in range(rounds):
            for name, kw in cfgs:
                setter(kw)
                pc = tf(peer, 2)
                ms = tf(run, 2)
                pc2 = tf(peer, 2)
                acc[name].append(min(pc, pc2) / ms)
        for name, _ in cfgs:
            v = acc[name]
            save(dict(case=case, cfg=name, ok=oks[name], ratio=sum(v) / len(v), rounds=[round(a, 4) for a in v]))

    for nbytes in (1 << 30, 4 << 30):
        n = nbytes // 2
        x = torch.randn(n, device="cuda").to(torch.bfloat16)
        y = torch.empty_like(x)

        def chk():
            y.fill_(0)
            ops.copy(x, y)
            return bool(torch.equal(x, y))

        ab(f"copy {nbytes >> 20} MiB", dcopy, lambda kw: setattr(bw, "COPY_CONFIG", dataclasses.replace(base_c, **kw)),
           chk, lambda i: ops.copy(x, y), lambda i: y.copy_(x))
        del x, y
    bw.COPY_CONFIG = base_c
    for dt, mib in ((torch.float32, 256), (torch.bfloat16, 256)) + (((torch.float32, 1024),) if two else ()):
        n = (mib << 20) // (4 if dt == torch.float32 else 2)
        ds = [torch.randn(n, device="cuda").to(dt) for _ in range(2)]
        ss = [torch.randn(n, device="cuda").to(dt) for _ in range(2)]

        def chk():
            u = torch.randn(4097 * 33, device="cuda").to(dt)
            v = torch.randn(4097 * 33, device="cuda").to(dt)
            ref = v.clone()
            ref.add_(u)
            ops.reduce_into(v, u, "add")
            return bool(torch.equal(v, ref)) and ops.last_path == "tma:combine"

        ab(f"reduce add {str(dt)[6:]} {mib} MiB", dred,
           lambda kw: setattr(bw, "REDUCE_CONFIG", dataclasses.replace(base_r, **kw)), chk,
           lambda i: ops.reduce_into(ds[i], ss[i], "add"), lambda i: ds[i].add_(ss[i]))
        del ds, ss
    bw.REDUCE_CONFIG = base_r
    for e, cfgs in dtp:
        dt = torch.bfloat16 if e == 2 else torch.float32
        a = torch.randn(16384, 16384, device="cuda").to(dt)
        b = torch.empty_like(a)

        def chk():
            b.fill_(7)
            ops.transpose(a, 0, 1, out=b)
            return bool(torch.equal(b, a.t()))

        ab(f"transpose {str(dt)[6:]} 16384^2", cfgs,
           lambda kw: setattr(bw, "TRANSPOSE_CONFIG", {**base_t, e: bw.TransposeConfig(**kw)}), chk,
           lambda i: ops.transpose(a, 0, 1, out=b), lambda i: b.copy_(a))
        del a, b
    perms = [((32, 64, 128, 128), (0, 3, 1, 2))]
    if two:
        perms += [((128, 64, 128, 128), (0, 3, 1, 2)), ((8, 128, 256, 64), (0, 3, 1, 2)), ((64, 64, 64, 64), (3, 2, 1, 0))]
    for shape, dims in perms:
        xs = [torch.randn(shape, device="cuda").to(torch.bfloat16) for _ in range(2)]
        ys = [torch.empty(tuple(shape[d] for d in dims), device="cuda", dtype=torch.bfloat16) for _ in range(2)]
        fl = [torch.empty_like(xs[0]) for _ in range(2)]

        def chk():
            ys[0].fill_(7)
            ops.permute(xs[0], dims, out=ys[0])
            return bool(torch.equal(ys[0], xs[0].permute(dims)))

        ab(f"permute {shape} {dims} queued, vs same-size copy", dperm,
           lambda kw: setattr(bw, "TRANSPOSE_CONFIG", {**base_t, 2: bw.TransposeConfig(**kw)}), chk,
           lambda i: ops.permute(xs[i], dims, out=ys[i]), lambda i: fl[i].copy_(xs[i]), rounds=2, queued=True)
        del xs, ys, fl
    bw.TRANSPOSE_CONFIG = dict(base_t)


# call 20: runs of a few tiles per CTA with 2-3 CTAs resident per SM (copy 1 GiB 0.992 in call 19)
OLD_COPY = dict(box_mode=1, bulk_below=64 << 20)
TPC_COPY = [("persistent (old)", OLD_COPY), ("T2 c2 s3", dict(OLD_COPY, tiles_per_cta=2, ctas_per_sm=2, stages=3)),
            ("T2 c2 s2", dict(OLD_COPY, tiles_per_cta=2, ctas_per_sm=2, stages=2)),
            ("T2 c3", dict(OLD_COPY, tiles_per_cta=2, ctas_per_sm=3)),
            ("T3 c2 s3", dict(OLD_COPY, tiles_per_cta=3, ctas_per_sm=2, stages=3)),
            ("T4 c2 s3", dict(OLD_COPY, tiles_per_cta=4, ctas_per_sm=2, stages=3)),
            ("T4 c3", dict(OLD_COPY, tiles_per_cta=4, ctas_per_sm=3)),
            ("T4 16K c4", dict(OLD_COPY, tiles_per_cta=4, ctas_per_sm=4, box_bytes=16384))]
OLD_RED = dict(engine="bulk", bulk_mode=2, piece=4096, pieces=4, stages=6, consumers=2, lag=3, prefetch=1)
TPC_RED = [("persistent (old)", OLD_RED), ("T2 c2", dict(OLD_RED, tiles_per_cta=2, ctas_per_sm=2)),
           ("T2 c3", dict(OLD_RED, tiles_per_cta=2, ctas_per_sm=3)),
           ("T4 c2", dict(OLD_RED, tiles_per_cta=4, ctas_per_sm=2)),
           ("T4 c3", dict(OLD_RED, tiles_per_cta=4, ctas_per_sm=3)),
           ("T8 c2", dict(OLD_RED, tiles_per_cta=8, ctas_per_sm=2))]


def _tpc():
    import torch

    from tmakit import ops
    from tmakit.bench.harness import time_op
    from tmakit.kernels import bandwidth as bw

    save, res = _saver("tpc")
    base_c, base_r = bw.COPY_CONFIG, bw.REDUCE_CONFIG


    def ab(case, cfgs, setter, check, run, peer, rounds=3, queued=False, nsets=1):
        tf = _time_queued if queued else (lambda fn, n, reps=15: time_op(fn, n, reps=reps))
        acc = {name: [] for name, _ in cfgs}
        oks = {}
        for name, kw in cfgs:
            setter(kw)
            oks[name] = check()
        for r in range(rounds):
            for name, kw in cfgs:
                setter(kw)
                pc = tf(peer, nsets)
                ms = tf(run, nsets)
                pc2 = tf(peer, nsets)
                acc[name].append((min(pc, pc2) / ms, ms))
        for name, _ in cfgs:
            v = acc[name]
            save(dict(case=case, cfg=name, ok=oks[name], ratio=sum(a for a, _ in v) / len(v),
                      rounds=[round(a, 4) for a, _ in v], us=sum(b for _, b in v) / len(v) * 1e3))

    for nbytes in (256 << 20, 1 << 30, 4 << 30):
        n = nbytes // 2
        k = 2 if nbytes < (1 << 30) else 1
        xs = [torch.randn(n, device="cuda").to(torch.bfloat16) for _ in range(k)]
        ys = [torch.empty_like(xs[0]) for _ in range(k)]

        def chk():
            bad = []
            for nb in (1 << 20, (64 << 20) + 48, (96 << 20) + 4096 + 16):
                a = torch.randint(0, 255, (nb,), dtype=torch.uint8, device="cuda")
                b = torch.full((nb,), 7, dtype=torch.uint8, device="cuda")
                ops.copy(a, b)
                bad += [] if torch.equal(a, b) else [nb]
            ys[0].fill_(0)
            ops.copy(xs[0], ys[0])
            return bool(torch.equal(xs[0], ys[0])) and not bad

        ab(f"copy {nbytes >> 20} MiB", TPC_COPY, lambda kw: setattr(bw, "COPY_CONFIG", bw.CopyConfig(**kw)), chk,
           lambda i: ops.copy(xs[i], ys[i]), lambda i: ys[i].copy_(xs[i]), rounds=3 if k == 1 else 2, nsets=k)
        del xs, ys
    for shape, dims in (((32, 64, 128, 128), (0, 2, 1, 3)), ((8, 128, 256, 64), (0, 2, 1, 3))):
        xs = [torch.randn(shape, device="cuda").to(torch.bfloat16) for _ in range(2)]
        ys = [torch.empty(tuple(shape[d] for d in dims), device="cuda", dtype=torch.bfloat16) for _ in range(2)]
        fl = [torch.empty_like(xs[0]) for _ in range(2)]

        def chk():
            ys[0].fill_(7)
            ops.permute(xs[0], dims, out=ys[0])
            return bool(torch.equal(ys[0], xs[0].permute(dims)))

        ab(f"permute {shape} {dims} queued, vs same-size copy", TPC_COPY[:5],
           lambda kw: setattr(bw, "COPY_CONFIG", bw.CopyConfig(**kw)), chk,
           lambda i: ops.permute(xs[i], dims, out=ys[i]), lambda i: fl[i].copy_(xs[i]), rounds=2, queued=True,
           nsets=2)
        del xs, ys, fl
    bw.COPY_CONFIG = base_c
    for dt, mib in ((torch.float32, 256), (torch.bfloat16, 256), (torch.float32, 1024)):
        n = (mib << 20) // (4 if dt == torch.float32 else 2)
        k = 2 if mib < 1024 else 1
        ds = [torch.randn(n, device="cuda").to(dt) for _ in range(k)]
        ss = [torch.randn(n, device="cuda").to(dt) for _ in range(k)]

        def chk(dt=dt):
            return _reduce_matches_add(dt, (4097 * 33, (3 << 20) + 5, 64 << 20))

        ab(f"reduce add {str(dt)[6:]} {mib} MiB", TPC_RED,
           lambda kw: setattr(bw, "REDUCE_CONFIG", bw.CopyConfig(**kw)), chk,
           lambda i: ops.reduce_into(ds[i], ss[i], "add"), lambda i: ds[i].add_(ss[i]), nsets=k)
        del ds, ss
    bw.REDUCE_CONFIG = base_r


# call 21: combine-reduce runs (T2 with 3 resident CTAs won call 20), smaller pieces for more resident CTAs,
# store-reduce under the new default, and the flat-only copy overrides
def _fl(**kw):
    return tuple(kw.items())


RED2 = [("persistent (old)", OLD_RED), ("T2 c3 (default)", dict(OLD_RED, flat=_fl(tiles_per_cta=2, ctas_per_sm=3))),
        ("T1 c3", dict(OLD_RED, flat=_fl(tiles_per_cta=1, ctas_per_sm=3))),
        ("T3 c3", dict(OLD_RED, flat=_fl(tiles_per_cta=3, ctas_per_sm=3))),
        ("T2 c6 8K", dict(OLD_RED, pieces=2, flat=_fl(tiles_per_cta=2, ctas_per_sm=6))),
        ("T4 c6 8K", dict(OLD_RED, pieces=2, flat=_fl(tiles_per_cta=4, ctas_per_sm=6)))]


def _red2():
    import torch

    from tmakit import ops
    from tmakit.bench.harness import time_op
    from tmakit.kernels import bandwidth as bw

    save, res = _saver("red2")
    base_c, base_r = bw.COPY_CONFIG, bw.REDUCE_CONFIG


    def ab(case, cfgs, setter, check, run, peer, rounds=3, nsets=1):
        acc = {name: [] for name, _ in cfgs}
        oks = {}
        for name, kw in cfgs:
            setter(kw)
            oks[name] = check()
        for r in range(rounds):
            for name, kw in cfgs:
                setter(kw)
                pc = time_op(peer, nsets, reps=15)
                ms = time_op(run, nsets, reps=15)
                pc2 = time_op(peer, nsets, reps=15)
                acc[name].append((min(pc, pc2) / ms, ms))
        for name, _ in cfgs:
            v = acc[name]
            save(dict(case=case, cfg=name, ok=oks[name], ratio=sum(a for a, _ in v) / len(v),
                      rounds=[round(a, 4) for a, _ in v], us=sum(b for _, b in v) / len(v) * 1e3))

    setr = lambda kw: setattr(bw, "REDUCE_CONFIG", bw.CopyConfig(**kw))  # noqa: E731
    for dt, mib in ((torch.float32, 16), (torch.float32, 64), (torch.float32, 256), (torch.bfloat16, 256),
                    (torch.float32, 1024), (torch.bfloat16, 4096)):
        n = (mib << 20) // (4 if dt == torch.float32 else 2)
        k = max(1, -(-(240 << 20) // (3 * (mib << 20))))
        ds = [torch.randn(n, device="cuda").to(dt) for _ in range(k)]
        ss = [torch.randn(n, device="cuda").to(dt) for _ in range(k)]

        def chk(dt=dt):
            return _reduce_matches_add(dt, (4097 * 33, (3 << 20) + 5, 64 << 20))

        cfgs = RED2 if mib in (256, 1024) else RED2[:2]
        ab(f"reduce add {str(dt)[6:]} {mib} MiB", cfgs, setr, chk,
           lambda i: ops.reduce_into(ds[i], ss[i], "add"), lambda i: ds[i].add_(ss[i]),
           rounds=3 if mib >= 256 else 2, nsets=k)
        if mib == 256 and dt == torch.float32:
            ab("store-reduce add float32 256 MiB", RED2[:2], setr, lambda: True,
               lambda i: ops.reduce_into(ds[i], ss[i], "add", method="store-reduce"), lambda i: ds[i].add_(ss[i]),
               rounds=2, nsets=k)
        del ds, ss
    bw.REDUCE_CONFIG = base_r
    oldc = dict(OLD_COPY)
    setc = lambda kw: setattr(bw, "COPY_CONFIG", bw.CopyConfig(**kw))  # noqa: E731
    newc = [("persistent (old)", oldc), ("default (flat T2 c2 s3)", dict(base_c.__dict__))]
    for mib in (64, 1024):
        n = (mib << 20) // 2
        k = 4 if mib == 64 else 1
        xs = [torch.randn(n, device="cuda").to(torch.bfloat16) for _ in range(k)]
        ys = [torch.empty_like(xs[0]) for _ in range(k)]
        ab(f"copy {mib} MiB", newc, setc, lambda: True, lambda i: ops.copy(xs[i], ys[i]), lambda i: ys[i].copy_(xs[i]),
           rounds=2, nsets=k)
        del xs, ys
    for shape, dims in (((32, 64, 128, 128), (0, 2, 1, 3)), ((8, 128, 256, 64), (0, 2, 1, 3))):
        xs = [torch.randn(shape, device="cuda").to(torch.bfloat16) for _ in range(2)]
        ys = [torch.empty(tuple(shape[d] for d in dims), device="cuda", dtype=torch.bfloat16) for _ in range(2)]
        fl = [torch.empty_like(xs[0]) for _ in range(2)]
        ab(f"permute {shape} {dims} per call, vs same-size copy", newc, setc, lambda: True,
           lambda i: ops.permute(xs[i], dims, out=ys[i]), lambda i: fl[i].copy_(xs[i]), rounds=2, nsets=2)
        del xs, ys, fl
    bw.COPY_CONFIG = base_c


# call 23: dynamic tile assignment inside the persistent transpose grid (atomic counter, TransposeConfig.dyn)
DYN3_2D = [(2, 16384, [("C", C2), ("C dyn", dict(C2, dyn=1)), ("A", A2), ("A dyn", dict(A2, dyn=1))]),
           (2, 32768, [("C", C2), ("C dyn", dict(C2, dyn=1))]),
           (2, 8192, [("A", A2), ("A dyn", dict(A2, dyn=1))]),
           (2, 4096, [("A", A2), ("A dyn", dict(A2, dyn=1))]),
           (4, 16384, [("E", E4), ("E dyn", dict(E4, dyn=1))]),
           (4, 8192, [("E", E4), ("E dyn", dict(E4, dyn=1))]),
           (4, 32768, [("E", E4), ("E dyn", dict(E4, dyn=1))])]
DYN3_PERM = [((32, 64, 128, 128), (0, 3, 1, 2)), ((128, 64, 128, 128), (0, 3, 1, 2)),
             ((8, 128, 256, 64), (0, 3, 1, 2)), ((64, 64, 64, 64), (3, 2, 1, 0))]


def _dyn3():
    import math

    import torch

    from tmakit import ops
    from tmakit.bench.harness import time_op
    from tmakit.kernels import bandwidth as bw

    save, res = _saver("dyn3")
    base_t = dict(bw.TRANSPOSE_CONFIG)


    def use(e, kw):
        bw.TRANSPOSE_CONFIG = {**base_t, e: bw.TransposeConfig(**kw)}

    def checks(dt):
        bad = []
        for shp in ((1000, 777), (33, 4096), (4096, 96), (7, 4000), (3000, 8), (129, 200), (4096, 4096)):
            u = torch.randn(shp, device="cuda").to(dt)
            for rep in range(3):  # the counter must be zero again for every launch
                v = torch.full((shp[1], shp[0]), 77.0, device="cuda").to(dt)
                ops.transpose(u, 0, 1, out=v)
                if not torch.equal(v, u.t()):
                    bad.append((shp, rep))
        side = torch.cuda.Stream()
        with torch.cuda.stream(side):  # another stream: its own counter
            u = torch.randn(2048, 3000, device="cuda").to(dt)
            v = ops.transpose(u, 0, 1)
            ok = torch.equal(v, u.t())
        torch.cuda.synchronize()
        if not ok:
            bad.append("side stream")
        for shp, dd in (((5, 33, 17, 24), (1, 0, 2, 3)), ((2, 3, 5, 7, 64), (4, 3, 2, 1, 0)),
                        ((4, 6, 300, 128), (0, 3, 1, 2)), ((3, 70, 130), (0, 2, 1))):
            u = torch.randn(shp, device="cuda").to(dt)
            if not torch.equal(ops.permute(u, dd), u.permute(dd)):
                bad.append((shp, dd))
        return bad

    for e, n, cfgs in DYN3_2D:
        dt = torch.bfloat16 if e == 2 else torch.float32
        nb = n * n * e
        k = max(1, math.ceil(4 * 60 * MiB / nb))
        xs = [torch.randn(n, n, device="cuda").to(dt) for _ in range(k)]
        ys = [torch.empty_like(xs[0]) for _ in range(k)]
        acc = {name: [] for name, _ in cfgs}
        oks = {}
        for name, kw in cfgs:
            use(e, kw)
            bad = checks(dt) if n == 16384 else []
            ys[0].fill_(7)
            ops.transpose(xs[0], 0, 1, out=ys[0])
            oks[name] = (bool(torch.equal(ys[0], xs[0].t())) and not bad, [str(b) for b in bad[:3]])
        for r in range(3 if n == 16384 else 2):
            for name, kw in cfgs:
                use(e, kw)
                pc = time_op(lambda i: ys[i].copy_(xs[i]), k, reps=10)
                ms = time_op(lambda i: ops.transpose(xs[i], 0, 1, out=ys[i]), k, reps=15)
                pc2 = time_op(lambda i: ys[i].copy_(xs[i]), k, reps=10)
                acc[name].append(min(pc, pc2) / ms)
        for name, kw in cfgs:  # again after many launches
            use(e, kw)
            ys[0].fill_(7)
            ops.transpose(xs[0], 0, 1, out=ys[0])
            oks[name] = (oks[name][0] and bool(torch.equal(ys[0], xs[0].t())), oks[name][1])
        for name, _ in cfgs:
            v = acc[name]
            save(dict(case=f"{dt} {n}^2", cfg=name, ok=oks[name][0], bad=oks[name][1], vs_copy=sum(v) / len(v),
                      rounds=[round(x, 4) for x in v]))
        del xs, ys
    for shape, dims in DYN3_PERM:
        xs = [torch.randn(shape, device="cuda").to(torch.bfloat16) for _ in range(2)]
        ys = [torch.empty(tuple(shape[d] for d in dims), device="cuda", dtype=torch.bfloat16) for _ in range(2)]
        fl = [torch.empty_like(xs[0]) for _ in range(2)]
        nb = xs[0].numel() * 2
        cfgs = [("A", A2), ("A dyn", dict(A2, dyn=1))]
        acc = {name: [] for name, _ in cfgs}
        oks = {}
        for r in range(2):
            for name, kw in cfgs:
                use(2, kw)
                pc = _time_queued(lambda i: fl[i].copy_(xs[i]), 2)
                ms = _time_queued(lambda i: ops.permute(xs[i], dims, out=ys[i]), 2)
                pc2 = _time_queued(lambda i: fl[i].copy_(xs[i]), 2)
                acc[name].append((min(pc, pc2) / ms, 2 * nb / ms / 1e9 / 4.24))
                ys[0].fill_(7)
                ops.permute(xs[0], dims, out=ys[0])
                oks[name] = oks.get(name, True) and bool(torch.equal(ys[0], xs[0].permute(dims)))
        for name, _ in cfgs:
            v = acc[name]
            save(dict(case=f"permute {shape} {dims} queued", cfg=name, ok=oks[name],
                      vs_copy_same=sum(a for a, _ in v) / len(v), vs_ceiling=sum(b for _, b in v) / len(v),
                      rounds=[round(a, 4) for a, _ in v]))
        del xs, ys, fl
    bw.TRANSPOSE_CONFIG = dict(base_t)


# call 25: more resident combine CTAs (smaller tiles) -- 1 -> 3 -> 6 resident helped monotonically (calls 20-21)
RED3 = [("default (T2 c6 8K)", dict(OLD_RED, flat_min=128 << 20, flat=_fl(tiles_per_cta=2, ctas_per_sm=6, pieces=2))),
        ("T2 c12 4K", dict(OLD_RED, flat=_fl(tiles_per_cta=2, ctas_per_sm=12, pieces=1))),
        ("T4 c12 4K", dict(OLD_RED, flat=_fl(tiles_per_cta=4, ctas_per_sm=12, pieces=1))),
        ("T2 c8 4K", dict(OLD_RED, flat=_fl(tiles_per_cta=2, ctas_per_sm=8, pieces=1))),
        ("T2 c6 8K 1w", dict(OLD_RED, consumers=1, flat=_fl(tiles_per_cta=2, ctas_per_sm=6, pieces=2))),
        ("T2 c9 8K 1w s1", dict(OLD_RED, consumers=1, flat=_fl(tiles_per_cta=2, ctas_per_sm=9, pieces=2)))]


def _red3():
    _red_ab(RED3, ((torch_dt("float32"), 256), (torch_dt("bfloat16"), 256), (torch_dt("float32"), 1024)), "red3")


# session 4, GEMM engineer: packed bf16x2 adds and more resident combine CTAs at 256 MiB (the one reduce goal left)
_RED_DEF = dict(OLD_RED, flat=_fl(tiles_per_cta=2, ctas_per_sm=8, pieces=1))
RED4 = [("default", _RED_DEF), ("bf16x2", dict(_RED_DEF, bf16x2=1)),
        ("c12", dict(_RED_DEF, flat=_fl(tiles_per_cta=2, ctas_per_sm=12, pieces=1))),
        ("c12 bf16x2", dict(_RED_DEF, bf16x2=1, flat=_fl(tiles_per_cta=2, ctas_per_sm=12, pieces=1))),
        ("T1 c8", dict(_RED_DEF, flat=_fl(tiles_per_cta=1, ctas_per_sm=8, pieces=1)))]


# dynamic tile counter in a persistent combine grid (CopyConfig.dyn), 4 KiB tiles unless noted
_DYN = dict(OLD_RED, pieces=1, dyn=1)
RED5 = [("default", _RED_DEF), ("dyn c4 s6", dict(_DYN, ctas_per_sm=4, stages=6)),
        ("dyn c6 s4", dict(_DYN, ctas_per_sm=6, stages=4)), ("dyn c8 s3", dict(_DYN, ctas_per_sm=8, stages=3)),
        ("dyn c2 8K", dict(_DYN, ctas_per_sm=2, pieces=2, stages=8))]
# call 29: batches of tiles per atomic (one atomic per 4 KiB tile was latency-bound: 0.89)
RED6 = [("default", _RED_DEF), ("dyn8 c4 s6", dict(_DYN, dyn=8, ctas_per_sm=4, stages=6)),
        ("dyn16 c4 s6", dict(_DYN, dyn=16, ctas_per_sm=4, stages=6)),
        ("dyn8 c8 s3", dict(_DYN, dyn=8, ctas_per_sm=8, stages=3)),
        ("dyn32 c6 s4", dict(_DYN, dyn=32, ctas_per_sm=6, stages=4))]


def _red6():
    _red_ab(RED6, ((torch_dt("float32"), 256), (torch_dt("bfloat16"), 256), (torch_dt("float32"), 1024)), "red6")


def _red5():
    _red_ab(RED5, ((torch_dt("float32"), 256), (torch_dt("bfloat16"), 256), (torch_dt("float32"), 1024)), "red5")


def _red4():
    _red_ab(RED4, ((torch_dt("float32"), 256), (torch_dt("bfloat16"), 256), (torch_dt("bfloat16"), 1024)), "red4")


# issue #7's last goal (reduce add 256 MiB >= 1.0x add_): fixed cost vs rate, and shapes that shorten a CTA's life.
# Every variant runs the run-based combine at every size (flat_min 0), so one kernel is fitted over 64 .. 512 MiB.
RED7 = [("default", _RED_DEF), ("exit_read", dict(_RED_DEF, exit_read=1)),
        ("regst c2", dict(_RED_DEF, bulk_mode=1)), ("regst c4", dict(_RED_DEF, bulk_mode=1, consumers=4)),
        ("1w", dict(_RED_DEF, consumers=1)), ("1w exit_read", dict(_RED_DEF, consumers=1, exit_read=1)),
        ("2K T2 c16", dict(_RED_DEF, piece=2048, flat=_fl(tiles_per_cta=2, ctas_per_sm=16, pieces=1))),
        ("2K T4 c12", dict(_RED_DEF, piece=2048, flat=_fl(tiles_per_cta=4, ctas_per_sm=12, pieces=1))),
        ("T3 s2", dict(_RED_DEF, flat=_fl(tiles_per_cta=3, ctas_per_sm=12, pieces=1)))]


# call 31: residency is capped by registers too (52-56 per thread: twelve 3-warp CTAs per SM, eighteen 2-warp ones),
# so "2K T2 c16" ran 12 resident CTAs (96 KiB of loads in flight per SM) and won; pieces=2 with row=piece splits a
# tile into contiguous pieces that both consumer warps combine (the default's second warp is idle with pieces=1)
def _rv(piece, tiles, cps, w=2, pieces=1, **kw):
    fl = dict(tiles_per_cta=tiles, ctas_per_sm=cps, pieces=pieces)
    fl.update({k: kw.pop(k) for k in ("stages",) if k in kw})
    row = kw.pop("row", piece if pieces > 1 else 128 * 1024)
    return dict(_RED_DEF, piece=piece, consumers=w, row=row, flat=_fl(**fl), **kw)


RED8 = [("default", _RED_DEF), ("2K T2 c16", _rv(2048, 2, 16)),
        ("2x1K T2 2w c16", _rv(1024, 2, 16, pieces=2)), ("2x2K T2 2w c8", _rv(2048, 2, 8, pieces=2)),
        ("2K T2 1w c16", _rv(2048, 2, 16, w=1)), ("2K T2 1w c24", _rv(2048, 2, 24, w=1)),
        ("2K T2 1w c24 minb20", _rv(2048, 2, 24, w=1, min_ctas=20)), ("1K T2 1w c32", _rv(1024, 2, 32, w=1)),
        ("1K T4 1w c16 s4", _rv(1024, 4, 16, w=1, stages=4)), ("2K T1 1w c24", _rv(2048, 1, 24, w=1)),
        ("2K T2 regst c16", _rv(2048, 2, 16, bulk_mode=1)), ("4K T1 1w c12", _rv(4096, 1, 12, w=1))]


def _red8():
    _red_fit(RED8, ("float32", "bfloat16"), (64, 128, 192, 256, 384, 512), "red8")


# call 32: one tile per CTA (call 31: 2K T1 with one consumer warp, 18 resident, 1.004 f32 / 0.994 bf16)
RED9 = [("default", _RED_DEF), ("2K T1 1w", _rv(2048, 1, 24, w=1)),
        ("2K T1 1w bf16x2", _rv(2048, 1, 24, w=1, bf16x2=1)), ("2K T1 1w minb20", _rv(2048, 1, 24, w=1, min_ctas=20)),
        ("2K T1 1w exit_read", _rv(2048, 1, 24, w=1, exit_read=1)),
        ("2K T1 regst 1w", _rv(2048, 1, 24, w=1, bulk_mode=1)),
        ("4K T1 1w s1", _rv(4096, 1, 12, w=1, stages=1)), ("4K T1 regst 1w s1", _rv(4096, 1, 12, w=1, stages=1,
                                                                                       bulk_mode=1)),
        ("3K T1 1w", _rv(3072, 1, 16, w=1, row=3072)), ("3K T1 1w s1", _rv(3072, 1, 16, w=1, row=3072, stages=1)),
        ("4K T1 1w c12", _rv(4096, 1, 12, w=1))]


def _red9():
    _red_fit(RED9, ("float32", "bfloat16"), (64, 128, 192, 256, 384, 512), "red9")


# call 33: bulk_mode 3 (one-warp CTAs: no block barrier, no idle warp) with `resident` pinning the CTAs per SM
def _m3(piece, tiles, res, **kw):
    kw.setdefault("stages", tiles)
    return _rv(piece, tiles, 16, w=1, bulk_mode=3, resident=res, row=kw.pop("row", 128 * 1024), **kw)


RED10 = [("default", _RED_DEF), ("2K T1 1w", _rv(2048, 1, 24, w=1)),
         ("m3 2K T1 r16", _m3(2048, 1, 16)), ("m3 2K T1 r18", _m3(2048, 1, 18)), ("m3 2K T1 r20", _m3(2048, 1, 20)),
         ("m3 2K T1 r24", _m3(2048, 1, 24)), ("m3 2K T1 r32", _m3(2048, 1, 0)),
         ("m3 1.5K T1 r24", _m3(1536, 1, 24, row=1536)), ("m3 3K T1 r16", _m3(3072, 1, 16, row=3072)),
         ("m3 4K T1 r12", _m3(4096, 1, 12)), ("m3 2K T2 s2 r16", _m3(2048, 2, 16, stages=2))]


def _red10():
    _red_fit(RED10, ("float32", "bfloat16"), (64, 128, 192, 256, 384, 512), "red10")


# call 34: piece size around 2 KiB for one-tile CTAs (mode 2 one consumer warp: 18 resident; mode 3 pinned)
def _t1(piece, **kw):
    return _rv(piece, 1, 24, w=1, row=piece, stages=1, **kw)


RED11 = [("default", _RED_DEF), ("2K T1 1w", _rv(2048, 1, 24, w=1)), ("1.5K T1 1w", _t1(1536)),
         ("1.75K T1 1w", _t1(1792)), ("2.5K T1 1w", _t1(2560)), ("m3 1.5K r28", _m3(1536, 1, 28, row=1536)),
         ("m3 1.5K r32", _m3(1536, 1, 32, row=1536)), ("m3 1.25K r32", _m3(1280, 1, 32, row=1280)),
         ("m3 1.75K r24", _m3(1792, 1, 24, row=1792)), ("m3 1.5K r20", _m3(1536, 1, 20, row=1536))]


def _red11():
    _red_fit(RED11, ("float32", "bfloat16"), (64, 128, 192, 256, 384, 512), "red11")


# call 35: the per-kernel fixed cost seen directly (queued launches of small reduces: device time per call) and the
# finest pieces that still keep ~64 KiB in flight per SM (one-warp CTAs, 32 per SM)
RED12 = [("default", _RED_DEF), ("2K T1 1w", _rv(2048, 1, 24, w=1)), ("m3 1K r32", _m3(1024, 1, 32, row=1024)),
         ("m3 1.25K r28", _m3(1280, 1, 28, row=1280)),
         ("2K T1 1w exit_read bf16x2", _rv(2048, 1, 24, w=1, exit_read=1, bf16x2=1))]


def _check_small(save, variants, dname, sizes):
    """Bit-exactness against add_ of every variant (forced at every size: flat_min 0) on small sizes with tails."""
    from tmakit.kernels import bandwidth as bw

    dt = torch_dt(dname)
    for name, kw in variants:
        bw.REDUCE_CONFIG = bw.CopyConfig(**dict(kw, flat_min=0))
        save(dict(case=f"check small {dname}", cfg=name, ok=_reduce_matches_add(dt, sizes, spread=40)))


def _queued_rows(save, variants, dname, kibs, force=True):
    """Queued device time per call (us, 3 rounds) of add_ and of each variant's reduce_into at small sizes."""
    import torch

    from tmakit import ops
    from tmakit.kernels import bandwidth as bw

    dt = torch_dt(dname)
    el = 4 if dt == torch.float32 else 2
    for kib in kibs:
        n = (kib << 10) // el
        ds = [torch.randn(n, device="cuda").to(dt) for _ in range(4)]
        ss = [torch.randn(n, device="cuda").to(dt) for _ in range(4)]
        row = dict(case=f"queued reduce add {dname} {kib} KiB")
        for _ in range(3):
            row.setdefault("add_", []).append(1e3 * _time_queued(lambda i: ds[i].add_(ss[i]), 4, reps=40))  # noqa: B023
            for name, kw in variants:
                bw.REDUCE_CONFIG = bw.CopyConfig(**(dict(kw, flat_min=0) if force else kw))
                row.setdefault(name, []).append(
                    1e3 * _time_queued(lambda i: ops.reduce_into(ds[i], ss[i], "add"), 4, reps=40))  # noqa: B023
        save({k: ([round(x, 2) for x in v] if isinstance(v, list) else v) for k, v in row.items()})


def _red12():
    from tmakit.kernels import bandwidth as bw

    save, _ = _saver("red12q", "red12q")
    base_r = bw.REDUCE_CONFIG
    for dname in ("float32", "bfloat16"):
        _queued_rows(save, RED12[:2], dname, (64, 1024, 4096, 16384), force=False)
    bw.REDUCE_CONFIG = base_r
    _red_fit(RED12, ("float32", "bfloat16"), (64, 128, 192, 256, 384, 512), "red12")


# call 36: the new combine shape (one 2 KiB tile per 64-thread CTA) against the session-4 default, from 1 MiB to
# 4 GiB, both dtypes, through REDUCE_CONFIG as ops uses it (below 128 MiB the old default is persistent)
OLD_REDUCE = dict(engine="bulk", bulk_mode=2, piece=4096, pieces=4, stages=6, consumers=2, lag=3, prefetch=1,
                  flat_min=128 << 20, flat=_fl(tiles_per_cta=2, ctas_per_sm=8, pieces=1))
NEW_FLAT = _fl(tiles_per_cta=1, ctas_per_sm=24, pieces=1, piece=2048, consumers=1)
RED13 = [("old", OLD_REDUCE), ("new", dict(OLD_REDUCE, flat=NEW_FLAT, flat_min=0))]


def _red13():
    import torch

    from tmakit import ops
    from tmakit.bench.harness import _nsets, time_op
    from tmakit.kernels import bandwidth as bw

    save, _ = _saver("red13")
    base_r = bw.REDUCE_CONFIG
    for dname in ("float32", "bfloat16"):
        dt = torch_dt(dname)
        el = 4 if dt == torch.float32 else 2
        _check_reduce_variants(dname, RED13, save)
        for mib in (1, 4, 16, 32, 64, 96, 128, 256, 1024, 4096):
            n = (mib << 20) // el
            k = _nsets(2 * n * el) if mib < 1024 else 1
            ds = [torch.randn(n, device="cuda").to(dt) for _ in range(k)]
            ss = [torch.randn(n, device="cuda").to(dt) for _ in range(k)]
            acc = {name: [] for name, _ in RED13}
            us = {name: [] for name in ["add_"] + [v for v, _ in RED13]}
            for _r in range(3 if mib < 4096 else 2):
                pk = time_op(lambda i: ds[i].add_(ss[i]), k, reps=20)
                got = {}
                for name, kw in RED13:
                    bw.REDUCE_CONFIG = bw.CopyConfig(**kw)
                    got[name] = time_op(lambda i: ops.reduce_into(ds[i], ss[i], "add"), k, reps=20)
                pk2 = time_op(lambda i: ds[i].add_(ss[i]), k, reps=20)
                us["add_"].append(1e3 * min(pk, pk2))
                for name, ms in got.items():
                    acc[name].append(min(pk, pk2) / ms)
                    us[name].append(1e3 * ms)
            row = dict(case=f"reduce add {dname} {mib} MiB", sets=k, path=ops.last_path)
            for name in acc:
                row[name] = round(sum(acc[name]) / len(acc[name]), 4)
                row[name + "_rounds"] = [round(x, 4) for x in acc[name]]
            row["us"] = {name: round(sorted(v)[len(v) // 2], 2) for name, v in us.items()}
            save(row)
            del ds, ss
    bw.REDUCE_CONFIG = base_r


# session 6 (call 38): the lean one-tile CTA (CopyConfig.lean: tile = blockIdx.x, thread 0 issues both loads before
# any block barrier, no empty barriers, no division, unrolled combine; 32 registers instead of 56, so `resident`
# pins the CTAs per SM for a fair comparison) against the current default; 4 KiB lean tiles for bf16
NEW_DEF = dict(engine="bulk", bulk_mode=2, piece=4096, pieces=4, stages=6, consumers=2, lag=3, prefetch=1,
               flat_min=32 << 20,
               flat=_fl(tiles_per_cta=1, pieces=1, piece=2048, consumers=1, stages=1, ctas_per_sm=24))


def _ln(lean, piece=2048, res=19, mode=2, **kw):
    fl = dict(NEW_DEF["flat"], piece=piece, lean=lean, resident=res, bulk_mode=mode, **kw)
    if (128 << 10) % piece:
        fl["row"] = piece
    return dict(NEW_DEF, flat=tuple(fl.items()))


RED14 = [("default", NEW_DEF), ("lean1 r19", _ln(1)), ("lean1 r0", _ln(1, res=0)), ("lean1 r22", _ln(1, res=22)),
         ("lean2 r19", _ln(2)), ("lean2 m3 r19", _ln(2, mode=3)), ("lean1 4K r10", _ln(1, 4096, 10)),
         ("lean1 4K r12", _ln(1, 4096, 12)), ("lean1 r19 exit_read", _ln(1, exit_read=1))]


# call 39: call 38 gave the lean CTA add_'s intercept (queued 64 KiB 5.4 -> 4.2-4.4 us, add_ 4.0) but a lower rate at
# the same residency (more bytes really in flight: the prologue no longer idles the slot); fewer in flight, larger
# tiles (4K r10 -> 9 resident was best: f32 1.0049, bf16 0.9961), and exit_read
RED15 = [("default", NEW_DEF), ("lean1 4K r10", _ln(1, 4096, 10)), ("lean1 4K r9", _ln(1, 4096, 9)),
         ("lean1 4K r8", _ln(1, 4096, 8)), ("lean1 4K r10 exit_read", _ln(1, 4096, 10, exit_read=1)),
         ("lean1 4K r9 exit_read", _ln(1, 4096, 9, exit_read=1)), ("lean2 4K r10", _ln(2, 4096, 10)),
         ("lean1 8K r5", _ln(1, 8192, 5)), ("lean1 8K r6", _ln(1, 8192, 6)), ("lean1 2K r17", _ln(1, 2048, 17)),
         ("lean1 6K r7", _ln(1, 6144, 7))]


def _red15():
    from tmakit.kernels import bandwidth as bw

    save, _ = _saver("red15q", "red15q")
    base_r = bw.REDUCE_CONFIG
    for dname in ("float32", "bfloat16"):
        _check_small(save, RED15, dname, (5, 17, 4097 * 33, (3 << 20) + 5, 1000003))
    bw.REDUCE_CONFIG = base_r
    _red_fit(RED15, ("float32", "bfloat16"), (64, 128, 192, 256, 384, 512, 1024), "red15", rounds=7)


# call 40: call 39's best (lean1 4K r9: 8 resident, 64 KiB in flight; f32 1.0087, bf16 0.9975 at 256 MiB) has a larger
# intercept than 2K tiles (4.8 vs 3.9 us): smaller "end tiles" for the last waves (a shorter drain)
RED16 = [("default", NEW_DEF), ("lean1 4K r9", _ln(1, 4096, 9)),
         ("4K r9 end 2K 4M", _ln(1, 4096, 9, end_piece=2048, end_bytes=4 << 20)),
         ("4K r9 end 2K 8M", _ln(1, 4096, 9, end_piece=2048, end_bytes=8 << 20)),
         ("4K r9 end 2K 16M", _ln(1, 4096, 9, end_piece=2048, end_bytes=16 << 20)),
         ("4K r9 end 1K 4M", _ln(1, 4096, 9, end_piece=1024, end_bytes=4 << 20)),
         ("4K r9 er end 2K 8M", _ln(1, 4096, 9, exit_read=1, end_piece=2048, end_bytes=8 << 20)),
         ("lean1 3K r11", _ln(1, 3072, 11)), ("lean1 2K r17", _ln(1, 2048, 17))]


def _red16():
    from tmakit.kernels import bandwidth as bw

    save, _ = _saver("red16q", "red16q")
    base_r = bw.REDUCE_CONFIG
    for dname in ("float32", "bfloat16"):
        _check_small(save, RED16, dname, (5, 17, 4097 * 33, (3 << 20) + 5, 1000003, (5 << 20) + 3, (9 << 20) + 7))
    bw.REDUCE_CONFIG = base_r
    _red_fit(RED16, ("float32", "bfloat16"), (64, 128, 192, 256, 384, 512, 1024), "red16", rounds=7)


# call 41: the candidates through REDUCE_CONFIG as ops uses it (flat_min 32 MiB; below it the persistent shape),
# 16 MiB .. 4 GiB, both dtypes, add_ timed around them, buffers rotated past the L2 below 1 GiB
def _red17_variants():
    import dataclasses

    from tmakit.kernels import bandwidth as bw

    new = dataclasses.asdict(bw.REDUCE_CONFIG)
    return [("s5", NEW_DEF), ("new", new),
            ("4K r9 end 2K 4M", dict(new, flat=new["flat"] + (("end_piece", 2048), ("end_bytes", 4 << 20)))),
            ("3K r11", _ln(1, 3072, 11)), ("3K r11 end 2K 4M", _ln(1, 3072, 11, end_piece=2048, end_bytes=4 << 20))]


def _red18_variants():
    import dataclasses

    from tmakit.kernels import bandwidth as bw

    new = dataclasses.asdict(bw.REDUCE_CONFIG)
    return [("s5", NEW_DEF), ("4K r9 end 2K 4M", _ln(1, 4096, 9, end_piece=2048, end_bytes=4 << 20)),
            ("new", new)]


def _red17(variants=None, tag="red17", rounds=5, sizes=(16, 32, 64, 128, 256, 512, 1024, 4096)):
    import torch

    from tmakit import ops
    from tmakit.bench.harness import _nsets, time_op
    from tmakit.kernels import bandwidth as bw

    save, _ = _saver(tag)
    base_r = bw.REDUCE_CONFIG
    variants = variants or _red17_variants()
    for dname in ("float32", "bfloat16"):
        dt = torch_dt(dname)
        el = 4 if dt == torch.float32 else 2
        _check_reduce_variants(dname, variants, save)
        for mib in sizes:
            n = (mib << 20) // el
            k = _nsets(2 * n * el) if mib < 1024 else 1
            ds = [torch.randn(n, device="cuda").to(dt) for _ in range(k)]
            ss = [torch.randn(n, device="cuda").to(dt) for _ in range(k)]
            acc = {name: [] for name, _ in variants}
            for _r in range(rounds if mib < 4096 else 2):
                pk = time_op(lambda i: ds[i].add_(ss[i]), k, reps=20)
                got = {}
                for name, kw in variants:
                    bw.REDUCE_CONFIG = bw.CopyConfig(**kw)
                    got[name] = time_op(lambda i: ops.reduce_into(ds[i], ss[i], "add"), k, reps=20)
                pk2 = time_op(lambda i: ds[i].add_(ss[i]), k, reps=20)
                for name, ms in got.items():
                    acc[name].append(min(pk, pk2) / ms)
            row = dict(case=f"reduce add {dname} {mib} MiB", sets=k, path=ops.last_path, add_us=1e3 * min(pk, pk2))
            for name in acc:
                row[name] = round(sum(acc[name]) / len(acc[name]), 4)
                row[name + "_rounds"] = [round(x, 4) for x in acc[name]]
            save(row)
            del ds, ss
    bw.REDUCE_CONFIG = base_r


# call 43: L2 prefetch ahead (`ahead`): each lean CTA also prefetches the tile `ahead` tiles after its own into L2,
# so the last waves load from L2 (a shorter drain) and DRAM's queue stays full with fewer CTAs in flight
def _red19_variants():
    def ah(piece, res, ahead, end=True):
        kw = dict(end_piece=2048, end_bytes=4 << 20) if end else {}
        return _ln(1, piece, res, ahead=ahead, **kw)

    import dataclasses

    from tmakit.kernels import bandwidth as bw

    return [("new", dataclasses.asdict(bw.REDUCE_CONFIG)), ("3K r11 ah660", ah(3072, 11, 660)),
            ("3K r11 ah1320", ah(3072, 11, 1320)), ("3K r11 ah2640", ah(3072, 11, 2640)),
            ("3K r9 ah1056", ah(3072, 9, 1056)), ("3K r7 ah1584", ah(3072, 7, 1584)),
            ("4K r9 ah1056", ah(4096, 9, 1056)), ("2K r17 ah2112", ah(2048, 17, 2112))]


def _addprobe():
    """Grid, block and registers of torch's add_ kernels (bf16 and f32, 256 MiB) from a profiler trace."""
    import torch
    from torch.profiler import ProfilerActivity, profile

    save, _ = _saver("addprobe")
    for dt in (torch.float32, torch.bfloat16):
        n = (256 << 20) // (4 if dt == torch.float32 else 2)
        d, s_ = torch.randn(n, device="cuda").to(dt), torch.randn(n, device="cuda").to(dt)
        d.add_(s_)
        torch.cuda.synchronize()
        with profile(activities=[ProfilerActivity.CUDA]) as prof:
            d.add_(s_)
            torch.cuda.synchronize()
        path = OUT / "addprobe_trace.json"
        prof.export_chrome_trace(str(path))
        ev = [e for e in json.loads(path.read_text())["traceEvents"] if e.get("cat") == "kernel"]
        for e in ev:
            a = e.get("args", {})
            save(dict(dtype=str(dt), name=e.get("name", "")[:160], dur_us=e.get("dur"), grid=a.get("grid"),
                      block=a.get("block"), regs=a.get("registers per thread"), smem=a.get("shared memory"),
                      occ=a.get("est. achieved occupancy %")))
        path.unlink()


def _red19():
    _addprobe()
    _red_fit(_red19_variants(), ("float32", "bfloat16"), (64, 128, 192, 256, 384, 512), "red19", rounds=7)


# call 44: call 43's ahead lost 1.5-2 % (the L2 prefetches cost DRAM rate); torch's bf16 add_ runs 2 KiB blocks at
# 75 % occupancy (12 x 128 threads: 48 KiB of loads in flight per SM), its f32 add_ 4 KiB blocks at 16 per SM. Here:
# a shorter combine (bf16x2, more combining warps) and torch-like 2 KiB x 12-15 resident
def _red20_variants():
    import dataclasses

    from tmakit.kernels import bandwidth as bw

    new = dataclasses.asdict(bw.REDUCE_CONFIG)

    def nv(**kw):
        return dict(new, flat=tuple(dict(new["flat"], **kw).items()))

    end = dict(end_piece=2048, end_bytes=4 << 20)
    return [("new", new), ("new bf16x2", dict(new, bf16x2=1)), ("new c3", nv(consumers=3)),
            ("new c3 bf16x2", dict(nv(consumers=3), bf16x2=1)), ("new lean2 c3", nv(consumers=3, lean=2)),
            ("2K r13", _ln(1, 2048, 13)), ("2K r15", _ln(1, 2048, 15)), ("3K r10 end", _ln(1, 3072, 10, **end)),
            ("2K r13 c3", _ln(1, 2048, 13, consumers=3))]


def _red20():
    _red_fit(_red20_variants(), ("float32", "bfloat16"), (128, 256, 384, 512), "red20", rounds=7)


# call 45: call 44 moved nothing past +0.05 % (more combining warps); the lean CTA's drain ends with a bulk store
# and its completion wait: `stg` writes the combined words with st.global.v4 from the combining threads instead
def _red21_variants():
    import dataclasses

    from tmakit.kernels import bandwidth as bw

    new = dataclasses.asdict(bw.REDUCE_CONFIG)

    def nv(**kw):
        return dict(new, flat=tuple(dict(new["flat"], **kw).items()))

    end = dict(end_piece=2048, end_bytes=4 << 20)
    return [("new", new), ("new lean2 c3", nv(consumers=3, lean=2)), ("stg c1", nv(stg=1)),
            ("stg c3", nv(consumers=3, stg=1)), ("stg lean2 c3", nv(consumers=3, lean=2, stg=1)),
            ("stg c3 3K r10", nv(consumers=3, stg=1, resident=10)), ("stg c3 3K r13", nv(consumers=3, stg=1, resident=13)),
            ("stg c3 2K r15", _ln(1, 2048, 15, consumers=3, stg=1)),
            ("stg c3 4K r9 end", _ln(1, 4096, 9, consumers=3, stg=1, **end))]


def _red21():
    _red_fit(_red21_variants(), ("float32", "bfloat16"), (128, 256, 384, 512), "red21", rounds=7)


def _red14():
    from tmakit.kernels import bandwidth as bw

    save, _ = _saver("red14q", "red14q")
    base_r = bw.REDUCE_CONFIG
    for dname in ("float32", "bfloat16"):  # the one-tile shape at every size (odd tails, fewer tiles than the grid)
        _check_small(save, RED14, dname, (5, 17, 4097 * 33, (3 << 20) + 5, 1000003))
        _queued_rows(save, [RED14[0], RED14[1], RED14[4], RED14[5]], dname, (64, 1024, 16384))
    bw.REDUCE_CONFIG = base_r
    _red_fit(RED14, ("float32", "bfloat16"), (64, 128, 192, 256, 384, 512), "red14", rounds=7)


def _perm14():
    """Item B: both goal permutes at 64 / 256 / 512 MiB (bf16) against a same-size torch copy and the 4 GiB copy
    ceiling, in one process (CUDA events around each call, as the suite; buffers rotated past the L2 at 64 MiB)."""
    import torch

    from tmakit import ops
    from tmakit.bench.harness import _nsets, time_op

    save, _ = _saver("perm14")
    big = torch.empty(1 << 31, device="cuda", dtype=torch.bfloat16)
    big2 = torch.empty_like(big)
    big.normal_()

    def ceiling():
        return 2 * big.numel() * 2 / time_op(lambda i: big2.copy_(big), 1, reps=10) / 1e9

    ceil = [ceiling()]
    for shape in ((32, 64, 128, 128), (32, 64, 256, 256), (64, 64, 256, 256)):
        for dims in ((0, 2, 1, 3), (0, 3, 1, 2)):
            nb = 2 * torch.Size(shape).numel()
            k = _nsets(2 * nb)
            xs = [torch.randn(shape, device="cuda").to(torch.bfloat16) for _ in range(k)]
            ys = [torch.empty(tuple(shape[d] for d in dims), device="cuda", dtype=torch.bfloat16) for _ in range(k)]
            fl = [torch.empty_like(xs[0]) for _ in range(k)]
            ops.permute(xs[0], dims, out=ys[0])
            ok = bool(torch.equal(ys[0], xs[0].permute(dims))) and ops.last_path.startswith("tma")
            path = ops.last_path
            r_same, tbs, tt = [], [], []
            for _r in range(3):
                pc = time_op(lambda i: fl[i].copy_(xs[i]), k, reps=15)
                ms = time_op(lambda i: ops.permute(xs[i], dims, out=ys[i]), k, reps=15)
                pc2 = time_op(lambda i: fl[i].copy_(xs[i]), k, reps=15)
                pt = time_op(lambda i: ys[i].copy_(xs[i].permute(dims)), k, reps=5)
                r_same.append(min(pc, pc2) / ms)
                tbs.append(2 * nb / ms / 1e9)
                tt.append(2 * nb / pt / 1e9)
            ceil.append(ceiling())
            c = max(ceil)
            save(dict(case=f"bf16 {shape} -> {dims}", mib=nb >> 20, ok=ok, path=path, tbs=sum(tbs) / 3,
                      vs_copy_same=sum(r_same) / 3, rounds=[round(x, 4) for x in r_same], ceiling_tbs=c,
                      vs_ceiling=sum(tbs) / 3 / c, torch_tbs=sum(tt) / 3))
            del xs, ys, fl
    save(dict(case="4 GiB copy ceiling (bf16 copy_)", ceilings=[round(x, 4) for x in ceil]))


def _perm15_variants():
    """(which config, name, override dict): strided-copy variants for (0,2,1,3), transpose variants for (0,3,1,2)."""
    cp = [("copy", "base", {}),
          ("copy", "tpc1 4K x24", dict(tiles_per_cta=1, box_bytes=4096, ctas_per_sm=24, stages=2)),
          ("copy", "tpc1 8K x12", dict(tiles_per_cta=1, box_bytes=8192, ctas_per_sm=12, stages=2)),
          ("copy", "tpc1 16K x6", dict(tiles_per_cta=1, box_bytes=16384, ctas_per_sm=6, stages=2)),
          ("copy", "tpc2 8K x12", dict(tiles_per_cta=2, box_bytes=8192, ctas_per_sm=12, stages=2)),
          ("copy", "tpc4 8K x8", dict(tiles_per_cta=4, box_bytes=8192, ctas_per_sm=8, stages=3)),
          ("copy", "tpc2 16K x4", dict(tiles_per_cta=2, box_bytes=16384, ctas_per_sm=4, stages=3))]
    tp = [("transpose", "base", {}),
          ("transpose", "gm kq1 s2 c4 x4", dict(dyn=0, grid_mult=64, kq=1, stages=2, ctas_per_sm=4, consumers=4)),
          ("transpose", "gm kq2 s2 c4 x2", dict(dyn=0, grid_mult=64, kq=2, stages=2, ctas_per_sm=2, consumers=4)),
          ("transpose", "gm kq1 s2 c2 x6", dict(dyn=0, grid_mult=64, kq=1, stages=2, ctas_per_sm=6, consumers=2)),
          ("transpose", "gm kq2 s2 c8 x2", dict(dyn=0, grid_mult=64, kq=2, stages=2, ctas_per_sm=2, consumers=8)),
          ("transpose", "dyn kq2 s4 c4 x2", dict(kq=2, stages=4, ctas_per_sm=2, consumers=4)),
          ("transpose", "gm kq1 s1 c4 x6", dict(dyn=0, grid_mult=64, kq=1, stages=1, ctas_per_sm=6, consumers=4))]
    return cp + tp


def _perm16_variants():
    return [("copy", "base", {}),
            ("copy", "64K bal persistent s3", dict(box_bytes=65536, stages=3)),
            ("copy", "64K bal tpc1 x3", dict(tiles_per_cta=1, box_bytes=65536, ctas_per_sm=3, stages=2)),
            ("copy", "16K bal tpc1 x12", dict(tiles_per_cta=1, box_bytes=16384, ctas_per_sm=12, stages=2)),
            ("copy", "8K bal tpc1 x24", dict(tiles_per_cta=1, box_bytes=8192, ctas_per_sm=24, stages=2)),
            ("copy", "32K inorder persistent", dict(box_mode=0)),
            ("copy", "32K bal tpc1 x6", dict(tiles_per_cta=1, box_bytes=32768, ctas_per_sm=6, stages=2)),
            ("copy", "8K bal tpc1 x12 hint", dict(tiles_per_cta=1, box_bytes=8192, ctas_per_sm=12, stages=2, l2=0))]


def _perm15(variants=None, tag="perm15"):
    """Call 59: the goal permutes at 64 MiB (bf16 (32,64,128,128)) with shorter, hardware-scheduled CTAs (the
    reduce's lesson): strided copies with one or a few small tiles per CTA, transposes with grid_mult (no
    persistence); per call, vs the 4 GiB copy ceiling and a same-size copy, 5 rounds; each checked exact first."""
    import dataclasses

    import torch

    from tmakit import ops
    from tmakit.bench.harness import _nsets, time_op
    from tmakit.kernels import bandwidth as bw

    save, _ = _saver(tag)
    big = torch.empty(1 << 31, device="cuda", dtype=torch.bfloat16)
    big2 = torch.empty_like(big)
    big.normal_()
    ceil = []
    base_c, base_t = bw.COPY_CONFIG, dict(bw.TRANSPOSE_CONFIG)

    def use(which, kw):
        bw.COPY_CONFIG, bw.TRANSPOSE_CONFIG = base_c, dict(base_t)
        if which == "copy":
            bw.COPY_CONFIG = dataclasses.replace(base_c, **kw)
        else:
            bw.TRANSPOSE_CONFIG[2] = dataclasses.replace(base_t[2], **kw)

    shape = (32, 64, 128, 128)
    nb = 2 * torch.Size(shape).numel()
    k = _nsets(2 * nb)
    xs = [torch.randn(shape, device="cuda").to(torch.bfloat16) for _ in range(k)]
    fl = [torch.empty_like(xs[0]) for _ in range(k)]
    for dims, which in (((0, 2, 1, 3), "copy"), ((0, 3, 1, 2), "transpose")):
        ys = [torch.empty(tuple(shape[d] for d in dims), device="cuda", dtype=torch.bfloat16) for _ in range(k)]
        vs = [v for v in (variants or _perm15_variants()) if v[0] == which]
        if not vs:
            continue
        ok, t, path = {}, {v[1]: [] for v in vs}, {}
        for _w, name, kw in vs:
            try:
                use(which, kw)
                ys[0].fill_(7)
                ops.permute(xs[0], dims, out=ys[0])
                ok[name] = bool(torch.equal(ys[0], xs[0].permute(dims)))
                path[name] = ops.last_path
            except Exception as e:  # noqa: BLE001 - a refused config is a result
                ok[name] = repr(e)[:160]
        same = []
        for _r in range(5):
            ceil.append(2 * big.numel() * 2 / time_op(lambda i: big2.copy_(big), 1, reps=10) / 1e9)
            same.append(time_op(lambda i: fl[i].copy_(xs[i]), k, reps=15))
            for _w, name, kw in vs:
                if ok[name] is True:
                    use(which, kw)
                    t[name].append(time_op(lambda i: ops.permute(xs[i], dims, out=ys[i]), k, reps=15))
        c, sc = max(ceil), sorted(same)[len(same) // 2]
        for _w, name, _kw in vs:
            row = dict(case=f"bf16 {shape} -> {dims}", cfg=name, ok=ok[name], path=path.get(name))
            if t[name]:
                ms = sorted(t[name])[len(t[name]) // 2]
                row.update(tbs=round(2 * nb / ms / 1e9, 3), vs_ceiling=round(2 * nb / ms / 1e9 / c, 4),
                           vs_copy_same=round(sc / ms, 4), ceiling_tbs=round(c, 3))
            save(row)
        del ys
    use("copy", {})


def _perm_bufs(shape, dims, dt):
    """(bytes, sets, inputs, outputs, same-shape copy targets) for a permute timed over buffer sets past the L2."""
    import torch

    from tmakit.bench.harness import _nsets

    nb = torch.tensor([], dtype=dt).element_size() * torch.Size(shape).numel()
    k = _nsets(2 * nb)
    xs = [torch.randn(shape, device="cuda").to(dt) for _ in range(k)]
    ys = [torch.empty(tuple(shape[d] for d in dims), device="cuda", dtype=dt) for _ in range(k)]
    return nb, k, xs, ys, [torch.empty_like(xs[0]) for _ in range(k)]


def _tp8_variants():
    base2 = dict(lean=1, kq=1, consumers=4, xpose=2, batch=4, coords=2)
    return [("base", None), ("lean kq1 c4", base2), ("lean kq1 c4 r10", dict(base2, resident=10)),
            ("lean kq1 c4 r8", dict(base2, resident=8)), ("lean kq2 c4", dict(base2, kq=2)),
            ("lean kq1 c8", dict(base2, consumers=8)), ("lean kq2 c8 r6", dict(base2, kq=2, consumers=8, resident=6)),
            ("lean kq1 c2", dict(base2, consumers=2))]


def _tp8():
    """Call 62: `TransposeConfig.lean` (one tile per CTA, all warps transpose). Exactness over shapes / dtypes with
    edges, then per-call TB/s vs the 4 GiB copy ceiling and a same-size copy for the goal permutes and transposes,
    5 rounds."""
    import dataclasses

    import torch

    from tmakit import ops
    from tmakit.bench.harness import time_op
    from tmakit.kernels import bandwidth as bw

    save, _ = _saver("tp8")
    base_t = dict(bw.TRANSPOSE_CONFIG)

    def use(kw, e=None):
        bw.TRANSPOSE_CONFIG = dict(base_t)
        if kw is not None:
            for el in (1, 2, 4, 8):
                d = dict(kw) if el == 2 else dict(kw, xpose=0)
                bw.TRANSPOSE_CONFIG[el] = dataclasses.replace(base_t.get(el, base_t[2]), **d)

    cases = [((64, 64), (1, 0)), ((100, 200), (1, 0)), ((4097, 33), (1, 0)), ((3, 130, 70), (0, 2, 1)),
             ((5, 7, 96, 40), (0, 3, 1, 2)), ((9, 10, 11, 12), (3, 2, 1, 0)), ((2, 3, 4, 70, 66), (0, 1, 2, 4, 3))]
    for name, kw in _tp8_variants()[1:]:
        use(kw)
        ok, paths = True, set()
        for dt in (torch.bfloat16, torch.float32, torch.uint8, torch.float64):
            for shape, dims in cases:
                x = (torch.randn(shape, device="cuda") * 100).to(dt)
                y = torch.full(tuple(shape[d] for d in dims), 7, device="cuda").to(dt)
                ops.permute(x, dims, out=y)
                paths.add(ops.last_path)
                ok = ok and bool(torch.equal(y, x.permute(dims)))
        save(dict(case="exact", cfg=name, ok=ok, paths=sorted(paths)))
    big = torch.empty(1 << 31, device="cuda", dtype=torch.bfloat16)
    big2 = torch.empty_like(big)
    big.normal_()
    ceil = []
    perf = [((32, 64, 128, 128), (0, 3, 1, 2), torch.bfloat16), ((64, 64, 64, 64), (3, 2, 1, 0), torch.bfloat16),
            ((4096, 4096), (1, 0), torch.bfloat16), ((2048, 2048), (1, 0), torch.float32),
            ((4096, 4096), (1, 0), torch.float32), ((8192, 8192), (1, 0), torch.bfloat16),
            ((16384, 16384), (1, 0), torch.bfloat16)]
    for shape, dims, dt in perf:
        nb, k, xs, ys, fl = _perm_bufs(shape, dims, dt)
        t = {n: [] for n, _ in _tp8_variants()}
        same = []
        for _r in range(5):
            ceil.append(2 * big.numel() * 2 / time_op(lambda i: big2.copy_(big), 1, reps=10) / 1e9)
            same.append(time_op(lambda i: fl[i].copy_(xs[i]), k, reps=15))
            for name, kw in _tp8_variants():
                use(kw)
                t[name].append(time_op(lambda i: ops.permute(xs[i], dims, out=ys[i]), k, reps=15))
        c, sc = max(ceil), sorted(same)[2]
        row = dict(case=f"{dt} {shape} -> {dims}", mib=nb >> 20, ceiling=round(c, 3))
        for name in t:
            ms = sorted(t[name])[2]
            row[name] = [round(2 * nb / ms / 1e9 / c, 4), round(sc / ms, 4)]
        save(row)
        del xs, ys, fl
    use(None)


def _tp9():
    """Call 63: lean transposes against the default, per element size, on the suite's transpose / permute cases
    (16 MiB .. 1 GiB), interleaved A/B, 7 rounds, per call; ratios to the default and to a same-size copy."""
    import dataclasses

    import torch

    from tmakit import ops
    from tmakit.bench.harness import time_op
    from tmakit.kernels import bandwidth as bw

    save, _ = _saver("tp9")
    base_t = dict(bw.TRANSPOSE_CONFIG)
    lean = dict(lean=1, kq=1, consumers=4, batch=4, coords=2)
    cands = {2: [("kq1 c4", dict(lean, xpose=2)), ("kq1 c4 r8", dict(lean, xpose=2, resident=8)),
                 ("kq1 c2", dict(lean, xpose=2, consumers=2)), ("kq2 c4 r8", dict(lean, xpose=2, kq=2, resident=8))],
             4: [("kq1 c2", dict(lean, consumers=2)), ("kq2 c4", dict(lean, kq=2)),
                 ("kq1 c4 r10", dict(lean, resident=10)), ("kq2 c2", dict(lean, kq=2, consumers=2))]}
    cases = [((2048, 2048), (1, 0), torch.bfloat16), ((4096, 4096), (1, 0), torch.bfloat16),
             ((8192, 8192), (1, 0), torch.bfloat16), ((16384, 16384), (1, 0), torch.bfloat16),
             ((32, 64, 128, 128), (0, 3, 1, 2), torch.bfloat16), ((64, 64, 64, 64), (3, 2, 1, 0), torch.bfloat16),
             ((2048, 2048), (1, 0), torch.float32), ((4096, 4096), (1, 0), torch.float32),
             ((8192, 8192), (1, 0), torch.float32), ((16384, 16384), (1, 0), torch.float32)]
    for shape, dims, dt in cases:
        el = torch.tensor([], dtype=dt).element_size()
        nb, k, xs, ys, fl = _perm_bufs(shape, dims, dt)
        vs = [("base", None)] + cands[el]
        ok = {}
        for name, kw in vs:
            bw.TRANSPOSE_CONFIG = dict(base_t)
            if kw:
                bw.TRANSPOSE_CONFIG[el] = dataclasses.replace(base_t[el], **kw)
            ys[0].fill_(3)
            ops.permute(xs[0], dims, out=ys[0])
            ok[name] = bool(torch.equal(ys[0], xs[0].permute(dims)))
        t = {n: [] for n, _ in vs}
        same = []
        for _r in range(7):
            same.append(time_op(lambda i: fl[i].copy_(xs[i]), k, reps=15))
            for name, kw in vs:
                bw.TRANSPOSE_CONFIG = dict(base_t)
                if kw:
                    bw.TRANSPOSE_CONFIG[el] = dataclasses.replace(base_t[el], **kw)
                t[name].append(time_op(lambda i: ops.permute(xs[i], dims, out=ys[i]), k, reps=15))
        med = {n: sorted(v)[3] for n, v in t.items()}
        sc = sorted(same)[3]
        row = dict(case=f"{dt} {shape} -> {dims}", mib=nb >> 20, ok=ok, base_vs_copy=round(sc / med["base"], 4))
        for name, _ in vs[1:]:
            row[name] = [round(med["base"] / med[name], 4), round(sc / med[name], 4)]
        save(row)
        del xs, ys, fl
    bw.TRANSPOSE_CONFIG = base_t


def _tp10():
    """Call 67: lean vs persistent transposes at the suite's largest sizes (32768² bf16 4 GiB, f32 8 GiB) and 16384²,
    interleaved, 7 rounds, per call (buffers: one set, as the suite)."""
    import torch

    from tmakit import ops
    from tmakit.bench.harness import time_op
    from tmakit.kernels import bandwidth as bw

    save, _ = _saver("tp10")
    lean = dict(bw.TRANSPOSE_CONFIG)
    for shape, dt in (((16384, 16384), torch.bfloat16), ((16384, 16384), torch.float32),
                      ((32768, 32768), torch.bfloat16), ((32768, 32768), torch.float32)):
        x = torch.randn(shape, device="cuda").to(dt)
        y = torch.empty_like(x)
        t = {"lean": [], "persistent": []}
        for _r in range(7):
            for name, table in (("lean", lean), ("persistent", bw.PERSISTENT_TRANSPOSE)):
                bw.TRANSPOSE_CONFIG = dict(table)
                t[name].append(time_op(lambda i: ops.transpose(x, 0, 1, out=y), 1, reps=10))
        ok = bool(torch.equal(y, x.t()))
        med = {n: sorted(v)[3] for n, v in t.items()}
        save(dict(case=f"{dt} {shape}", ok=ok, lean_over_persistent=round(med["persistent"] / med["lean"], 4),
                  rounds=[round(a / b, 4) for a, b in zip(t["persistent"], t["lean"])],
                  lean_tbs=round(2 * x.numel() * x.element_size() / med["lean"] / 1e9, 3)))
        del x, y
    bw.TRANSPOSE_CONFIG = lean


def _perm17():
    """Call 69: one small tile per CTA for strided permutes (inner dim kept) against the persistent default over
    several shapes / sizes / dtypes, interleaved, 7 rounds, per call."""
    import dataclasses

    import torch

    from tmakit import ops
    from tmakit.bench.harness import time_op
    from tmakit.kernels import bandwidth as bw

    save, _ = _saver("perm17")
    base = bw.COPY_CONFIG
    vs = [("base", base),
          ("8K tpc1 x12", dataclasses.replace(base, tiles_per_cta=1, box_bytes=8192, ctas_per_sm=12, stages=2)),
          ("8K tpc1 x12 l2=0", dataclasses.replace(base, tiles_per_cta=1, box_bytes=8192, ctas_per_sm=12, stages=2,
                                                   l2=0)),
          ("16K tpc1 x12", dataclasses.replace(base, tiles_per_cta=1, box_bytes=16384, ctas_per_sm=12, stages=2))]
    cases = [((32, 64, 128, 128), (0, 2, 1, 3), torch.bfloat16), ((32, 64, 256, 256), (0, 2, 1, 3), torch.bfloat16),
             ((64, 64, 256, 256), (0, 2, 1, 3), torch.bfloat16), ((8, 128, 256, 64), (0, 2, 1, 3), torch.bfloat16),
             ((32, 64, 128, 128), (0, 2, 1, 3), torch.float32), ((4096, 64, 256), (1, 0, 2), torch.bfloat16),
             ((16, 512, 16, 256), (0, 2, 1, 3), torch.bfloat16), ((2, 3, 4, 1000, 96), (4, 0, 1, 2, 3), torch.float32)]
    for shape, dims, dt in cases:
        nb, k, xs, ys, _fl = _perm_bufs(shape, dims, dt)
        ok, path, t = {}, {}, {n: [] for n, _ in vs}
        for name, c in vs:
            bw.COPY_CONFIG = c
            ys[0].fill_(3)
            ops.permute(xs[0], dims, out=ys[0])
            ok[name], path[name] = bool(torch.equal(ys[0], xs[0].permute(dims))), ops.last_path
        for _r in range(7):
            for name, c in vs:
                bw.COPY_CONFIG = c
                t[name].append(time_op(lambda i: ops.permute(xs[i], dims, out=ys[i]), k, reps=15))
        med = {n: sorted(v)[3] for n, v in t.items()}
        row = dict(case=f"{dt} {shape} -> {dims}", mib=nb >> 20, ok=ok, path=path["base"],
                   base_tbs=round(2 * nb / med["base"] / 1e9, 3))
        for name, _ in vs[1:]:
            row[name] = round(med["base"] / med[name], 4)
        save(row)
        del xs, ys, _fl
    bw.COPY_CONFIG = base


def _lean18():
    """Call 73: the lean one-box tensor CTA (``CopyConfig.lean`` on the tensor engine, ``stream_one``) against the
    defaults, per call, 7 interleaved rounds: strided permutes (inner dim kept) and contiguous copies (also against
    the lean bulk copy), each with a same-size torch copy in the same rounds."""
    import dataclasses

    import torch

    from tmakit import ops
    from tmakit.bench.harness import _measure_ceiling, time_op
    from tmakit.kernels import bandwidth as bw

    save, _ = _saver("lean18")
    ceiling = _measure_ceiling(30)
    base = bw.COPY_CONFIG
    st = dict(base.strided)

    def lean_t(box, res):
        return dataclasses.replace(base, strided=tuple({**st, "box_bytes": box, "lean": 1, "resident": res,
                                                        "stages": 1}.items()))

    perm_vs = [("base", base), ("t8K r12", lean_t(8192, 12)), ("t8K r16", lean_t(8192, 16)),
               ("t8K r20", lean_t(8192, 20)), ("t16K r10", lean_t(16384, 10)), ("t4K r24", lean_t(4096, 24))]
    flat0 = dict(flat=(), flat_min=0, bulk_below=0)

    def flat_t(box, res):
        return dataclasses.replace(base, **flat0, tiles_per_cta=1, box_bytes=box, lean=1, resident=res, stages=1,
                                   flat_width=256)

    def flat_b(piece, res):
        return dataclasses.replace(base, **flat0, engine="bulk", bulk_mode=3, lean=1, tiles_per_cta=1, pieces=1,
                                   piece=piece, row=piece, resident=res, stages=1)

    copy_vs = [("base", base), ("t8K r16", flat_t(8192, 16)), ("t16K r12", flat_t(16384, 12)),
               ("t32K r6", flat_t(32768, 6)), ("b8K r16", flat_b(8192, 16)), ("b16K r12", flat_b(16384, 12))]
    perm_cases = [((32, 64, 128, 128), (0, 2, 1, 3), torch.bfloat16), ((32, 64, 256, 256), (0, 2, 1, 3), torch.bfloat16),
                  ((32, 64, 128, 128), (0, 2, 1, 3), torch.float32), ((8, 128, 256, 64), (0, 2, 1, 3), torch.bfloat16),
                  ((4096, 64, 256), (1, 0, 2), torch.bfloat16)]
    copy_cases = [((8 << 20,), None, torch.bfloat16), ((32 << 20,), None, torch.bfloat16),
                  ((128 << 20,), None, torch.bfloat16), ((512 << 20,), None, torch.bfloat16)]
    for shape, dims, dt in perm_cases + copy_cases:
        is_perm = dims is not None
        vs = perm_vs if is_perm else copy_vs
        d = dims or (0,)
        nb, k, xs, ys, fl = _perm_bufs(shape, d, dt)
        if is_perm:
            fns = {n: (lambda i, d=d: ops.permute(xs[i], d, out=ys[i])) for n, _ in vs}
            ref = xs[0].permute(d)
        else:
            fns = {n: (lambda i: ops.copy(xs[i], ys[i])) for n, _ in vs}
            ref = xs[0]
        ok, path = {}, {}
        for name, c in vs:
            bw.COPY_CONFIG = c
            ys[0].fill_(3)
            fns[name](0)
            ok[name], path[name] = bool(torch.equal(ys[0], ref)), ops.last_path
        t = {n: [] for n, _ in vs}
        t["torch copy"] = []
        for _r in range(7):
            for name, c in vs:
                bw.COPY_CONFIG = c
                t[name].append(time_op(fns[name], k, reps=15))
            t["torch copy"].append(time_op(lambda i: fl[i].copy_(xs[i]), k, reps=15))
        bw.COPY_CONFIG = base
        med = {n: sorted(v)[3] for n, v in t.items()}
        row = dict(case=f"{dt} {shape} -> {dims}", mib=nb >> 20, ok=ok, path=path,
                   base_frac=round(2 * nb / med["base"] / 1e9 / ceiling, 4),
                   copy_frac=round(2 * nb / med["torch copy"] / 1e9 / ceiling, 4), ceiling=round(ceiling, 3))
        for name, _ in vs:
            row[name] = round(2 * nb / med[name] / 1e9 / ceiling, 4)
        save(row)
        del xs, ys, fl
    bw.COPY_CONFIG = base


def _ceiling_row(case, nb, times, ceiling, **extra):
    """A result row: each variant's median time over its rounds as a fraction of the copy ceiling (2 * nb bytes)."""
    row = dict(case=case, mib=nb >> 20, **extra, ceiling=round(ceiling, 3))
    for name, v in times.items():
        row[name] = round(2 * nb / sorted(v)[len(v) // 2] / 1e9 / ceiling, 4)
    return row


def _tp12(variants=None, tag="tp12", ok_skip=(), cases=None, rounds=7):
    """Call 74 (and 75, ``_tp13``, with other variants): 2-byte lean transpose shapes for the goal (0,3,1,2) permute: 8 KiB tiles at higher residency, L2
    promotion, 2 / 8 warps; against the default, 7 interleaved rounds, per call, with a same-size torch copy."""
    import dataclasses

    import torch

    from tmakit import ops
    from tmakit.bench.harness import _measure_ceiling, time_op
    from tmakit.kernels import bandwidth as bw

    save, _ = _saver(tag)
    ceiling = _measure_ceiling(30)
    base_t = dict(bw.TRANSPOSE_CONFIG)
    d = base_t[2]
    vs = [("default", d), ("kq1 r12", dataclasses.replace(d, kq=1, resident=12)),
          ("kq1 r14", dataclasses.replace(d, kq=1, resident=14)), ("kq1 r16", dataclasses.replace(d, kq=1, resident=16)),
          ("kq1 c2 r12", dataclasses.replace(d, kq=1, consumers=2, resident=12)),
          ("l2=0", dataclasses.replace(d, l2=0)), ("l2=2", dataclasses.replace(d, l2=2)),
          ("c8", dataclasses.replace(d, consumers=8))] if variants is None else [("default", d)] + [
              (n, dataclasses.replace(d, **kw)) for n, kw in variants]
    cases = cases or [((32, 64, 128, 128), (0, 3, 1, 2)), ((32, 64, 256, 256), (0, 3, 1, 2)), ((4096, 4096), (1, 0)),
                      ((16384, 16384), (1, 0)), ((64, 64, 64, 64), (3, 2, 1, 0))]
    for shape, dims in cases:
        nb, k, xs, ys, fl = _perm_bufs(shape, dims, torch.bfloat16)
        ok, t = {}, {n: [] for n, _ in vs}
        t["torch copy"] = []
        for name, c in vs:
            bw.TRANSPOSE_CONFIG = {**base_t, 2: c}
            ys[0].fill_(3)
            ops.permute(xs[0], dims, out=ys[0])
            ok[name] = bool(torch.equal(ys[0], xs[0].permute(dims))) or any(w in name for w in ok_skip)
        for _r in range(rounds):
            for name, c in vs:
                bw.TRANSPOSE_CONFIG = {**base_t, 2: c}
                t[name].append(time_op(lambda i: ops.permute(xs[i], dims, out=ys[i]), k, reps=15))
            t["torch copy"].append(time_op(lambda i: fl[i].copy_(xs[i]), k, reps=15))
        bw.TRANSPOSE_CONFIG = base_t
        save(_ceiling_row(f"bf16 {shape} -> {dims}", nb, t, ceiling, ok=all(ok.values())))
        del xs, ys, fl
    bw.TRANSPOSE_CONFIG = base_t


def _fd16():
    """Call 83: multiply-shift tile coordinates (the new default) against the div sequence, per call, 11
    interleaved rounds: the lean strided CTA (``-DTMAKIT_STREAM_FASTDIV=0`` for the old) on strided permutes."""
    import torch

    from tmakit import ops
    from tmakit.bench.harness import _measure_ceiling, time_op
    from tmakit.kernels import bandwidth as bw

    save, _ = _saver("fd16")
    ceiling = _measure_ceiling(30)
    orig = bw._stream_options

    def old_opts(cfg, lag, one=False):
        return orig(cfg, lag, one) + (("-DTMAKIT_STREAM_FASTDIV=0",) if one else ())

    cases = [((32, 64, 128, 128), (0, 2, 1, 3), torch.bfloat16), ((32, 64, 256, 256), (0, 2, 1, 3), torch.bfloat16),
             ((8, 128, 256, 64), (0, 2, 1, 3), torch.bfloat16), ((32, 64, 128, 128), (0, 2, 1, 3), torch.float32)]
    for shape, dims, dt in cases:
        nb, k, xs, ys, fl = _perm_bufs(shape, dims, dt)
        t = {"default": [], "fastdiv": [], "div": [], "torch copy": []}
        ok, runs = True, {}
        for name in ("fastdiv", "div"):  # one launcher each, called directly (no cache clearing while timing)
            bw._stream_options = orig if name == "fastdiv" else old_opts
            bw._launchers.clear()
            runs[name] = bw.launcher_for(xs[0].permute(dims), ys[0])
            ys[0].fill_(3)
            runs[name](xs[0].data_ptr(), ys[0].data_ptr())
            ok = ok and bool(torch.equal(ys[0], xs[0].permute(dims)))
        bw._stream_options = orig
        bw._launchers.clear()
        ops._fast.clear()
        for _r in range(11):
            t["default"].append(time_op(lambda i: ops.permute(xs[i], dims, out=ys[i]), k, reps=15))
            for name in ("fastdiv", "div"):
                run = runs[name]
                t[name].append(time_op(lambda i, run=run: run(xs[i].data_ptr(), ys[i].data_ptr()), k, reps=15))
            t["torch copy"].append(time_op(lambda i: fl[i].copy_(xs[i]), k, reps=15))
        bw._stream_options = orig
        save(_ceiling_row(f"{dt} {shape} -> {dims}", nb, t, ceiling, ok=ok))
        del xs, ys, fl
    bw._stream_options = orig


def _accept():
    """Call 87+: the acceptance items that sit near their bound, 21 interleaved rounds after a 20 s burn-in, per
    call (CUDA events around each call, buffers rotated past the L2): in every round the 1 GiB copy ceiling, the example permutes (64 and
    256 MiB) and a same-size torch copy, and reduce_into add vs add_ at 256 / 384 / 512 MiB. Medians and min-max of
    the per-round ratios."""
    import statistics

    import torch

    from tmakit import ops
    from tmakit.bench.harness import _nsets, time_op

    save, _ = _saver("accept")
    n = 1 << 30
    cx = torch.empty(n, dtype=torch.uint8, device="cuda").random_()
    cy = torch.empty_like(cx)
    perms = []
    for shape in ((32, 64, 128, 128), (32, 64, 256, 256)):
        for dims in ((0, 2, 1, 3), (0, 3, 1, 2)):
            nb, k, xs, ys, fl = _perm_bufs(shape, dims, torch.bfloat16)
            perms.append((f"permute {shape} -> {dims}", nb, k, xs, ys, fl, dims))
    reds = []
    for dt, mib in ((torch.bfloat16, 256), (torch.float32, 256), (torch.bfloat16, 384), (torch.float32, 384),
                    (torch.bfloat16, 512)):
        nn = (mib << 20) // torch.tensor([], dtype=dt).element_size()
        k = _nsets(3 * (mib << 20))
        us = [torch.randn(nn, device="cuda").to(dt) for _ in range(k)]
        vs = [torch.randn(nn, device="cuda").to(dt) for _ in range(k)]
        reds.append((f"reduce add {dt} {mib} MiB", k, us, vs))
    per = {}
    t_end = time.time() + 20  # burn-in: a fresh machine's first seconds run slow (host and clocks)
    while time.time() < t_end:
        for name, nb, k, xs, ys, fl, dims in perms:
            for i in range(k):
                ops.permute(xs[i], dims, out=ys[i])
        cy.copy_(cx)
        torch.cuda.synchronize()
    for _r in range(int(os.environ.get("ACCEPT_ROUNDS", 21))):
        ceil_ms = time_op(lambda i: cy.copy_(cx), 1, reps=20)
        ceiling = 2 * n / ceil_ms / 1e9
        per.setdefault("ceiling TB/s", []).append(ceiling)
        for name, nb, k, xs, ys, fl, dims in perms:
            t_tk = time_op(lambda i: ops.permute(xs[i], dims, out=ys[i]), k, reps=20)
            t_cp = time_op(lambda i: fl[i].copy_(xs[i]), k, reps=20)
            per.setdefault(name + " / ceiling", []).append(2 * nb / t_tk / 1e9 / ceiling)
            per.setdefault(name + " / same-size copy", []).append(t_cp / t_tk)
        for name, k, us, vs in reds:
            t_tk = time_op(lambda i: ops.reduce_into(vs[i], us[i], "add"), k, reps=20)
            t_pe = time_op(lambda i: vs[i].add_(us[i]), k, reps=20)
            per.setdefault(name + " / add_", []).append(t_pe / t_tk)
    for name, v in per.items():
        save(dict(case=name, median=round(statistics.median(v), 4), min=round(min(v), 4), max=round(max(v), 4),
                  rounds=len(v), per_round=[round(x, 4) for x in v]))


def _tp11():
    """Call 72: 2-byte lean transpose shapes (kq 1 vs 2, residency) against the committed default on the suite's
    bf16 transposes and the goal permutes, interleaved, 9 rounds, per call."""
    import dataclasses

    import torch

    from tmakit import ops
    from tmakit.bench.harness import time_op
    from tmakit.kernels import bandwidth as bw

    save, _ = _saver("tp11")
    base_t = dict(bw.TRANSPOSE_CONFIG)
    d = base_t[2]
    vs = [("default kq2 r8", d), ("kq1 r8", dataclasses.replace(d, kq=1)),
          ("kq1 r0", dataclasses.replace(d, kq=1, resident=0)), ("kq1 r10", dataclasses.replace(d, kq=1, resident=10)),
          ("kq1 r6", dataclasses.replace(d, kq=1, resident=6)), ("kq2 r0", dataclasses.replace(d, resident=0))]
    cases = [((2048, 2048), (1, 0)), ((4096, 4096), (1, 0)), ((8192, 8192), (1, 0)), ((16384, 16384), (1, 0)),
             ((32, 64, 128, 128), (0, 3, 1, 2)), ((32, 64, 256, 256), (0, 3, 1, 2)), ((64, 64, 64, 64), (3, 2, 1, 0))]
    for shape, dims in cases:
        nb, k, xs, ys, _fl = _perm_bufs(shape, dims, torch.bfloat16)
        ok, t = {}, {n: [] for n, _ in vs}
        for name, c in vs:
            bw.TRANSPOSE_CONFIG = {**base_t, 2: c}
            ys[0].fill_(3)
            ops.permute(xs[0], dims, out=ys[0])
            ok[name] = bool(torch.equal(ys[0], xs[0].permute(dims)))
        for _r in range(9):
            for name, c in vs:
                bw.TRANSPOSE_CONFIG = {**base_t, 2: c}
                t[name].append(time_op(lambda i: ops.permute(xs[i], dims, out=ys[i]), k, reps=15))
        med = {n: sorted(v)[4] for n, v in t.items()}
        row = dict(case=f"bf16 {shape} -> {dims}", mib=nb >> 20, ok=all(ok.values()),
                   default_tbs=round(2 * nb / med["default kq2 r8"] / 1e9, 3))
        for name, _ in vs[1:]:
            row[name] = round(med["default kq2 r8"] / med[name], 4)
        save(row)
        del xs, ys, _fl
    bw.TRANSPOSE_CONFIG = base_t


def _occ(dst, src):
    """(CTAs per SM the driver allows, grid, block, smem) of the combine launcher for this pair."""
    from tmakit.cuda.driver import cu
    from tmakit.kernels import bandwidth as bw
    from tmakit.tma.dtypes import tma_dtype

    try:
        L = bw.launcher_for(src, dst, op=0, dtype=tma_dtype(dst.dtype), allow_transpose=False)
        r = cu().cuOccupancyMaxActiveBlocksPerMultiprocessor(L.kernel.handle, L.block, L.smem)
        return dict(occ=int(r[1]), grid=L.grid, block=L.block, smem=L.smem)
    except Exception as e:  # noqa: BLE001 - evidence only
        return dict(occ_error=repr(e)[:200])


def _red7():
    _red_fit(RED7, ("float32", "bfloat16"), (64, 128, 192, 256, 384, 512), "red7")


def _fit(xs, ys):
    """Least squares y = a + x / b: (a, b)."""
    n = len(xs)
    mx, my = sum(xs) / n, sum(ys) / n
    sxx = sum((x - mx) ** 2 for x in xs)
    slope = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sxx
    return my - slope * mx, 1 / slope


def _red_fit(variants, dts, sizes, tag, rounds=5, reps=20):
    """Combine-reduce variants against add_ at several sizes in one process (rounds outermost, add_ timed before and
    after the variants of each size); every variant checked bit-exact against add_ before and after. Per (dtype,
    impl): median microseconds per size and the fit t = a + bytes / b (a: fixed cost in us, b: rate in TB/s)."""
    import statistics

    import torch

    from tmakit import ops
    from tmakit.bench.harness import time_op
    from tmakit.kernels import bandwidth as bw

    save, _ = _saver(tag)
    base_r = bw.REDUCE_CONFIG
    for dname in dts:
        dt = torch_dt(dname)
        oks = {}
        for name, kw in variants:
            bw.REDUCE_CONFIG = bw.CopyConfig(**kw)
            oks[name] = _reduce_matches_add(dt, (5, 4097 * 33, (3 << 20) + 5, 64 << 20, 160 << 20), spread=40)
        el = 4 if dt == torch.float32 else 2
        bufs = {m: ([torch.randn((m << 20) // el, device="cuda").to(dt) for _ in range(2)],
                    [torch.randn((m << 20) // el, device="cuda").to(dt) for _ in range(2)]) for m in sizes}
        t = {(m, name): [] for m in sizes for name in ["add_"] + [v for v, _ in variants]}
        ratio = {(m, name): [] for m in sizes for name, _ in variants}
        occ = {}
        if 256 in bufs:
            for name, kw in variants:
                bw.REDUCE_CONFIG = bw.CopyConfig(**kw)
                occ[name] = _occ(bufs[256][0][0], bufs[256][1][0])
        for r in range(rounds):
            for m in sizes:
                ds, ss = bufs[m]
                pk = time_op(lambda i: ds[i].add_(ss[i]), 2, reps=reps)
                got = {}
                for name, kw in variants:
                    bw.REDUCE_CONFIG = bw.CopyConfig(**kw)
                    got[name] = time_op(lambda i: ops.reduce_into(ds[i], ss[i], "add"), 2, reps=reps)
                pk2 = time_op(lambda i: ds[i].add_(ss[i]), 2, reps=reps)
                t[(m, "add_")].append(min(pk, pk2))
                for name, ms in got.items():
                    t[(m, name)].append(ms)
                    ratio[(m, name)].append(min(pk, pk2) / ms)
        for name, kw in variants:
            bw.REDUCE_CONFIG = bw.CopyConfig(**kw)
            oks[name] = oks[name] and _reduce_matches_add(dt, (4097 * 33, 64 << 20), spread=40)
        for name in ["add_"] + [v for v, _ in variants]:
            us = [1e3 * statistics.median(t[(m, name)]) for m in sizes]
            a, b = _fit([3 * (m << 20) for m in sizes], us)
            row = dict(case=f"reduce add {dname} fit", cfg=name, ok=oks.get(name, True), a_us=a, b_tbs=b / 1e6,
                       us={m: round(u, 2) for m, u in zip(sizes, us)})
            row.update(occ.get(name, {}))
            if name != "add_":
                row["ratio"] = {m: round(sum(ratio[(m, name)]) / rounds, 4) for m in sizes}
                row["rounds256"] = [round(x, 4) for x in ratio.get((256, name), [])]
            save(row)
        del bufs
    bw.REDUCE_CONFIG = base_r


def torch_dt(name):
    import torch

    return getattr(torch, name)


def _red_ab(variants, cases, tag):
    """Combine-reduce variants (CopyConfig kwargs) against torch add_ in one process, interleaved, 3 rounds; each
    variant first checked bit-exact against add_ (bf16 also with operands of very different magnitudes)."""
    import torch

    from tmakit import ops
    from tmakit.bench.harness import time_op
    from tmakit.kernels import bandwidth as bw

    save, _ = _saver(tag)
    base_r = bw.REDUCE_CONFIG

    for dt, mib in cases:
        n = (mib << 20) // (4 if dt == torch.float32 else 2)
        k = 2 if mib < 1024 else 1
        ds = [torch.randn(n, device="cuda").to(dt) for _ in range(k)]
        ss = [torch.randn(n, device="cuda").to(dt) for _ in range(k)]
        acc = {name: [] for name, _ in variants}
        oks = {}
        for name, kw in variants:
            bw.REDUCE_CONFIG = bw.CopyConfig(**kw)
            oks[name] = _reduce_matches_add(dt, (5, 4097 * 33, (3 << 20) + 5, 64 << 20, 160 << 20), spread=40)
        for r in range(3):
            for name, kw in variants:
                bw.REDUCE_CONFIG = bw.CopyConfig(**kw)
                pk = time_op(lambda i: ds[i].add_(ss[i]), k, reps=15)
                ms = time_op(lambda i: ops.reduce_into(ds[i], ss[i], "add"), k, reps=15)
                pk2 = time_op(lambda i: ds[i].add_(ss[i]), k, reps=15)
                acc[name].append(min(pk, pk2) / ms)
        for name, kw in variants:  # again after many launches (counters reset, no stale state)
            bw.REDUCE_CONFIG = bw.CopyConfig(**kw)
            oks[name] = oks[name] and _reduce_matches_add(dt, (4097 * 33, 64 << 20), spread=40)
        for name, _ in variants:
            v = acc[name]
            save(dict(case=f"reduce add {str(dt)[6:]} {mib} MiB", cfg=name, ok=oks[name], ratio=sum(v) / len(v),
                      rounds=[round(a, 4) for a in v]))
        del ds, ss
    bw.REDUCE_CONFIG = base_r


NCU_METRICS = ("gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,launch__grid_size,"
               "launch__block_size,launch__registers_per_thread,lts__t_sector_hit_rate.pct")


def _ncut():
    """ncu target: one call of each op between cudaProfilerStart/Stop (inputs made and kernels compiled before)."""
    import ctypes

    import torch

    from tmakit import cuda as tkc
    from tmakit import ops
    from tmakit.kernels import bandwidth as bw

    n = (1 << 30) // 2
    x = torch.randn(n, device="cuda").to(torch.bfloat16)
    y = torch.empty_like(x)
    a = torch.randn(16384, 16384, device="cuda").to(torch.bfloat16)
    b = torch.empty_like(a)
    af = torch.randn(16384, 16384, device="cuda")
    bf_ = torch.empty_like(af)
    d = torch.randn(64 << 20, device="cuda")
    s_ = torch.randn(64 << 20, device="cuda")
    k2 = tkc.kernel(LSU_SRC, "lsu_copy_blk")
    n16 = n * 2 // 16
    base_t = dict(bw.TRANSPOSE_CONFIG)
    t2 = {**base_t, 2: bw.TransposeConfig(**dict(base_t[2].__dict__, xpose=2, mode=2, consumers=4))}
    t4 = {**base_t, 4: bw.TransposeConfig(**dict(base_t[4].__dict__, mode=2, consumers=2))}

    def run():
        ops.copy(x, y)
        k2((-(-n16 // 1024), 1, 1), (256, 1, 1), tkc.Ptr(x.data_ptr()), tkc.Ptr(y.data_ptr()), ctypes.c_int64(n16))
        for cfg in (base_t, t2):
            bw.TRANSPOSE_CONFIG = cfg
            ops.transpose(a, 0, 1, out=b)
        for cfg in (base_t, t4):
            bw.TRANSPOSE_CONFIG = cfg
            ops.transpose(af, 0, 1, out=bf_)
        ops.reduce_into(d, s_, "add")
        d.add_(s_)

    run()
    torch.cuda.synchronize()
    torch.cuda.profiler.start()
    run()
    torch.cuda.synchronize()
    torch.cuda.profiler.stop()


def _ncut2():
    """ncu target (call 46): bf16 and f32 256 MiB reduce -- add_, the default and `stg lean2 c3` -- three calls each."""
    import dataclasses

    import torch

    from tmakit import ops
    from tmakit.kernels import bandwidth as bw

    new = dataclasses.asdict(bw.REDUCE_CONFIG)
    stg = dict(new, flat=tuple(dict(new["flat"], consumers=3, lean=2, stg=1).items()))
    cfgs = [bw.CopyConfig(**new), bw.CopyConfig(**stg)]
    for dt in (torch.bfloat16, torch.float32):
        n = (256 << 20) // (2 if dt == torch.bfloat16 else 4)
        d, s_ = torch.randn(n, device="cuda").to(dt), torch.randn(n, device="cuda").to(dt)
        for c in cfgs:
            bw.REDUCE_CONFIG = c
            ops.reduce_into(d, s_, "add")
        d.add_(s_)
        torch.cuda.synchronize()
        torch.cuda.profiler.start()
        for _ in range(3):
            d.add_(s_)
            for c in cfgs:
                bw.REDUCE_CONFIG = c
                ops.reduce_into(d, s_, "add")
        torch.cuda.synchronize()
        torch.cuda.profiler.stop()


# call 47: where the per-call overhead outside the kernel goes. Micro-kernels (2 KiB per CTA; `bf16` add of src into
# dst): an empty kernel, a torch-like LSU add (128 threads, one 16-byte word each), a bulk load + in-place add +
# bulk store (as the lean CTA), bulk load + st.global, bulk load + bulk store without the add.
LAUNCH_SRC = r"""
#include <tmakit/all.cuh>
using namespace tmakit;
__device__ __forceinline__ void add8(uint4& d, const uint4& s) {
  asm("add.rn.bf16x2 %0, %0, %1;" : "+r"(d.x) : "r"(s.x));
  asm("add.rn.bf16x2 %0, %0, %1;" : "+r"(d.y) : "r"(s.y));
  asm("add.rn.bf16x2 %0, %0, %1;" : "+r"(d.z) : "r"(s.z));
  asm("add.rn.bf16x2 %0, %0, %1;" : "+r"(d.w) : "r"(s.w));
}
extern "C" __global__ void empty_k(const uint4* s, uint4* d) {}
extern "C" __global__ void __launch_bounds__(128) lsu_add(const uint4* s, uint4* d) {
  const long long i = blockIdx.x * 128ll + threadIdx.x;
  uint4 a = s[i], b = d[i];
  add8(b, a);
  d[i] = b;
}
// MODE 0: bulk store; 1: st.global from the 128 threads; 2: bulk store, no add (load src only)
template <int MODE>
__device__ __forceinline__ void bulk_k(const uint4* s, uint4* d) {
  extern __shared__ __align__(128) uint4 buf[];
  __shared__ __align__(8) unsigned long long bar;
  const u32 b = smem_u32(&bar), sa = smem_u32(buf), da = sa + 2048;
  const long long off = blockIdx.x * 128ll;
  if (threadIdx.x == 0) {
    mbarrier_init(b, 1);
    fence_mbarrier_init();
    mbarrier_arrive_expect_tx(b, MODE == 2 ? 2048 : 4096);
    asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], 2048, [%2];"
                 ::"r"(sa), "l"(s + off), "r"(b) : "memory");
    if (MODE != 2)
      asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], 2048, [%2];"
                   ::"r"(da), "l"(d + off), "r"(b) : "memory");
  }
  __syncthreads();
  mbarrier_wait(b, 0);
  if (MODE != 2) {
    uint4 x = buf[threadIdx.x], y = buf[128 + threadIdx.x];
    add8(y, x);
    if (MODE == 1) {
      d[off + threadIdx.x] = y;
      return;
    }
    buf[128 + threadIdx.x] = y;
  }
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
  __syncthreads();
  if (threadIdx.x == 0) {
    asm volatile("cp.async.bulk.global.shared::cta.bulk_group [%0], [%1], 2048;" ::"l"(d + off),
                 "r"(MODE == 2 ? sa : da) : "memory");
    bulk_commit_group();
    bulk_wait_group<0>();
  }
}
extern "C" __global__ void __launch_bounds__(128) bulk_add(const uint4* s, uint4* d) { bulk_k<0>(s, d); }
extern "C" __global__ void __launch_bounds__(128) bulk_add_stg(const uint4* s, uint4* d) { bulk_k<1>(s, d); }
extern "C" __global__ void __launch_bounds__(128) bulk_copy(const uint4* s, uint4* d) { bulk_k<2>(s, d); }
"""


def _launch():
    """Queued device time per call (us) of the micro-kernels and of add_ / the lean reduce at 1 .. 1056 CTAs of
    2 KiB, plus event time per call at 256 MiB (add_, default, stg) for the record."""
    import dataclasses

    import torch

    from tmakit import cuda as tkc
    from tmakit.kernels import bandwidth as bw
    from tmakit.tma.tensormap import DataType

    save, _ = _saver("launch")
    ks = {n: tkc.kernel(LAUNCH_SRC, n) for n in ("empty_k", "lsu_add", "bulk_add", "bulk_add_stg", "bulk_copy")}
    eff = dataclasses.replace(bw.REDUCE_CONFIG, **dict(bw.REDUCE_CONFIG.flat), flat=(), flat_big=())
    l2 = dataclasses.replace(eff, consumers=3, lean=2)
    lean = {"lean": eff, "lean2 c3": l2, "lean2 c3 stg": dataclasses.replace(l2, stg=1),
            "lean2 c3 stg x2": dataclasses.replace(l2, stg=1, bf16x2=1),
            "lean2 c3 stg x2 const": dataclasses.replace(l2, stg=1, bf16x2=1, t1_const=1),
            "lean2 c3 x2 const": dataclasses.replace(l2, bf16x2=1, t1_const=1)}
    for ctas in (1, 132, 1056):
        nb = ctas * 2048
        d = torch.randn(nb // 2, device="cuda").to(torch.bfloat16)
        s_ = torch.randn(nb // 2, device="cuda").to(torch.bfloat16)
        sp, dp = tkc.Ptr(s_.data_ptr()), tkc.Ptr(d.data_ptr())
        row = dict(case=f"queued us, {ctas} x 2 KiB", add_=1e3 * _time_queued(lambda i: d.add_(s_), 1, 40))
        for name, k in ks.items():
            for sm in ((0, 22528) if name == "empty_k" else (4096,)):
                g = 1 if name == "empty_k" else ctas
                row[f"{name} smem{sm}"] = 1e3 * _time_queued(lambda i, k=k, g=g, sm=sm: k((g, 1, 1), (128, 1, 1), sp, dp,
                                                                                        smem=sm), 1, 40)
        for name, c in lean.items():
            c = dataclasses.replace(c, piece=2048, row=2048, end_piece=0, end_bytes=0)
            L = bw._bulk_launcher(nb, 0, DataType.BFLOAT16, c, 132)
            row[name] = 1e3 * _time_queued(lambda i, L=L: L(s_.data_ptr(), d.data_ptr()), 1, 40)
        save({k: (round(v, 2) if isinstance(v, float) else v) for k, v in row.items()})


# call 48: the lean CTA's chain toward the micro-kernel's (call 47): all four warps combine, st.global or bulk
# store, bf16x2, compile-time tile size (no end tiles)
def _red22_variants():
    import dataclasses

    from tmakit.kernels import bandwidth as bw

    new = dataclasses.asdict(bw.REDUCE_CONFIG)

    def nv(x2=1, **kw):
        return dict(new, bf16x2=x2, flat=tuple(dict(new["flat"], consumers=3, lean=2, **kw).items()))

    const = dict(t1_const=1, end_piece=0, end_bytes=0)
    return [("new", new), ("stg", nv(0, stg=1)), ("stg x2", nv(stg=1)), ("stg x2 const", nv(stg=1, **const)),
            ("x2 const", nv(**const)), ("x2", nv()),
            ("stg x2 const 2K r15", nv(stg=1, piece=2048, row=2048, resident=15, **const)),
            ("stg x2 const 4K r9", nv(stg=1, piece=4096, row=4096, resident=9, **const))]


def _red22():
    _launch()
    _red_fit(_red22_variants(), ("bfloat16", "float32"), (128, 256, 384, 512), "red22", rounds=7)


# call 49: call 48's chain cuts (const, bf16x2) moved the one-wave latency but not 256 MiB; st.global everywhere
# costs rate (4.41 vs 4.43 TB/s). `stg` 2: bulk stores for the body, st.global for the end tiles (the drain)
def _red23_variants():
    import dataclasses

    from tmakit.kernels import bandwidth as bw

    new = dataclasses.asdict(bw.REDUCE_CONFIG)

    def nv(**kw):
        return dict(new, flat=tuple(dict(new["flat"], **kw).items()))

    l2 = dict(consumers=3, lean=2)
    return [("new", new), ("lean2 c3", nv(**l2)), ("stg2", nv(stg=2)), ("stg2 lean2 c3", nv(stg=2, **l2)),
            ("stg2 lean2 c3 end8M", nv(stg=2, end_bytes=8 << 20, **l2)),
            ("stg2 lean2 c3 end1K", nv(stg=2, end_piece=1024, **l2)),
            ("stg2 4K r9 lean2 c3", nv(stg=2, piece=4096, row=4096, resident=9, **l2)),
            ("stg lean2 c3", nv(stg=1, **l2))]


def _red23():
    _red_fit(_red23_variants(), ("bfloat16", "float32"), (128, 256, 384, 512), "red23", rounds=9)


def _chain():
    """Per-call time at 256 MiB (bf16, f32): events around each call (the harness) vs one event pair around 20
    back-to-back calls (no event between kernels); add_, the default, `stg lean2 c3`; 5 interleaved rounds."""
    import dataclasses
    import statistics

    import torch

    from tmakit import ops
    from tmakit.bench.harness import time_op
    from tmakit.kernels import bandwidth as bw

    save, _ = _saver("chain")
    new = dataclasses.asdict(bw.REDUCE_CONFIG)
    def nv(**kw):
        return bw.CopyConfig(**dict(new, flat=tuple(dict(new["flat"], **kw).items())))

    cfgs = {"new": bw.CopyConfig(**new), "pdl1": nv(pdl=1), "pdl2": nv(pdl=2),
            "stg lean2 c3": nv(consumers=3, lean=2, stg=1), "stg lean2 c3 pdl1": nv(consumers=3, lean=2, stg=1, pdl=1)}

    def chain(fn, k=20):
        fn()
        torch.cuda.synchronize()
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        for _ in range(k):
            fn()
        b.record()
        b.synchronize()
        return a.elapsed_time(b) / k

    for dt in (torch.bfloat16, torch.float32):
        n = (256 << 20) // (2 if dt == torch.bfloat16 else 4)
        d, s_ = torch.randn(n, device="cuda").to(dt), torch.randn(n, device="cuda").to(dt)
        res = {}
        for _r in range(5):
            for name in ["add_"] + list(cfgs):
                if name == "add_":
                    fn = lambda: d.add_(s_)  # noqa: E731
                else:
                    bw.REDUCE_CONFIG = cfgs[name]
                    fn = lambda: ops.reduce_into(d, s_, "add")  # noqa: E731
                res.setdefault((name, "events"), []).append(time_op(lambda i: fn(), 1, reps=20))
                res.setdefault((name, "chain"), []).append(chain(fn))
        for name, c in cfgs.items():  # bit-exact against add_ after the timing (PDL launches included)
            bw.REDUCE_CONFIG = c
            res[(name, "exact")] = [float(_reduce_matches_add(dt, (5, 4097 * 33, (3 << 20) + 5, 64 << 20, 160 << 20),
                                                               spread=40))]
        row = dict(case=f"256 MiB {dt}")
        for (name, how), v in res.items():
            row[f"{name} {how} us"] = round(1e3 * statistics.median(v), 2)
        bw.REDUCE_CONFIG = bw.CopyConfig(**new)
        for name in cfgs:
            for how in ("events", "chain"):
                row[f"{name} {how} ratio"] = round(row[f"add_ {how} us"] / row[f"{name} {how} us"], 4)
        save(row)


# call 51: L2 prefetch of the end tiles only (the drain's loads hit L2; call 43's all-tiles prefetch cost rate)
def _red24_variants():
    import dataclasses

    from tmakit.kernels import bandwidth as bw

    new = dataclasses.asdict(bw.REDUCE_CONFIG)

    def nv(**kw):
        return dict(new, flat=tuple(dict(new["flat"], **kw).items()))

    e = dict(ahead_end=1)
    return [("new", new), ("ahE 660", nv(ahead=660, **e)), ("ahE 1320", nv(ahead=1320, **e)),
            ("ahE 2640", nv(ahead=2640, **e)), ("ahE 1320 end8M", nv(ahead=1320, end_bytes=8 << 20, **e)),
            ("ahE 2640 end8M", nv(ahead=2640, end_bytes=8 << 20, **e)),
            ("ahE 1320 stg2 lean2 c3", nv(ahead=1320, stg=2, consumers=3, lean=2, **e)),
            ("stg lean2 c3", nv(stg=1, consumers=3, lean=2))]


def _red24():
    _red_fit(_red24_variants(), ("bfloat16", "float32"), (128, 256, 384, 512), "red24", rounds=9)


def _micro():
    """Call 53: full-size (256 MiB bf16) runs of call 47's micro-kernels (one 2 KiB tile of each operand per CTA,
    128 threads, bf16x2) against add_ and the default, per call and back to back, 7 interleaved rounds; each checked
    bit-exact against add_ first. Says whether a minimal TMA kernel matches add_ where ours does not."""
    import statistics

    import torch

    from tmakit import cuda as tkc
    from tmakit import ops
    from tmakit.bench.harness import time_chain, time_op

    save, _ = _saver("micro")
    ks = {n: tkc.kernel(LAUNCH_SRC, n) for n in ("lsu_add", "bulk_add", "bulk_add_stg")}
    n = (256 << 20) // 2
    d = [torch.randn(n, device="cuda").to(torch.bfloat16) for _ in range(2)]
    s_ = [torch.randn(n, device="cuda").to(torch.bfloat16) for _ in range(2)]
    grid = n * 2 // 2048
    fns = {"add_": lambda i: d[i].add_(s_[i]), "new": lambda i: ops.reduce_into(d[i], s_[i], "add")}
    for name, k in ks.items():
        for sm in (4096, 16384):
            fns[f"{name} smem{sm}"] = (lambda i, k=k, sm=sm: k((grid, 1, 1), (128, 1, 1), tkc.Ptr(s_[i].data_ptr()),
                                                               tkc.Ptr(d[i].data_ptr()), smem=sm))
    ok = {}
    for name, fn in fns.items():
        a, b = torch.randn(n, device="cuda").to(torch.bfloat16), torch.randn(n, device="cuda").to(torch.bfloat16)
        ref = b.clone()
        ref.add_(a)
        d0, s0 = d[0], s_[0]
        d[0], s_[0] = b, a
        fn(0)
        torch.cuda.synchronize()
        ok[name] = bool(torch.equal(b, ref))
        d[0], s_[0] = d0, s0
    t = {(k, h): [] for k in fns for h in ("call", "b2b")}
    for _r in range(7):
        for name, fn in fns.items():
            t[(name, "call")].append(time_op(fn, 2, reps=20))
            t[(name, "b2b")].append(time_chain(fn, 2, reps=20))
    base = {h: statistics.median(t[("add_", h)]) for h in ("call", "b2b")}
    for name in fns:
        row = dict(case="bf16 256 MiB", impl=name, ok=ok[name])
        for h in ("call", "b2b"):
            us = statistics.median(t[(name, h)])
            row[f"{h}_us"] = round(1e3 * us, 2)
            row[f"{h}_ratio"] = round(base[h] / us, 4)
        save(row)


def _micro2():
    """Call 54: the micro TMA kernel (2 KiB, 4 warps, bf16x2; 1.0015x add_ per call in call 53, ours 0.999) against
    lean configs shaped like it, 256 MiB, per call and back to back, 9 interleaved rounds (f32: the lean ones)."""
    import dataclasses
    import statistics

    import torch

    from tmakit import cuda as tkc
    from tmakit import ops
    from tmakit.bench.harness import time_chain, time_op
    from tmakit.kernels import bandwidth as bw

    save, _ = _saver("micro2")
    new = dataclasses.asdict(bw.REDUCE_CONFIG)

    def nv(x2=1, **kw):
        return bw.CopyConfig(**dict(new, bf16x2=x2, flat=tuple(dict(new["flat"], **kw).items())))

    m = dict(consumers=3, lean=2)
    const = dict(t1_const=1, end_piece=0, end_bytes=0)
    cfgs = {"new": bw.CopyConfig(**new), "l2 x2 const 2K r14": nv(piece=2048, row=2048, resident=14, **m, **const),
            "l2 x2 const 2K r14 nopdl": nv(piece=2048, row=2048, resident=14, pdl=0, **m, **const),
            "l2 x2 const 2K r16": nv(piece=2048, row=2048, resident=16, **m, **const),
            "l2 x2 2K r14 end": nv(piece=2048, row=2048, resident=14, **m),
            "l2 x2 const 3K r11": nv(**m, **const), "l2 x2 3K r11 end": nv(**m)}
    k = tkc.kernel(LAUNCH_SRC, "bulk_add")
    for dt in (torch.bfloat16, torch.float32):
        n = (256 << 20) // (2 if dt == torch.bfloat16 else 4)
        d = [torch.randn(n, device="cuda").to(dt) for _ in range(2)]
        s_ = [torch.randn(n, device="cuda").to(dt) for _ in range(2)]
        fns = {"add_": lambda i: d[i].add_(s_[i])}
        for name, c in cfgs.items():
            fns[name] = (lambda i, c=c: (setattr(bw, "REDUCE_CONFIG", c), ops.reduce_into(d[i], s_[i], "add")))
        if dt == torch.bfloat16:
            for sm in (14336, 16384, 18432):
                fns[f"micro smem{sm}"] = (lambda i, sm=sm: k((n * 2 // 2048, 1, 1), (128, 1, 1), tkc.Ptr(s_[i].data_ptr()),
                                                             tkc.Ptr(d[i].data_ptr()), smem=sm))
        ok = {}
        for name, c in cfgs.items():
            bw.REDUCE_CONFIG = c
            ok[name] = _reduce_matches_add(dt, (5, 4097 * 33, (3 << 20) + 5, 64 << 20, 160 << 20), spread=40)
        t = {(f, h): [] for f in fns for h in ("call", "b2b")}
        for _r in range(9):
            for name, fn in fns.items():
                t[(name, "call")].append(time_op(fn, 2, reps=20))
                t[(name, "b2b")].append(time_chain(fn, 2, reps=20))
        for name in fns:
            row = dict(case=f"{dt} 256 MiB", impl=name, ok=ok.get(name, True))
            for h in ("call", "b2b"):
                row[f"{h}_ratio"] = round(statistics.median(t[("add_", h)]) / statistics.median(t[(name, h)]), 4)
                row[f"{h}_rounds"] = [round(a / b, 4) for a, b in zip(t[("add_", h)], t[(name, h)])]
            save(row)
        bw.REDUCE_CONFIG = bw.CopyConfig(**new)


def _red25():
    """Call 55: the default against the micro-shaped lean CTA (2 KiB, 13 resident, 4 combining warps, bf16x2,
    compile-time tile) through REDUCE_CONFIG as ops uses it, 32 MiB .. 1 GiB, per call and back to back,
    7 interleaved rounds, both dtypes; bit-exact checks first."""
    import dataclasses
    import statistics

    import torch

    from tmakit import ops
    from tmakit.bench.harness import _nsets, time_chain, time_op
    from tmakit.kernels import bandwidth as bw

    save, _ = _saver("red25")
    new = dataclasses.asdict(bw.REDUCE_CONFIG)
    cand = dict(new, bf16x2=1, flat=tuple(dict(new["flat"], piece=2048, row=2048, resident=14, consumers=3, lean=2,
                                                t1_const=1, end_piece=0, end_bytes=0).items()))
    cfgs = {"new": bw.CopyConfig(**new), "micro-shaped": bw.CopyConfig(**cand)}
    for dt in (torch.bfloat16, torch.float32):
        el = 2 if dt == torch.bfloat16 else 4
        for name, c in cfgs.items():
            bw.REDUCE_CONFIG = c
            save(dict(case=f"check {dt}", cfg=name,
                      ok=_reduce_matches_add(dt, (5, 4097 * 33, (3 << 20) + 5, 64 << 20, 160 << 20), spread=40)))
        for mib in (32, 64, 128, 256, 512, 1024):
            n = (mib << 20) // el
            k = _nsets(2 * n * el) if mib < 1024 else 1
            d = [torch.randn(n, device="cuda").to(dt) for _ in range(k)]
            s_ = [torch.randn(n, device="cuda").to(dt) for _ in range(k)]
            fns = {"add_": lambda i: d[i].add_(s_[i])}
            for name, c in cfgs.items():
                fns[name] = (lambda i, c=c: (setattr(bw, "REDUCE_CONFIG", c), ops.reduce_into(d[i], s_[i], "add")))
            t = {(f, h): [] for f in fns for h in ("call", "b2b")}
            for _r in range(7):
                for name, fn in fns.items():
                    t[(name, "call")].append(time_op(fn, k, reps=20))
                    t[(name, "b2b")].append(time_chain(fn, k, reps=20))
            row = dict(case=f"{dt} {mib} MiB", sets=k)
            for name in cfgs:
                for h in ("call", "b2b"):
                    row[f"{name} {h}"] = round(statistics.median(t[("add_", h)]) / statistics.median(t[(name, h)]), 4)
            save(row)
            del d, s_
        bw.REDUCE_CONFIG = bw.CopyConfig(**new)


def _red26():
    """Call 57: the committed default only, reduce add at 256 / 384 / 512 MiB, both dtypes, per call and back to
    back, 9 interleaved rounds against add_ (the spread of the headline ratio on one machine)."""
    import statistics

    import torch

    from tmakit import ops
    from tmakit.bench.harness import time_chain, time_op

    save, _ = _saver("red26")
    for dt in (torch.bfloat16, torch.float32):
        el = 2 if dt == torch.bfloat16 else 4
        for mib in (256, 384, 512):
            n = (mib << 20) // el
            d, s_ = torch.randn(n, device="cuda").to(dt), torch.randn(n, device="cuda").to(dt)
            fns = {"add_": lambda i: d.add_(s_), "tmakit": lambda i: ops.reduce_into(d, s_, "add")}
            t = {(f, h): [] for f in fns for h in ("call", "b2b")}
            for _r in range(9):
                for name, fn in fns.items():
                    t[(name, "call")].append(time_op(fn, 1, reps=20))
                    t[(name, "b2b")].append(time_chain(fn, 1, reps=20))
            row = dict(case=f"{dt} {mib} MiB", path=ops.last_path)
            for h in ("call", "b2b"):
                rr = [a / b for a, b in zip(t[("add_", h)], t[("tmakit", h)])]
                row[f"{h}_ratio_median"] = round(statistics.median(rr), 4)
                row[f"{h}_ratio_min"] = round(min(rr), 4)
                row[f"{h}_ratio_max"] = round(max(rr), 4)
            save(row)
            del d, s_


def _reduce_rounds(variants, d, s_, rounds):
    """Interleaved rounds of ``d.add_(s_)`` and ``reduce_into(d, s_)`` under each REDUCE_CONFIG variant (one buffer
    pair, CUDA events per call): (add_'s median ms, {variant: [median, min, max] of add_ / variant per round})."""
    import statistics

    from tmakit import ops
    from tmakit.bench.harness import time_op
    from tmakit.kernels import bandwidth as bw

    base = bw.REDUCE_CONFIG
    t = {k: [] for k in ["add_", *variants]}
    for _r in range(rounds):
        t["add_"].append(time_op(lambda i: d.add_(s_), 1, reps=20))
        for name, c in variants.items():
            bw.REDUCE_CONFIG = c
            t[name].append(time_op(lambda i: ops.reduce_into(d, s_, "add"), 1, reps=20))
    bw.REDUCE_CONFIG = base
    out = {}
    for name in variants:
        rr = [a / b for a, b in zip(t["add_"], t[name])]
        out[name] = [round(statistics.median(rr), 4), round(min(rr), 4), round(max(rr), 4)]
    return statistics.median(t["add_"]), out


def _flat_with(cfg, **kw):
    """``cfg`` with its ``flat`` overrides updated by ``kw``."""
    import dataclasses

    flat = dict(cfg.flat)
    flat.update(kw)
    return dataclasses.replace(cfg, flat=tuple(flat.items()))


def _torch_launch(fn):
    """(kernel name, grid, block) of each CUDA kernel ``fn()`` launches, from a profiler trace."""
    import tempfile

    import torch

    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
        fn()
        torch.cuda.synchronize()
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "trace.json")
        prof.export_chrome_trace(path)
        ev = json.load(open(path)).get("traceEvents", [])
    return [(e["name"][:120], e.get("args", {}).get("grid"), e.get("args", {}).get("block"))
            for e in ev if e.get("cat") == "kernel"]


def _red28():
    """Call 94: torch's add_ launch shape per dtype (profiler), then shapes of the lean combine CTA against add_,
    bf16 / f32 256 and bf16 384 MiB, per call, 15 interleaved rounds: 1 KiB tiles (26 / 32 per SM: torch-sized
    blocks if its bf16 block moves 1 KiB), evict-first stores (``hint`` 3); and triton's do_bench (L2 flushed
    before each call) as a second timing method for the default."""
    import dataclasses
    import statistics

    import torch

    from tmakit import ops
    from tmakit.bench.harness import burn_in
    from tmakit.kernels import bandwidth as bw

    save, _ = _saver("red28")
    for dt in (torch.bfloat16, torch.float32):
        a = torch.randn(64 << 20, device="cuda").to(dt)
        b = torch.randn(64 << 20, device="cuda").to(dt)
        save(dict(case=f"torch add_ launch {dt} {a.numel()} elements", kernels=_torch_launch(lambda: a.add_(b))))
        del a, b
    burn_in(10)
    base = bw.REDUCE_CONFIG
    vs = {"default": base,
          "1K c1 r27": _flat_with(base, piece=1024, row=1024, consumers=1, resident=27),
          "1K c1 r0": _flat_with(base, piece=1024, row=1024, consumers=1, resident=0, ctas_per_sm=32),
          "1K c3 r27": _flat_with(base, piece=1024, row=1024, resident=27),
          "hint3": dataclasses.replace(base, hint=3)}
    for dt in (torch.bfloat16, torch.float32):
        _check_reduce_variants("bfloat16" if dt == torch.bfloat16 else "float32",
                               [(k, dataclasses.asdict(c)) for k, c in vs.items()], save)
    for dt, mib in ((torch.bfloat16, 256), (torch.bfloat16, 384), (torch.float32, 256)):
        n = (mib << 20) // torch.tensor([], dtype=dt).element_size()
        d, s_ = torch.randn(n, device="cuda").to(dt), torch.randn(n, device="cuda").to(dt)
        add_ms, ratios = _reduce_rounds(vs, d, s_, 15)
        save(dict(case=f"{dt} {mib} MiB", add_us=round(1e3 * add_ms, 2), **ratios))
        del d, s_
    bw.REDUCE_CONFIG = base
    import triton.testing as tt

    for dt in (torch.bfloat16, torch.float32):
        n = (256 << 20) // torch.tensor([], dtype=dt).element_size()
        d, s_ = torch.randn(n, device="cuda").to(dt), torch.randn(n, device="cuda").to(dt)
        rr = []
        for _r in range(9):
            pe = tt.do_bench(lambda: d.add_(s_), warmup=25, rep=100, return_mode="median")
            tk = tt.do_bench(lambda: ops.reduce_into(d, s_, "add"), warmup=25, rep=100, return_mode="median")
            rr.append(pe / tk)
        save(dict(case=f"do_bench {dt} 256 MiB default / add_", median=round(statistics.median(rr), 4),
                  min=round(min(rr), 4), max=round(max(rr), 4)))
        del d, s_


def _red27():
    """Call 92: two untried knobs on the lean combine CTA, bf16 256 / 384 MiB per call, 15 interleaved rounds with
    add_: ``exit_read`` (leave once the bulk store has read smem) and ``hint`` 2 (L2 evict_first on the loads)."""
    import dataclasses

    import torch

    from tmakit import ops
    from tmakit.bench.harness import burn_in
    from tmakit.kernels import bandwidth as bw

    save, _ = _saver("red27")
    burn_in(10)
    base = bw.REDUCE_CONFIG
    vs = {"default": base, "exit_read": dataclasses.replace(base, exit_read=1),
          "hint2": dataclasses.replace(base, hint=2)}
    for mib in (256, 384):
        n = (mib << 20) // 2
        d, s_ = torch.randn(n, device="cuda").to(torch.bfloat16), torch.randn(n, device="cuda").to(torch.bfloat16)
        ok = {}
        for name, c in vs.items():
            bw.REDUCE_CONFIG = c
            ref = d.clone().add_(s_)
            dd = d.clone()
            ops.reduce_into(dd, s_, "add")
            ok[name] = bool(torch.equal(dd, ref))
        save(dict(case=f"bf16 {mib} MiB", ok=ok, **_reduce_rounds(vs, d, s_, 15)[1]))
        del d, s_
    bw.REDUCE_CONFIG = base


def _lsu():
    """Does a plain ld.global.v4 / st.global.v4 copy reach torch's copy_ here? (our TMA copy: 0.95x)"""
    import ctypes

    import torch

    from tmakit import cuda as tkc
    from tmakit import ops
    from tmakit.bench.harness import time_op

    res = []
    n = (1 << 30) // 2
    x = torch.randn(n, device="cuda").to(torch.bfloat16)
    y = torch.empty_like(x)
    n16 = n * 2 // 16
    k1 = tkc.kernel(LSU_SRC, "lsu_copy")
    k2 = tkc.kernel(LSU_SRC, "lsu_copy_blk")
    nsm = torch.cuda.get_device_properties(0).multi_processor_count
    st = torch.cuda.current_stream().cuda_stream
    runs = {
        "torch copy_": lambda i: y.copy_(x),
        "tmakit copy (TMA)": lambda i: ops.copy(x, y),
        "lsu grid-stride 8 blk/SM": lambda i: k1((nsm * 8, 1, 1), (256, 1, 1), tkc.Ptr(x.data_ptr()),
                                                  tkc.Ptr(y.data_ptr()), ctypes.c_int64(n16), stream=st),
        "lsu grid-stride 16 blk/SM": lambda i: k1((nsm * 16, 1, 1), (256, 1, 1), tkc.Ptr(x.data_ptr()),
                                                   tkc.Ptr(y.data_ptr()), ctypes.c_int64(n16), stream=st),
        "lsu block-contiguous": lambda i: k2((-(-n16 // 1024), 1, 1), (256, 1, 1), tkc.Ptr(x.data_ptr()),
                                             tkc.Ptr(y.data_ptr()), ctypes.c_int64(n16), stream=st),
    }
    for kn, kk in (("lsu_blk2", 2), ("lsu_blk8", 8), ("lsu_blk4cs", 4), ("lsu_blk8cs", 8)):
        kx = tkc.kernel(LSU_SRC, kn)
        runs[kn] = (lambda kx, kk: lambda i: kx((-(-n16 // (256 * kk)), 1, 1), (256, 1, 1), tkc.Ptr(x.data_ptr()),
                                                 tkc.Ptr(y.data_ptr()), ctypes.c_int64(n16), stream=st))(kx, kk)
    for name, fn in runs.items():
        y.fill_(0)
        fn(0)
        torch.cuda.synchronize()
        ok = torch.equal(x, y)
        res.append(dict(case=name, ok=ok, ms=[]))
    for _ in range(3):  # interleaved rounds
        for r, fn in zip(res, runs.values()):
            r["ms"].append(time_op(fn, 1, reps=15))
    t = min(res[0]["ms"])
    for r in res:
        r["tbs"] = 2 * n * 2 / min(r["ms"]) / 1e9
        r["vs_torch"] = t / min(r["ms"])
        print("lsu", json.dumps(r), flush=True)
    (OUT / "lsu.json").write_text(json.dumps(res, indent=1))
    # what torch's copy_ / add_ launch (a kernel, or the driver's device-to-device memcpy)
    from torch.profiler import ProfilerActivity, profile

    d = torch.randn(64 << 20, device="cuda")
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        y.copy_(x)
        d.add_(d)
        torch.cuda.synchronize()
    names = sorted({e.name for e in prof.events() if e.device_type.name == "CUDA"})
    print("lsu torch device events:", names, flush=True)
    (OUT / "lsu_torch_events.json").write_text(json.dumps(names))


def _best():
    p = OUT / "sweep.json"
    if not p.exists():
        return {}
    r = json.loads(p.read_text())
    best = {}

    def pick(rows, score):
        keys = {}
        for c in rows:
            if c.get("ok", True):
                keys.setdefault(json.dumps(c["cfg"], sort_keys=True), []).append(score(c))
        if keys:
            return json.loads(max(keys, key=lambda k: sum(keys[k]) / len(keys[k])))
        return None

    for op, score in (("copy", lambda c: c["ratio"]), ("reduce", lambda c: c["ratio"])):
        b = pick(r[op], score)
        if b is not None:
            best[op] = b
    if r.get("permute"):
        b = pick(r["permute"], lambda c: c["ratio"])
        if b is not None:
            best["permute"] = b
    for dt, e in (("torch.bfloat16", 2), ("torch.float32", 4)):
        b = pick([c for c in r["transpose"] if c["dtype"] == dt], lambda c: c["vs_copy"])
        if b is not None:
            best.setdefault("transpose", {})[e] = b
    return best


def _bench(args):
    from tmakit.bench import harness
    from tmakit.kernels import bandwidth as bw

    best = _best()
    if "copy" in best:
        bw.COPY_CONFIG = bw.CopyConfig(**best["copy"])
    if "transpose" in best:
        t = {int(k): bw.TransposeConfig(**v) for k, v in best["transpose"].items()}
        bw.TRANSPOSE_CONFIG = {**bw.TRANSPOSE_CONFIG, **t}
    if "reduce" in best:
        bw.REDUCE_CONFIG = bw.CopyConfig(**best["reduce"])
    if "permute" in best:
        import dataclasses

        bw.COPY_CONFIG = dataclasses.replace(bw.COPY_CONFIG, rest_order=best["permute"].get("rest_order", 0))
    print("configs:", bw.COPY_CONFIG, bw.TRANSPOSE_CONFIG, bw.REDUCE_CONFIG, flush=True)
    which = [a for a in args if a in harness.WORKLOADS] or ["all"]
    result = harness.run_suite(which, None, reps=int(os.environ.get("REPS", "20")))
    result["configs"] = dict(copy=str(bw.COPY_CONFIG), transpose=str(bw.TRANSPOSE_CONFIG), reduce=str(bw.REDUCE_CONFIG))
    (OUT / "bench.json").write_text(json.dumps(result, indent=1))
    md = harness.markdown(result)
    (OUT / "bench.md").write_text(md)
    harness.plot(result, OUT / "bench.png")
    print(md)


def main(argv):
    OUT.mkdir(parents=True, exist_ok=True)
    if argv and argv[0] == "_sweep":
        return _sweep(argv[1])
    if argv and argv[0] == "_bench":
        return _bench(argv[1:])
    if argv and argv[0] == "_host":
        return _host(argv[1])
    if argv and argv[0] == "_tp":
        return _tp()
    if argv and argv[0] == "_tp4":
        return _tp4()
    if argv and argv[0] == "_lsu":
        return _lsu()
    if argv and argv[0] == "_tp6":
        return _tp6()
    if argv and argv[0] == "_tp7":
        return _tp7()
    if argv and argv[0] == "_hint":
        return _hint()
    if argv and argv[0] == "_dyn":
        return _dyn()
    if argv and argv[0] == "_tpc":
        return _tpc()
    if argv and argv[0] == "_red2":
        return _red2()
    if argv and argv[0] == "_dyn3":
        return _dyn3()
    if argv and argv[0] == "_red3":
        return _red3()
    if argv and argv[0] == "_red4":
        return _red4()
    if argv and argv[0] == "_red5":
        return _red5()
    if argv and argv[0] == "_red6":
        return _red6()
    if argv and argv[0] == "_red7":
        return _red7()
    if argv and argv[0] == "_red8":
        return _red8()
    if argv and argv[0] == "_red9":
        return _red9()
    if argv and argv[0] == "_red10":
        return _red10()
    if argv and argv[0] == "_red11":
        return _red11()
    if argv and argv[0] == "_red12":
        return _red12()
    if argv and argv[0] == "_red13":
        return _red13()
    if argv and argv[0] == "_red14":
        return _red14()
    if argv and argv[0] == "_red15":
        return _red15()
    if argv and argv[0] == "_red16":
        return _red16()
    if argv and argv[0] == "_red18":  # call 42: the chosen default against session 5's and the runner-up
        return _red17(_red18_variants(), "red18", 7, (32, 64, 128, 256, 512, 1024, 4096))
    if argv and argv[0] == "_red21":
        return _red21()
    if argv and argv[0] == "_red20":
        return _red20()
    if argv and argv[0] == "_red19":
        return _red19()
    if argv and argv[0] == "_red17":
        return _red17()
    if argv and argv[0] == "_perm14":
        return _perm14()
    if argv and argv[0] == "_lean18":
        return _lean18()
    if argv and argv[0] == "_tp12":
        return _tp12()
    if argv and argv[0] == "_red28":
        return _red28()
    if argv and argv[0] == "_red27":
        return _red27()
    if argv and argv[0] == "_accept":
        return _accept()
    if argv and argv[0] == "_fd16":
        return _fd16()
    if argv and argv[0] == "_tp16":  # call 83: multiply-shift tile coordinates (default) vs the div sequence
        return _tp12([("div (old)", dict(coords=1))], "tp16", rounds=11)
    if argv and argv[0] == "_tp15":  # call 81: the cost of the coordinate math and of the transposition (wrong output)
        return _tp12([("coords9 (wrong)", dict(coords=9)), ("x9 (wrong)", dict(xpose=9)),
                      ("coords9 x9 (wrong)", dict(coords=9, xpose=9)), ("c2", dict(consumers=2))], "tp15",
                     ok_skip=("x9",), cases=[((32, 64, 128, 128), (0, 3, 1, 2))], rounds=11)
    if argv and argv[0] == "_tp14":  # call 79: where the transposing permute's time goes (xpose 9: no transposition)
        return _tp12([("x9 (wrong)", dict(xpose=9)), ("c1", dict(consumers=1)), ("c2", dict(consumers=2)),
                      ("c8", dict(consumers=8)), ("kq2 r8", dict(kq=2, resident=8)),
                      ("kq2 x9 (wrong)", dict(kq=2, resident=8, xpose=9))], "tp14", ok_skip=("x9",))
    if argv and argv[0] == "_tp13":  # call 75: the in-place lean transpose (one image per CTA)
        return _tp12([("kq1 r13", dict(kq=1, resident=14)), ("ip kq2 r8", dict(inplace=1, resident=8)),
                      ("ip kq2 r10", dict(inplace=1, resident=10)), ("ip kq2 r12", dict(inplace=1, resident=12)),
                      ("ip kq1 r16", dict(inplace=1, kq=1, resident=16)),
                      ("ip kq1 r24", dict(inplace=1, kq=1, resident=24))], "tp13")
    if argv and argv[0] == "_tp11":
        return _tp11()
    if argv and argv[0] == "_perm17":
        return _perm17()
    if argv and argv[0] == "_perm16":  # call 68: longer runs / shorter CTAs for the strided (0,2,1,3) permute
        return _perm15(_perm16_variants(), "perm16")
    if argv and argv[0] == "_tp10":
        return _tp10()
    if argv and argv[0] == "_tp9":
        return _tp9()
    if argv and argv[0] == "_tp8":
        return _tp8()
    if argv and argv[0] == "_perm15":
        return _perm15()
    if argv and argv[0] == "_red26":
        return _red26()
    if argv and argv[0] == "_red25":
        return _red25()
    if argv and argv[0] == "_micro2":
        return _micro2()
    if argv and argv[0] == "_micro":
        return _micro()
    if argv and argv[0] == "_red24":
        return _red24()
    if argv and argv[0] == "_chain":
        return _chain()
    if argv and argv[0] == "_red23":
        return _red23()
    if argv and argv[0] == "_red22":
        return _red22()
    if argv and argv[0] == "_launch":
        return _launch()
    if argv and argv[0] == "_ncut2":
        return _ncut2()
    if argv and argv[0] == "_ncut":
        return _ncut()
    todo = argv or ["tests", "sweep", "bench"]
    py = sys.executable
    subprocess.run(
        ["nvidia-smi", "--query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu", "--format=csv"],
        check=False,
    )
    if "tests" in todo:
        phase(
            "pytest",
            [
                py,
                "-m",
                "pytest",
                "-q",
                "-p",
                "no:cacheprovider",
                "tests/test_ops_gpu.py",
                "tests/test_kernels_bandwidth.py",
                "tests/test_ops_args.py",
                "tests/test_ops_fast.py",
                "tests/test_bench_harness.py",
            ],
            int(os.environ.get("T_TESTS", 150)),
        )
    if "host" in todo:  # HEAD's package (.oldsrc/src, when carried) against this tree, one process each
        if (ROOT / ".oldsrc" / "src").exists():
            phase("host_old", [py, __file__, "_host", "old"], int(os.environ.get("T_HOST", 60)), ROOT / ".oldsrc" / "src")
        phase("host_new", [py, __file__, "_host", "new"], int(os.environ.get("T_HOST", 60)))
    if "tp" in todo:
        phase("tp", [py, "-X", "faulthandler", __file__, "_tp"], int(os.environ.get("T_TP", 120)))
    if "tp4" in todo:
        phase("tp4", [py, "-X", "faulthandler", __file__, "_tp4"], int(os.environ.get("T_TP4", 180)))
    if "tp6" in todo:
        phase("tp6", [py, "-X", "faulthandler", __file__, "_tp6"], int(os.environ.get("T_TP6", 240)))
    if "tp7" in todo:
        phase("tp7", [py, "-X", "faulthandler", __file__, "_tp7"], int(os.environ.get("T_TP7", 240)))
    if "hint" in todo:
        phase("hint", [py, __file__, "_hint"], int(os.environ.get("T_HINT", 240)))
    if "dyn" in todo:
        phase("dyn", [py, __file__, "_dyn"], int(os.environ.get("T_DYN", 240)))
    if "tpc" in todo:
        phase("tpc", [py, __file__, "_tpc"], int(os.environ.get("T_TPC", 280)))
    if "red2" in todo:
        phase("red2", [py, __file__, "_red2"], int(os.environ.get("T_RED2", 280)))
    if "dyn3" in todo:
        phase("dyn3", [py, "-X", "faulthandler", __file__, "_dyn3"], int(os.environ.get("T_DYN3", 240)))
    if "red3" in todo:
        phase("red3", [py, __file__, "_red3"], int(os.environ.get("T_RED3", 200)))
    if "red28" in todo:
        phase("red28", [py, __file__, "_red28"], int(os.environ.get("T_RED28", 420)))
    if "red27" in todo:
        phase("red27", [py, __file__, "_red27"], int(os.environ.get("T_RED27", 400)))
    if "accept" in todo:
        phase("accept", [py, __file__, "_accept"], int(os.environ.get("T_ACCEPT", 400)))
    if "tp16" in todo:
        phase("tp16", [py, __file__, "_tp16"], int(os.environ.get("T_TP16", 400)))
    if "fd16" in todo:
        phase("fd16", [py, __file__, "_fd16"], int(os.environ.get("T_FD16", 400)))
    if "tp15" in todo:
        phase("tp15", [py, __file__, "_tp15"], int(os.environ.get("T_TP15", 400)))
    if "tp14" in todo:
        phase("tp14", [py, __file__, "_tp14"], int(os.environ.get("T_TP14", 400)))
    if "tp13" in todo:
        phase("tp13", [py, __file__, "_tp13"], int(os.environ.get("T_TP13", 400)))
    if "tp12" in todo:
        phase("tp12", [py, __file__, "_tp12"], int(os.environ.get("T_TP12", 400)))
    if "lean18" in todo:
        phase("lean18", [py, __file__, "_lean18"], int(os.environ.get("T_LEAN18", 400)))
    if "lsu" in todo:
        phase("lsu", [py, __file__, "_lsu"], int(os.environ.get("T_LSU", 60)))
    if "ncu" in todo:
        phase("ncu", ["ncu", "--clock-control", "none", "--profile-from-start", "off", "--metrics", NCU_METRICS,
                      "--csv", "--log-file", str(OUT / "ncu.csv"), py, __file__, "_ncut"],
              int(os.environ.get("T_NCU", 120)))
        if (OUT / "ncu.csv").exists():
            print((OUT / "ncu.csv").read_text()[-6000:])
    if "sweep" in todo:
        for w in os.environ.get("SWEEP", "copy,transpose,permute,reduce").split(","):
            phase(f"sweep_{w}", [py, __file__, "_sweep", w], int(os.environ.get(f"T_SWEEP_{w}", os.environ.get("T_SWEEP", 70))))
    if "bench" in todo:
        phase(
            "bench",
            [py, __file__, "_bench"] + [a for a in todo if a not in ("tests", "sweep", "bench")],
            int(os.environ.get("T_BENCH", 240)),
        )
    for f in sorted(OUT.glob("host_*.json")):
        for r in json.loads(f.read_text()):
            print(f"host {r['label']:4s} {r['case']:40s} {r['us']:7.2f} us {r['path']}")
    for f in (OUT / "tp4.json", OUT / "tp6.json", OUT / "tp7.json", OUT / "hint.json", OUT / "dyn.json",
              OUT / "tpc.json", OUT / "red2.json", OUT / "dyn3.json", OUT / "red3.json",
              OUT / "lsu.json"):
        if f.exists():
            for r in json.loads(f.read_text()):
                keys = ("ok", "queued", "tbs", "us", "copy_us", "vs_copy", "ratio", "rounds", "vs_copy_same",
                        "vs_ceiling", "vs_torch", "error")
                vals = " ".join(f"{k}={r[k]:.3f}" if isinstance(r[k], float) else f"{k}={r[k]}" for k in keys if k in r)
                print(f.stem, r["case"][-26:], json.dumps(r.get("cfg", "")), vals)
    tpf = OUT / "tp.json"
    if tpf.exists():
        for r in json.loads(tpf.read_text()):
            keys = ("ok", "queued", "tbs", "us", "vs_copy", "vs_copy_same", "vs_ceiling", "vs_torch", "error")
            vals = " ".join(f"{k}={r[k]:.3f}" if isinstance(r[k], float) else f"{k}={r[k]}" for k in keys if k in r)
            print("tp", r["case"][-28:], json.dumps(r["cfg"]), vals)
    for f in sorted(OUT.glob("sweep_*.json")):
        for r in json.loads(f.read_text()):
            keys = ("ok", "path", "tbs", "ratio", "vs_copy", "vs_copy_same", "vs_ceiling", "host_us", "peer_tbs", "us", "peer_us")
            vals = " ".join(f"{k}={r[k]:.3f}" if isinstance(r[k], float) else f"{k}={r[k]}" for k in keys if k in r)
            print(f.stem[6:], r.get("dtype", r.get("case", ""))[-22:], json.dumps(r["cfg"]), vals)
    bm = OUT / "bench.md"
    if bm.exists():
        print(bm.read_text())


if __name__ == "__main__":
    main(sys.argv[1:])
