"""One device call for the GEMM: correctness, then timing against cuBLAS, JSON under $OUT, a short table last.

    python3 tools/bench/gemm_device.py                 # everything (each phase in a child process with a timeout)
    python3 tools/bench/gemm_device.py check|bench|race|debug|names
    GEMM_CHECK_CONFIGS=a,b GEMM_BENCH_CONFIGS=c,d GEMM_RACE_CONFIGS=e python3 tools/bench/gemm_device.py  # subsets

check: random shapes (tile remainders in M, N, K), bf16/fp16 inputs, bf16/fp16/fp32 outputs, every config;
       reference = fp32 torch matmul of the same inputs; error = ||C - ref|| / ||ref||; outputs are poisoned with
       NaN first and a padded out= view checks that nothing is written outside the (M, N) window.
bench: the issue's shape suite, each config and torch.matmul (cuBLAS) in the same run, medians of
       triton.testing.do_bench (CUDA events fallback); plus the relative error of every timed config.
race:  compute-sanitizer racecheck + synccheck on one small problem.
debug: only if check timed out: a small problem with TMAKIT_DEBUG=1 (barrier waits time out and report).
names: the kernels cuBLAS runs for each suite shape (torch.profiler), to compare tile shapes and split strategies.
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "src"))
OUT = Path(os.environ.get("OUT", "/tmp/gemm_out"))
OUT.mkdir(parents=True, exist_ok=True)

SUITE = [(4096, 4096, 4096), (8192, 8192, 8192), (8192, 7168, 2048), (4096, 18432, 7168), (4096, 7168, 16384),
         (2048, 4096, 14336), (128, 8192, 8192), (1024, 1024, 65536)]
CHECK_SHAPES = [(128, 256, 64), (256, 512, 1024), (1, 8, 8), (100, 200, 72), (129, 264, 136), (333, 520, 1000),
                (1000, 1000, 1000), (64, 4096, 8), (2048, 2048, 4096), (127, 255 + 1, 4104), (4100, 136, 520)]
# extra (config, split) variants timed on the few-tile shapes
EXTRAS = {
    (128, 8192, 8192): [("n64_s8_c1", 1), ("n64_s8_n2", 1), ("n64_s8_n4", 1), ("n128_s6_n2", 2), ("n128_s6_n4", 2),
                        ("n128_s6_c1", 2), ("n256_s4_c1", 4)],
    (1024, 1024, 65536): [("n256_s4_c2", 4), ("n256_s4_c1", 4), ("n256_s4_c2n2", 4), ("n128_s6_n2", 2),
                          ("n128_s6_n4", 2), ("n128_s6_c2", 4)],
}


def _names(var: str, default) -> list:
    v = os.environ.get(var)
    return [x for x in v.split(",") if x] if v else list(default)
TOL = {"bfloat16": 1e-2, "float16": 4e-3, "float32": 1e-4}


def rel_err(c, ref) -> float:
    import torch

    return float(torch.linalg.vector_norm(c.float() - ref) / torch.linalg.vector_norm(ref).clamp_min(1e-30))


def inputs(m, n, k, dtype, seed=0):
    import torch

    g = torch.Generator(device="cuda").manual_seed(seed)
    a = torch.randn(m, k, device="cuda", dtype=dtype, generator=g)
    w = torch.randn(n, k, device="cuda", dtype=dtype, generator=g)
    return a, w


def phase_check() -> dict:
    import torch
    from tmakit.ops_gemm import gemm

    from tmakit.kernels.gemm import CONFIGS

    rows, fails = [], 0
    for cname in _names("GEMM_CHECK_CONFIGS", CONFIGS):
        for i, (m, n, k) in enumerate(CHECK_SHAPES):
            for dt, bl in [(d, b) for d in (torch.bfloat16, torch.float16) for b in ("nk", "kn")]:
                if dt == torch.float16 and cname.startswith("n128"):
                    continue
                a, w = inputs(m, n, k, dt, seed=i)
                ref = a.float() @ w.float().t()
                b = w.t() if bl == "nk" else w.t().contiguous()
                for od in (torch.bfloat16, torch.float16, torch.float32):
                    if dt == torch.float16 and od == torch.bfloat16 and i % 2:
                        continue
                    # padded out view: columns [n, n + 8) must stay NaN
                    buf = torch.full((m, n + 8), float("nan"), device="cuda", dtype=od)
                    out = buf[:, :n]
                    t0 = time.time()
                    try:
                        gemm(a, b, out=out, config=cname)
                        torch.cuda.synchronize()
                    except Exception as ex:  # noqa: BLE001 - record and go on (a sticky CUDA error ends the phase)
                        print("ERROR", cname, (m, n, k), dt, od, repr(ex)[:300], flush=True)
                        fails += 1
                        rows.append(dict(config=cname, m=m, n=n, k=k, error=repr(ex)[:300], ok=False))
                        if "CUDA" in repr(ex) and "illegal" in repr(ex).lower():
                            raise
                        continue
                    e = rel_err(out, ref)
                    nan_in = int(torch.isnan(out).sum())
                    pad_ok = bool(torch.isnan(buf[:, n:]).all())
                    ok = e < TOL[str(od).split(".")[-1]] and nan_in == 0 and pad_ok
                    fails += not ok
                    rows.append(dict(config=cname, b_layout=bl, m=m, n=n, k=k, in_dtype=str(dt).split(".")[-1],
                                     out_dtype=str(od).split(".")[-1], rel_err=e, nan_in_output=nan_in,
                                     pad_untouched=pad_ok, ok=ok, s=round(time.time() - t0, 3)))
                    if not ok:
                        print("FAIL", rows[-1], flush=True)
    # explicit split-K (fp32 atomics into out, or an fp32 workspace for 16-bit outputs)
    for i, (m, n, k) in enumerate([(129, 264, 1000), (64, 4096, 520), (300, 136, 4104)]):
        a, w = inputs(m, n, k, torch.bfloat16, seed=50 + i)
        ref = a.float() @ w.float().t()
        for split in (2, 3, 7):
            for od in (torch.bfloat16, torch.float32):
                buf = torch.full((m, n + 8), float("nan"), device="cuda", dtype=od)
                out = buf[:, :n]
                gemm(a, w.t() if split != 3 else w.t().contiguous(), out=out, split=split)
                torch.cuda.synchronize()
                e = rel_err(out, ref)
                pad_ok = bool(torch.isnan(buf[:, n:]).all())
                ok = e < TOL[str(od).split(".")[-1]] and not torch.isnan(out).any() and pad_ok
                fails += not ok
                rows.append(dict(config="auto", split=split, m=m, n=n, k=k, in_dtype="bfloat16",
                                 out_dtype=str(od).split(".")[-1], rel_err=e, pad_untouched=pad_ok, ok=ok))
                if not ok:
                    print("FAIL", rows[-1], flush=True)
    # default path (no out=, no config) and fp16 default out dtype
    a, w = inputs(300, 264, 200, torch.float16, seed=99)
    c = gemm(a, w.t())
    e = rel_err(c, a.float() @ w.float().t())
    rows.append(dict(config="default", m=300, n=264, k=200, in_dtype="float16", out_dtype=str(c.dtype), rel_err=e,
                     ok=e < TOL["float16"] and c.dtype == torch.float16))
    fails += not rows[-1]["ok"]
    print(f"check: {len(rows)} cases, {fails} failures; max rel_err by out dtype:",
          {od: max(r["rel_err"] for r in rows if r["out_dtype"].endswith(od)) for od in ("bfloat16", "float16",
                                                                                            "float32")}, flush=True)
    return dict(cases=rows, failures=fails)


def _bench(fn) -> float:
    try:
        from triton.testing import do_bench

        return float(do_bench(fn, warmup=25, rep=200, return_mode="median"))
    except ImportError:  # pragma: no cover
        import torch

        for _ in range(5):
            fn()
        ts = []
        for _ in range(30):
            s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            s.record()
            fn()
            e.record()
            e.synchronize()
            ts.append(s.elapsed_time(e))
        return sorted(ts)[len(ts) // 2]


def _graph_ms(fn, n=20) -> float:
    """Milliseconds per call of ``fn`` replayed from a CUDA graph of ``n`` back-to-back calls (no host cost)."""
    from tmakit.bench import timing

    return timing.replay_ms(timing.capture(lambda i: fn(), 1, n), n)


def _bench_shape(m, n, k, configs) -> dict:
    import torch
    from tmakit.ops_gemm import gemm

    a, w = inputs(m, n, k, torch.bfloat16, seed=m + n + k)
    b = w.t()
    ref = a.float() @ w.float().t()
    flop = 2.0 * m * n * k
    row = dict(m=m, n=n, k=k)
    row["cublas_rel_err"] = rel_err(torch.matmul(a, b), ref)
    row["cublas_ms"] = _bench(lambda: torch.matmul(a, b))
    row["cublas_tflops"] = flop / row["cublas_ms"] / 1e9
    out = torch.empty(m, n, device="cuda", dtype=torch.bfloat16)
    from tmakit.kernels.gemm import plan

    variants = [(c, None) for c in configs] + EXTRAS.get((m, n, k), [])
    for cname, split in variants:
        cfg = None if cname == "auto" else cname
        key = cname if split is None else f"{cname}/s{split}"
        p = plan(a, b, out, config=cfg, split=split)
        out.fill_(float("nan"))
        gemm(a, b, out=out, config=cfg, split=split)
        torch.cuda.synchronize()
        err = rel_err(out, ref)
        ms = _bench(lambda: gemm(a, b, out=out, config=cfg, split=split))  # noqa: B023
        row[key] = dict(ms=ms, tflops=flop / ms / 1e9, ratio=row["cublas_ms"] / ms, rel_err=err,
                        config=p.config.name, split=p.split)
        if split is not None:
            print(f"  {m}x{n}x{k} {key}: {row[key]['tflops']:.0f} TF {row[key]['ratio']:.3f}x", flush=True)
    # row-major (K, N) B, default config, against cuBLAS on the same operands
    bkn = b.contiguous()
    ms_c = _bench(lambda: torch.matmul(a, bkn))
    gemm(a, bkn, out=out)
    torch.cuda.synchronize()
    err = rel_err(out, ref)
    ms = _bench(lambda: gemm(a, bkn, out=out))
    row["auto_kn"] = dict(ms=ms, tflops=flop / ms / 1e9, ratio=ms_c / ms, rel_err=err, cublas_ms=ms_c)
    # CUDA-graph replay (no host overhead), default config vs cuBLAS
    try:
        g_c = _graph_ms(lambda: torch.matmul(a, b))
        g_t = _graph_ms(lambda: gemm(a, b, out=out))
        row["graph"] = dict(cublas_ms=g_c, tmakit_ms=g_t, ratio=g_c / g_t, tflops=flop / g_t / 1e9)
    except Exception as ex:  # noqa: BLE001
        row["graph"] = dict(error=repr(ex)[:300])
    return row


def phase_bench() -> dict:
    import torch

    from tmakit.kernels.gemm import CONFIGS

    res = []
    for (m, n, k) in SUITE:
        try:
            row = _bench_shape(m, n, k, [*_names("GEMM_BENCH_CONFIGS", CONFIGS), "auto"])
        except Exception as ex:  # noqa: BLE001 - one shape failing must not lose the others
            print("BENCH ERROR", (m, n, k), repr(ex)[:300], flush=True)
            continue
        torch.cuda.empty_cache()
        res.append(row)
        g = row.get("graph", {})
        print(f"{m}x{n}x{k}: cublas {row['cublas_tflops']:.0f} TF; auto {row['auto']['tflops']:.0f} TF "
              f"({row['auto']['ratio']:.3f}x, {row['auto']['config']} split {row['auto']['split']}); "
              f"kn {row['auto_kn']['ratio']:.3f}x; graph {g.get('ratio', float('nan')):.3f}x", flush=True)
    return dict(rows=res)


RACE_SRC = """
import sys; sys.path.insert(0, %r)
import torch
from tmakit.ops_gemm import gemm
m, n, k, sk = %r
a = torch.randn(m, k, device='cuda', dtype=torch.bfloat16)
w = torch.randn(n, k, device='cuda', dtype=torch.bfloat16)
c = gemm(a, w.t(), config=%r, stream_k=sk); torch.cuda.synchronize()
print('race-run rel_err', float((c.float() - a.float() @ w.float().t()).norm() / (a.float() @ w.float().t()).norm()))
"""


def phase_race() -> dict:
    out = {}
    shape = tuple(int(x) for x in os.environ.get("GEMM_RACE_SHAPE", "200,136,136").split(","))
    sk = os.environ.get("GEMM_RACE_STREAM_K", "auto")
    for cfg in _names("GEMM_RACE_CONFIGS", [None]):
        for tool in ("racecheck", "synccheck"):
            t0 = time.time()
            name = f"{tool}:{cfg or 'auto'}:{shape}:{sk}"
            try:
                cmd = ["compute-sanitizer", "--tool", tool, sys.executable, "-c",
                       RACE_SRC % (str(ROOT / "src"), (*shape, sk), cfg)]
                r = subprocess.run(cmd, capture_output=True, text=True, timeout=150)
                txt = (r.stdout + r.stderr)[-3000:]
                out[name] = dict(rc=r.returncode, tail=txt, s=round(time.time() - t0, 1))
            except Exception as e:  # noqa: BLE001
                out[name] = dict(rc=None, tail=repr(e))
            print(name, out[name].get("rc"), out[name]["tail"][-400:], flush=True)
    return out


AB_VARIANTS = {  # name -> gemm kwargs; timed alternating with cuBLAS (L2 flushed, rotated inputs)
    "auto": {}, "sk_off": dict(stream_k="off"),
}
AB_EXTRA = {(128, 8192, 8192): {"n64": dict(config="n64_s8_c1"), "n64_n2": dict(config="n64_s8_n2"),
                                "m64c2": dict(config="m64_n128_s8_c2"),
                                "m64c2o": dict(config="m64_n128_s8_c2_ov1"),
                                "m64c1o": dict(config="m64_n128_s8_c1_ov1"),
                                "m64n256c2o": dict(config="m64_n256_s5_c2_ov1"),
                                "m64n256c1o_s2": dict(config="m64_n256_s5_c1_ov1", split=2)},
            (1024, 1024, 65536): {"c1_s4": dict(config="n256_s4_c1", split=4),
                                  "m64c2o": dict(config="m64_n128_s8_c2_ov1", split=1),
                                  "m64c1o": dict(config="m64_n128_s8_c1_ov1", split=1),
                                  "m64n256c1o_s2": dict(config="m64_n256_s5_c1_ov1", split=2)}}


def _ab_shapes() -> list:
    """GEMM_AB_SHAPES="m,n,k;m,n,k" (default: the suite). GEMM_AB_VARIANTS='{"MxNxK" or "*": {name: gemm kwargs}}'
    replaces AB_EXTRA."""
    v = os.environ.get("GEMM_AB_SHAPES")
    return [tuple(int(x) for x in s.split(",")) for s in v.split(";") if s] if v else SUITE


def phase_ab() -> dict:
    """Variants of tmakit against cuBLAS, calls interleaved, each after an L2 flush; then CUDA-graph replays."""
    import torch
    from tmakit.ops_gemm import gemm

    from tmakit.bench import gemm as bg
    from tmakit.bench import timing as bt

    flush = torch.empty(bg.FLUSH_BYTES // 4, dtype=torch.int32, device="cuda")
    bt.spin_up()
    rows = []
    for (m, n, k) in _ab_shapes():
        nsets = bt.nsets((m * k + k * n + m * n) * 2)
        a_s = [torch.randn(m, k, device="cuda", dtype=torch.bfloat16) for _ in range(nsets)]
        b_s = [torch.randn(n, k, device="cuda", dtype=torch.bfloat16).t() for _ in range(nsets)]
        c_s = [torch.empty(m, n, device="cuda", dtype=torch.bfloat16) for _ in range(nsets)]
        ref = a_s[0].float() @ b_s[0].float()
        extra = json.loads(os.environ["GEMM_AB_VARIANTS"]) if "GEMM_AB_VARIANTS" in os.environ else None
        variants = {**AB_VARIANTS, **(AB_EXTRA.get((m, n, k), {}) if extra is None else extra.get(f"{m}x{n}x{k}",
                                                                                              extra.get("*", {})))}
        fns = {"cublas": lambda i: torch.matmul(a_s[i], b_s[i], out=c_s[i])}  # noqa: B023
        row = dict(m=m, n=n, k=k)
        for name, kw in variants.items():
            if isinstance(kw.get("config"), dict):  # an ad-hoc GemmConfig from the JSON
                from tmakit.kernels.gemm import GemmConfig

                kw = {**kw, "config": GemmConfig(**kw["config"])}
            fns[name] = (lambda kw: lambda i: gemm(a_s[i], b_s[i], out=c_s[i], **kw))(kw)  # noqa: B023
            c_s[0].fill_(float("nan"))
            fns[name](0)
            torch.cuda.synchronize()
            row[f"{name}_err"] = rel_err(c_s[0], ref)
        del ref
        times = bt.time_events(list(fns.values()), nsets, flush, 10, 40)
        flop = 2.0 * m * n * k
        for (name, _), ms in zip(fns.items(), times):
            row[f"{name}_ms"] = ms
            row[f"{name}_tf"] = flop / ms / 1e9
        calls = max(3, min(100, math.ceil(20.0 / min(times))))
        for name in os.environ.get("GEMM_AB_GRAPH", "cublas,auto,sk_off").split(","):
            try:
                g = bt.capture(fns[name], nsets, calls)
                (row[f"{name}_graph_ms"],) = bt.time_graphs([g], calls, flush, 7)
                del g
            except Exception as ex:  # noqa: BLE001
                row[f"{name}_graph_error"] = repr(ex)[:200]
        cells = " ".join(f"{nm} {row['cublas_ms'] / row[nm + '_ms']:.3f}" for nm in fns if nm != "cublas")
        gcells = " ".join(f"{nm} {row['cublas_graph_ms'] / row[nm + '_graph_ms']:.3f}" for nm in fns
                          if nm + "_graph_ms" in row and "cublas_graph_ms" in row)
        print(f"{m}x{n}x{k}: cublas {row['cublas_tf']:.0f} TF | events {cells} | graph {gcells} | "
              f"err {max(v for kk, v in row.items() if kk.endswith('_err')):.1e}", flush=True)
        rows.append(row)
        fns.clear()
        torch.cuda.empty_cache()
    for key in ["auto", "sk_off"]:
        ev = [r["cublas_ms"] / r[f"{key}_ms"] for r in rows]
        gr = [r["cublas_graph_ms"] / r[f"{key}_graph_ms"] for r in rows if f"{key}_graph_ms" in r]
        print(f"geomean {key}: events {math.exp(sum(map(math.log, ev)) / len(ev)):.3f} min {min(ev):.3f}; graph "
              f"{math.exp(sum(map(math.log, gr)) / max(1, len(gr))):.3f}", flush=True)
    return dict(rows=rows)


def phase_names() -> dict:
    """cuBLAS kernel names (and their share of the time) per suite shape, from torch.profiler."""
    import torch
    from torch.profiler import ProfilerActivity, profile

    res = {}
    for (m, n, k) in SUITE:
        a, w = inputs(m, n, k, torch.bfloat16)
        b = w.t()
        torch.matmul(a, b)
        torch.cuda.synchronize()
        with profile(activities=[ProfilerActivity.CUDA]) as prof:
            for _ in range(3):
                torch.matmul(a, b)
            torch.cuda.synchronize()
        names = sorted({e.key for e in prof.key_averages() if e.device_type.name == "CUDA"})
        res[f"{m}x{n}x{k}"] = names
        print(f"{m}x{n}x{k}:", " | ".join(x[:140] for x in names), flush=True)
    return res


def phase_debug() -> dict:
    import torch

    os.environ["TMAKIT_DEBUG"] = "1"
    from tmakit.kernels import gemm as gk

    a, w = inputs(256, 512, 256, torch.bfloat16)
    out = torch.empty(256, 512, device="cuda", dtype=torch.bfloat16)
    p = gk.plan(a, w.t(), out)
    gk.launch(p, a.data_ptr(), w.data_ptr(), out.data_ptr(), debug=True)
    torch.cuda.synchronize()
    return dict(rel_err=rel_err(out, a.float() @ w.float().t()))


def env() -> dict:
    import torch

    info = dict(date=time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime()), torch=torch.__version__,
                device=torch.cuda.get_device_name(), python=sys.version.split()[0])
    try:
        info["commit"] = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True,
                                        text=True).stdout.strip()
    except Exception:  # noqa: BLE001
        pass
    try:
        import triton

        info["triton"] = triton.__version__
    except ImportError:
        pass
    from tmakit.cuda.nvrtc import compiler_id

    info["compiler"] = compiler_id()
    info["nvidia_smi"] = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version,clocks.sm,clocks.max.sm,"
                                         "power.draw,temperature.gpu", "--format=csv,noheader"],
                                        capture_output=True, text=True).stdout.strip()
    return info


def child(phase: str, timeout: int) -> dict:
    """Run a phase in a child process (a hung kernel then costs only ``timeout`` seconds)."""
    f = OUT / f"gemm_{phase}.json"
    t0 = time.time()
    try:
        r = subprocess.run([sys.executable, __file__, phase], timeout=timeout, capture_output=True, text=True)
        log = r.stdout + r.stderr
        rc = r.returncode
    except subprocess.TimeoutExpired as e:
        log = (e.stdout or b"").decode(errors="replace") + (e.stderr or b"").decode(errors="replace")
        rc = "timeout"
    print(f"--- {phase}: rc={rc} in {time.time() - t0:.0f}s\n{log[-2500:]}", flush=True)
    got = json.loads(f.read_text()) if f.exists() else {}
    got["rc"], got["log_tail"] = rc, log[-4000:]
    return got


def main() -> None:
    if len(sys.argv) > 1:
        phase = sys.argv[1]
        res = {"check": phase_check, "bench": phase_bench, "race": phase_race, "debug": phase_debug,
               "names": phase_names, "ab": phase_ab}[phase]()
        (OUT / f"gemm_{phase}.json").write_text(json.dumps(res, indent=1))
        return
    t0 = time.time()
    report = dict(env=env())
    report["names"] = child("names", 90)
    report["check"] = chk = child("check", 240)
    if chk["rc"] == "timeout":
        report["debug"] = child("debug", 90)
    if chk["rc"] == 0:  # failures are listed; the timing still says what the layouts cost
        report["bench"] = child("bench", int(os.environ.get("GEMM_BENCH_TIMEOUT", 240)))
        if time.time() - t0 < int(os.environ.get("GEMM_RACE_BEFORE", 330)):
            report["race"] = child("race", 200)
    (OUT / "gemm_report.json").write_text(json.dumps(report, indent=1))
    # short table last
    print("\n== env", report["env"])
    print(f"== check: rc={chk['rc']} failures={chk.get('failures')} cases={len(chk.get('cases', []))}")
    bench = report.get("bench", {})
    from tmakit.kernels.gemm import CONFIGS

    names = [*_names("GEMM_BENCH_CONFIGS", CONFIGS), "auto", "auto_kn"]
    print("shape (MxNxK)        cuBLAS TF  " + "  ".join(f"{c:>18}" for c in names))
    ratios = {c: [] for c in names}
    for r in bench.get("rows", []):
        cells = []
        for c in names:
            cells.append(f"{r[c]['tflops']:6.0f} TF {r[c]['ratio']:5.3f}x")
            ratios[c].append(r[c]["ratio"])
        g = r.get("graph", {})
        ratios.setdefault("graph", []).append(g.get("ratio", float("nan")))
        print(f"{r['m']}x{r['n']}x{r['k']:<8} {r['cublas_tflops']:9.0f}  " + "  ".join(f"{x:>18}" for x in cells)
              + f"  graph {g.get('ratio', float('nan')):5.3f}x")
    for c in [*names, "graph"]:
        if ratios.get(c):
            g = math.exp(sum(math.log(x) for x in ratios[c]) / len(ratios[c]))
            print(f"geomean ratio {c}: {g:.3f}  min {min(ratios[c]):.3f}")
    for tool, v in report.get("race", {}).items():
        if isinstance(v, dict):
            print(tool, "rc", v.get("rc"), (v.get("tail") or "")[-200:].replace("\n", " | "))
    print(f"total {time.time() - t0:.0f}s")


if __name__ == "__main__":
    main()
