"""The ``tmakit`` command: ``demo``, ``explain``, ``info``.

    tmakit demo [load|prefetch|multicast|store|reduce|all|blackwell|grouped|grouped-k|hopper|hopper-cute]
                [--backend auto|gpu|emu] [--figures DIR]
    tmakit explain --shape 4096,4096 --dtype bf16 --box 64,64 --swizzle 128 [--cluster 2 --multicast]
    tmakit info

Exit codes: 0 ok, 1 invalid input (``explain`` names the broken rule), 2 a usage error, or a backend or tool is
unavailable. tmakit's own errors are printed as one message, never as a traceback.
"""

from __future__ import annotations

import argparse
import os
import platform
import re
import sys
from pathlib import Path

DEMOS = ("load", "prefetch", "multicast", "store", "reduce", "all", "blackwell", "grouped", "grouped-k", "hopper",
         "hopper-cute")
SWIZZLE_BITS = {0: 0, 32: 1, 64: 2, 128: 3}
REDUCTIONS = ("add", "min", "max", "inc", "dec", "and", "or", "xor")
OPS = ("load", "store", *(f"reduce-{r}" for r in REDUCTIONS))
MAX_CLUSTER = 16  # portable cluster size limit for TMA multicast (16-bit CTA mask)


# ------------------------------------------------------------------------------------------------ parsing helpers
def _ints(text: str) -> tuple[int, ...]:
    try:
        return tuple(int(x, 0) for x in re.split(r"[,x\s]+", text.strip().strip("[]()")) if x)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected comma-separated integers, got {text!r}") from None


def parse_layout(text: str):
    """A layout in CuTe's print notation: ``(_64,_64):(_64,_1)``, ``_8:_1``, optionally swizzled:
    ``Sw<3,4,3> o (_8,_64):(_64,_1)`` or ``Sw<3,4,3> o _0 o (...)``. ``_N`` is a static int, ``N`` a dynamic one."""
    import tmakit as tk

    s = text.replace(" ", "")
    swizzle = None
    m = re.match(r"^Sw<(\d+),(\d+),(\d+)>o(?:_?0o)?", s)
    if m:
        swizzle = tk.Swizzle(int(m.group(1)), int(m.group(2)), int(m.group(3)))
        s = s[m.end():]
    if ":" not in s:
        raise ValueError(f"not a CuTe layout (shape:stride): {text!r}")
    depth = 0
    split = None
    for i, ch in enumerate(s):
        depth += ch == "("
        depth -= ch == ")"
        if ch == ":" and depth == 0:
            split = i
            break
    if split is None:
        raise ValueError(f"not a CuTe layout (shape:stride): {text!r}")

    def tup(part: str):
        pos = 0

        def parse():
            nonlocal pos
            if part[pos] == "(":
                pos += 1
                items = []
                while part[pos] != ")":
                    items.append(parse())
                    if part[pos] == ",":
                        pos += 1
                pos += 1
                return tuple(items)
            mm = re.match(r"_?\d+", part[pos:])
            if not mm:
                raise ValueError(f"bad token at {part[pos:]!r} in {text!r}")
            pos += mm.end()
            tok = mm.group(0)
            return tk.Int(int(tok[1:])) if tok.startswith("_") else int(tok)

        v = parse()
        if pos != len(part):
            raise ValueError(f"trailing text {part[pos:]!r} in {text!r}")
        return v

    layout = tk.make_layout(tup(s[:split]), tup(s[split + 1:]))
    return tk.composition(swizzle, layout) if swizzle is not None else layout


# ------------------------------------------------------------------------------------------------ demo
def cmd_demo(args) -> int:
    from . import demo

    # emulator only (no Blackwell GPU backend, no GPU kernel yet)
    if args.which in ("blackwell", "grouped", "grouped-k", "hopper", "hopper-cute"):
        demo.run(args.which)
        return 0
    try:
        backend = demo.choose(args.backend)
    except demo.BackendUnavailable as e:
        print(f"GPU backend unavailable: {e}", file=sys.stderr)
        return 2
    print(f"backend: {backend.name} -- {backend.describe()} ({backend.reason})")
    if args.figures:
        try:
            import matplotlib  # noqa: F401
        except ImportError:
            print("--figures needs matplotlib: pip install 'tmakit[viz]'", file=sys.stderr)
            return 2
    demo.run(args.which, backend, args.figures)
    print(f"\ndone: {args.which} on the {backend.describe()}")
    return 0


# ------------------------------------------------------------------------------------------------ explain
def _explain_raw(args, tk) -> int:
    from .tma.tensormap import SwizzleMode

    shape = args.shape
    dtype = tk.tma_dtype(args.dtype)
    tmp = tk.TensorMap.from_shape((1,) * len(shape), args.dtype, (1,) * len(shape), validate=False) \
        if len(shape) else None
    eb = tmp.elem_bytes if tmp is not None else 1
    if args.strides:
        strides = tuple(reversed(args.strides))[1:] if len(args.strides) == len(shape) else tuple(args.strides)
    else:
        strides, acc = [], eb
        for d in reversed(shape[1:]):
            acc *= d
            strides.append(acc)
        strides = tuple(strides)
    box = args.box or shape
    tm = tk.TensorMap(dtype=dtype, global_dim=tuple(reversed(shape)), global_strides=strides,
                      box_dim=tuple(reversed(box)),
                      element_strides=tuple(reversed(args.element_strides)) if args.element_strides else None,
                      swizzle=SwizzleMode(SWIZZLE_BITS[args.swizzle]), global_address=args.address)
    print("TensorMap from --raw fields (shape/box given outermost first, like numpy; the driver wants innermost "
          "first):")
    tm.validate(args.arch)
    print(tm.explain(args.arch))
    print("\nVALID: the driver would accept this descriptor.")
    return 0


def _smem_layout(args, tk):
    if args.smem:
        return parse_layout(args.smem)
    box = args.box or args.shape
    layout = tk.make_layout(tuple(tk.Int(b) for b in box), tk.LayoutRight)
    if args.swizzle:
        layout = tk.composition(tk.Swizzle(SWIZZLE_BITS[args.swizzle], 4, 3), layout)
    return layout


def _op(args, tk):
    if args.multicast:
        return tk.SM90_TMA_LOAD_MULTICAST
    ops = {"load": tk.SM90_TMA_LOAD, "store": tk.SM90_TMA_STORE}
    for name in REDUCTIONS:
        ops[f"reduce-{name}"] = getattr(tk, f"SM90_TMA_REDUCE_{name.upper()}")
    return ops[args.op]  # argparse limited --op to OPS


def _explain_copy(args, tk) -> int:
    import numpy as np

    shape = args.shape
    g = tk.make_tensor(tk.make_gmem_ptr(args.dtype, args.address), tk.make_layout(tuple(shape), tk.LayoutRight))
    smem = _smem_layout(args, tk)
    op = _op(args, tk)
    cluster = args.cluster
    if args.multicast and cluster < 2:
        raise tk.TmaDescriptorError("cluster.multicast", "a multicast load needs a cluster of at least 2 CTAs",
                                    f"--cluster {cluster}", "pass --cluster 2 (or more, up to 16)")
    if args.multicast and args.op != "load":
        raise tk.TmaDescriptorError("cluster.multicast", "only loads multicast (SM90_TMA_LOAD_MULTICAST)",
                                    args.op, "drop --multicast, or use --op load", where=f"--op {args.op} --multicast")
    if cluster > 1 and not args.multicast:
        print(f"note: --cluster {cluster} without --multicast: every CTA loads its own tile (no split)")
    kw = {"cluster_size": cluster} if args.multicast else {}
    op_name = getattr(op, "name", str(op))
    print(f"gmem_tensor = make_tensor(make_gmem_ptr<{args.dtype}>({args.address:#x}), {g.layout})   // row-major")
    print(f"smem_layout = {smem}")
    print(f"tma = make_tma_copy({op_name}, gmem_tensor, smem_layout"
          + (f", Int<{cluster}>{{}})" if args.multicast else ")"))
    tc = tk.make_tma_copy(op, g, smem, **kw)
    tm = tc.tensormap
    tm.validate(args.arch)  # the copy may be valid on sm_90 and not on --arch
    print()
    print(str(tc).rstrip())
    print()
    print(tm.explain(args.arch))
    tile = tuple(int(x) for x in tc.tiler_mn) if isinstance(tc.tiler_mn, tuple) else (int(tc.tiler_mn),)
    tile_elems = int(np.prod(tile))
    eb = tm.elem_bytes
    print()
    print(f"bytes per box:  {tm.tx_bytes} (what set_barrier_transaction_bytes / expect_tx announces per TMA issue)")
    print(f"CTA tile:       {list(tile)} = {tile_elems} elements = {tile_elems * eb} bytes")
    coord = tc.get_tma_tensor(tuple(shape))
    print(f"coordinates:    get_tma_tensor(shape) = {coord}")
    if len(shape) == len(tile):
        grid = [-(-s // t) for s, t in zip(shape, tile)]
        print(f"grid:           {grid} CTA tiles" + (f" ({int(np.prod(grid))} CTAs)" if len(grid) > 1 else ""))
        first = tk.local_tile(coord, tuple(tk.Int(t) for t in tile), (0,) * len(tile))
        last_c = tuple(g_ - 1 for g_ in grid)
        last = tk.local_tile(coord, tuple(tk.Int(t) for t in tile), last_c)
        print(f"CTA {(0,) * len(tile)}:   local_tile -> {first}")
        print(f"CTA {last_c}: local_tile -> {last}")
        smem_t = tk.make_tensor(np.zeros(int(tk.cosize(smem)) if not hasattr(smem, "layout_b") else tile_elems,
                                         np.uint8), smem)
        n = cluster if args.multicast else 1
        print()
        print(f"per-CTA partition ({'multicast split over ' + str(n) + ' CTAs' if n > 1 else 'one TMA issue per tile'})"
              ":")
        for r in range(n):
            thr = tc.get_slice(r)
            src = thr.partition_S(first)
            dst = thr.partition_D(smem_t)
            off = int(getattr(dst.iterator, "offset", 0) or 0) + int(getattr(dst.layout, "offset", 0) or 0)
            print(f"  get_slice({r}).partition_S(tile) = {src}")
            print(f"  get_slice({r}).partition_D(smem) = {dst.layout}")
            print(f"      TMA coords {tuple(int(c) for c in src.iterator)} (innermost first), "
                  f"smem element offset {off} = byte {int(off) * eb}"
                  + ("" if int(off) * eb % 128 == 0 else "  <-- NOT 128-byte aligned: cp.async.bulk.tensor faults"))
        if n > 1:
            cl = tk.make_layout(tk.Int(n))
            mask = tk.create_tma_multicast_mask(cl, 0, (0,))
            print(f"\nmulticast: each CTA issues 1/{n} of the tile ({tm.tx_bytes} bytes) with mask {mask:#0{n + 2}b} "
                  f"(create_tma_multicast_mask({cl}, cta, (0,)));")
            print(f"           every CTA's mbarrier expects the whole tile: {tile_elems * eb} bytes")
    print("\nVALID: make_tma_copy and the driver's rules accept this copy.")
    return 0


def cmd_explain(args) -> int:
    import tmakit as tk

    bad = _explain_usage_error(args)
    if bad:
        print(f"INVALID: {bad}", file=sys.stderr)
        return 1
    try:
        return _explain_raw(args, tk) if args.raw else _explain_copy(args, tk)
    except tk.TmaDescriptorError as e:
        print(f"\nINVALID [{e.rule}]: {e.what}")
        print(f"  got:  {e.where}")
        print(f"  fix:  {e.fix}")
        return 1
    except (*_tmakit_errors(), ValueError, TypeError) as e:
        print(f"\nINVALID: {type(e).__name__}: {e}")
        return 1


def _explain_usage_error(args) -> str | None:
    """Flag combinations that no copy can have, checked before anything is built (the message names the fix)."""
    rank = len(args.shape)
    if args.swizzle not in SWIZZLE_BITS:
        return f"--swizzle must be 0, 32, 64 or 128 (got {args.swizzle})"
    if rank == 0:
        return "--shape needs at least one extent, e.g. --shape 4096,4096"
    for flag, value in (("--box", args.box), ("--element-strides", args.element_strides)):
        if value is not None and len(value) != rank:
            return (f"{flag} {','.join(map(str, value))} has {len(value)} dimensions but --shape "
                    f"{','.join(map(str, args.shape))} has {rank}: give one per dimension of --shape")
    if args.strides is not None and len(args.strides) not in (rank, rank - 1):
        return f"--strides has {len(args.strides)} entries: give {rank - 1} (dims 1..) or {rank}, outermost first"
    if not 1 <= args.cluster <= MAX_CLUSTER:
        return f"--cluster must be 1..{MAX_CLUSTER} CTAs (got {args.cluster}): TMA multicast masks have 16 bits"
    return None


# ------------------------------------------------------------------------------------------------ info
def _version(dist: str) -> str | None:
    try:
        from importlib.metadata import version

        return version(dist)
    except Exception:
        return None


def _dir_size(path: Path) -> tuple[int, int]:
    total = files = 0
    if path.is_dir():
        for p in path.rglob("*"):
            try:
                if p.is_file():
                    total += p.stat().st_size
                    files += 1
            except OSError:
                pass
    return total, files


def cmd_info(args) -> int:
    import numpy

    from . import __version__

    print(f"tmakit          {__version__} ({Path(__file__).resolve().parent})")
    print(f"platform        {platform.platform()} ({platform.machine()})")
    print(f"python          {sys.version.split()[0]} ({sys.executable})")
    print(f"numpy           {numpy.__version__}")
    mpl = _version("matplotlib")
    print(f"matplotlib      {mpl or 'not installed (pictures need it: pip install tmakit[viz])'}")
    cb = _version("cuda-bindings") or _version("cuda-python")
    print(f"cuda-bindings   {cb or 'not installed (GPU runtime needs it: pip install tmakit[gpu])'}")
    nv = None
    for dist in ("nvidia-cuda-nvrtc", "nvidia-cuda-nvrtc-cu12", "nvidia-cuda-nvrtc-cu13"):
        nv = nv or _version(dist)
    if nv is None and cb:
        try:
            from .cuda.nvrtc import compiler_id

            nv = compiler_id()
        except Exception:
            nv = None
    print(f"nvrtc           {nv or 'not installed'}")
    gpu_line, driver_line = "none found", "n/a"
    if cb:
        try:
            from .cuda.driver import compute_capability, device_count, device_name, driver_version

            n = device_count()
            if n:
                gpus = []
                for i in range(n):
                    major, minor = compute_capability(i)
                    gpus.append(f"[{i}] {device_name(i)} (sm_{major}{minor})")
                gpu_line = "; ".join(gpus)
            v = driver_version()
            driver_line = f"CUDA {v // 1000}.{v % 1000 // 10} (cuDriverGetVersion = {v})"
        except Exception as e:  # noqa: BLE001 - info must never crash
            first = str(e).strip().splitlines()[0] if str(e).strip() else ""
            gpu_line = f"unavailable ({type(e).__name__}: {first})"  # whole: a cut message misleads
    print(f"gpu             {gpu_line}")
    print(f"driver          {driver_line}")
    cdir = _cache_dir()
    if cdir is None:
        print("cache           none (no home directory; set TMAKIT_CACHE_DIR to use one)")
    else:
        size, files = _dir_size(cdir)
        src = "TMAKIT_CACHE_DIR" if os.environ.get("TMAKIT_CACHE_DIR") else "default"
        print(f"cache           {cdir} ({src}; {files} files, {size / 1024:.1f} KiB"
              + (")" if cdir.exists() else ", not created yet)"))
    from .demo.backends import gpu_status

    ok, why = gpu_status()
    print(f"backend (auto)  {'gpu' if ok else 'emu'}: {why}")
    return 0


def _cache_dir() -> Path | None:
    try:
        from .cuda.cache import cache_dir

        return cache_dir()
    except Exception:  # noqa: BLE001 - cuda-bindings missing: the same rule without it
        d = os.environ.get("TMAKIT_CACHE_DIR") or os.environ.get("XDG_CACHE_HOME")
        home = os.path.expanduser("~")
        if d:
            return Path(d) if os.environ.get("TMAKIT_CACHE_DIR") else Path(d) / "tmakit"
        return None if home.startswith("~") else Path(home) / ".cache" / "tmakit"


# ------------------------------------------------------------------------------------------------ parser
def build_parser() -> argparse.ArgumentParser:
    from . import __version__

    p = argparse.ArgumentParser(prog="tmakit", description="Hopper's Tensor Memory Accelerator from Python.")
    p.add_argument("--version", action="version", version=f"tmakit {__version__}")
    sub = p.add_subparsers(dest="command")

    d = sub.add_parser("demo", help="the seeds' walkthroughs: TMA load, prefetch, multicast, store, reduce",
                       description="Walk through the seeds' TMA examples step by step, on the GPU or the emulator.")
    d.add_argument("which", nargs="?", default="all", choices=DEMOS)
    d.add_argument("--backend", default="auto", choices=("auto", "gpu", "emu"),
                   help="auto: the GPU when a Hopper device and tmakit.cuda are usable, else the emulator")
    d.add_argument("--figures", metavar="DIR", help="also write the walkthroughs' pictures (PNG + SVG) to DIR")
    d.set_defaults(func=cmd_demo)

    e = sub.add_parser("explain", help="validate and explain a TMA copy / tensor map",
                       description="Build a TMA copy with make_tma_copy (row-major gmem of --shape, smem = --box "
                       "row-major, swizzled by --swizzle) and explain it; or with --raw, a TensorMap directly.")
    e.add_argument("--shape", type=_ints, required=True, help="global shape, outermost first (numpy order)")
    e.add_argument("--dtype", default="fp32", help="fp32, bf16, fp16, fp8, u8, s32, ... (default fp32)")
    e.add_argument("--box", type=_ints, help="box / CTA tile, outermost first (default: the whole shape)")
    e.add_argument("--swizzle", type=int, default=0, help="0, 32, 64 or 128 (bytes)")
    e.add_argument("--cluster", type=int, default=1, help=f"CTAs per cluster, 1..{MAX_CLUSTER} (with --multicast)")
    e.add_argument("--multicast", action="store_true", help="SM90_TMA_LOAD_MULTICAST split over the cluster")
    e.add_argument("--smem", help='smem layout in CuTe notation, e.g. "(_64,_64):(_64,_1)" or '
                                  '"Sw<3,4,3> o (_8,_64):(_64,_1)" (overrides --box/--swizzle)')
    e.add_argument("--op", default="load", choices=OPS, metavar="OP",
                   help=f"the copy: {', '.join(OPS)} (default load)")
    e.add_argument("--address", type=lambda s: int(s, 0), default=0x7F0000000000,
                   help="global address (default 0x7f0000000000)")
    e.add_argument("--arch", default="sm_90", help="the target the verdict is for (default sm_90)")
    e.add_argument("--raw", action="store_true",
                   help="validate TensorMap fields directly (no make_tma_copy): --shape/--box/--strides")
    e.add_argument("--strides", type=_ints, help="--raw: byte strides, outermost first (default packed)")
    e.add_argument("--element-strides", type=_ints, help="--raw: element strides, outermost first")
    e.set_defaults(func=cmd_explain)

    i = sub.add_parser("info", help="platform, GPU, driver, NVRTC, cache, which backend `auto` picks")
    i.set_defaults(func=cmd_info)

    b = sub.add_parser("bench", help="tmakit ops vs torch on the GPU (copy, transpose, permute, reduce, gemm)",
                       add_help=False)
    b.add_argument("rest", nargs=argparse.REMAINDER)
    b.set_defaults(func=cmd_bench)

    t = sub.add_parser("tune", help="measure the GEMM's configurations and torch.matmul on one problem, keep the "
                                    "fastest for tk.ops.gemm (tmakit tune gemm M N K)", add_help=False)
    t.add_argument("rest", nargs=argparse.REMAINDER)
    t.set_defaults(func=cmd_tune)
    return p


def cmd_tune(args) -> int:
    """``tmakit tune gemm ...``: the GEMM autotuner (tmakit.bench.gemm_tune), arguments passed through."""
    from .bench.gemm_tune import main as tune_main

    return int(tune_main(args.rest) or 0)


def cmd_bench(args) -> int:
    """``tmakit bench ...``: the benchmark harness (tmakit.bench), arguments passed through."""
    from .bench import main as bench_main

    return int(bench_main(args.rest) or 0)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv[:1] == ["bench"]:  # the harness parses its own arguments
        from .bench import main as bench_main

        return int(bench_main(argv[1:]) or 0)
    if argv[:1] == ["tune"]:
        from .bench.gemm_tune import main as tune_main

        return int(tune_main(argv[1:]) or 0)
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as e:  # argparse: --help / --version exit 0, usage errors exit 2
        return int(e.code or 0)
    if args.command is None:
        parser.print_help()
        return 0
    try:
        return args.func(args)
    except BrokenPipeError:  # `tmakit demo | head`
        try:
            sys.stdout = open(os.devnull, "w")  # noqa: SIM115 - silence the flush at exit
        except OSError:
            pass
        return 0
    except Exception as e:
        if not isinstance(e, _tmakit_errors()):
            raise
        print(f"tmakit {args.command}: {type(e).__name__}: {e}", file=sys.stderr)
        return 2


def _tmakit_errors() -> tuple[type, ...]:
    """The base classes of tmakit's named errors (layout, tma, emu, cuda): the CLI prints these, never a traceback."""
    from .emu.errors import EmuError
    from .layout.int_tuple import LayoutError
    from .tma.errors import TmaError

    errors: list[type] = [EmuError, LayoutError, TmaError]
    try:
        from .cuda.errors import CompileError, CompileInputError, CudaError, RuntimeUnavailable

        errors += [CompileError, CompileInputError, CudaError, RuntimeUnavailable]
    except ImportError:  # pragma: no cover
        pass
    return tuple(errors)


if __name__ == "__main__":
    sys.exit(main())
