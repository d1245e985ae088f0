"""Compile CUDA C++ to a cubin with NVRTC (from the ``nvidia-cuda-nvrtc`` wheel, through ``cuda-bindings``).

``nvcc`` is used instead only when ``TMAKIT_NVCC=1`` and an ``nvcc`` is found; it is never required.
Headers: the package's own ``include/`` (``#include <tmakit/tma.cuh>``) plus, when installed, the CUDA runtime
headers of the ``nvidia-cuda-runtime`` wheel (``cuda_bf16.h`` ...) located with ``cuda.pathfinder`` or importlib.
"""

from __future__ import annotations

import functools
import importlib.util
import json
import os
import shutil
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from .errors import CompileError, CompileInputError, RuntimeUnavailable

__all__ = ["DEFAULT_ARCH", "Compiled", "PACKAGE_INCLUDE", "check_inputs", "compiler_id", "default_options",
           "include_dirs", "nvrtc_compile", "nvcc_compile", "use_nvcc"]

DEFAULT_ARCH = "sm_90a"
PACKAGE_INCLUDE = Path(__file__).resolve().parent.parent / "include"


@dataclass
class Compiled:
    """A compiled program: the cubin, C++ name -> lowered (mangled) names, and the compiler's log."""

    cubin: bytes
    lowered: dict[str, str] = field(default_factory=dict)
    log: str = ""
    compiler: str = ""
    key: str = ""
    cached: bool = False
    headers_read: tuple[str, ...] | None = None  # absolute paths the compiler opened; None: it did not say
    deps: dict[str, str] = field(default_factory=dict)  # header path -> sha256 when compiled (the cache checks them)
    absent: tuple[str, ...] = ()  # paths that did not exist and would shadow a dep if created

    def symbol(self, name: str) -> str:
        """The symbol to look up for ``name`` (a name expression or an ``extern "C"`` name)."""
        return self.lowered.get(name, name)


def _nvrtc():
    try:
        from cuda.bindings import nvrtc
    except ImportError as e:  # pragma: no cover - depends on the environment
        raise RuntimeUnavailable("tmakit.cuda needs cuda-bindings and nvidia-cuda-nvrtc "
                                 "(pip install 'tmakit[gpu]')") from e
    return nvrtc


def use_nvcc() -> bool:
    """True when ``TMAKIT_NVCC=1`` asks for nvcc instead of NVRTC."""
    return os.environ.get("TMAKIT_NVCC", "") not in ("", "0")


@functools.lru_cache(maxsize=None)
def _wheel_include_dirs() -> tuple[str, ...]:
    """CUDA runtime/CCCL header dirs from the installed wheels (or CUDA_HOME), via cuda.pathfinder when present."""
    found: list[str] = []
    try:
        import cuda.pathfinder as pf

        for lib in ("cudart", "cccl"):
            try:
                loc = pf.find_nvidia_header_directory(lib)
            except Exception:
                loc = None
            if loc:
                found.append(str(loc))
    except ImportError:
        pass
    if not found:
        spec = importlib.util.find_spec("nvidia")
        for root in (spec.submodule_search_locations or []) if spec else []:
            for sub in ("cu13/include", "cu12/include", "cuda_runtime/include", "cu13/include/cccl"):
                d = Path(root) / sub
                if (d / "cuda_runtime.h").exists() or (d / "cuda" / "std").is_dir():
                    found.append(str(d))
        home = os.environ.get("CUDA_HOME") or os.environ.get("CUDA_PATH")
        if not found and home and (Path(home) / "include" / "cuda_runtime.h").exists():
            found.append(str(Path(home) / "include"))
    out: list[str] = []
    for d in found:
        if d not in out and Path(d).is_dir():
            out.append(d)
    return tuple(out)


def include_dirs(extra=()) -> list[str]:
    """Include search path: user dirs, the package's ``include/``, then the CUDA wheels' header dirs."""
    return [*map(str, extra), str(PACKAGE_INCLUDE), *_wheel_include_dirs()]


def default_options(arch: str = DEFAULT_ARCH, debug: bool | None = None) -> list[str]:
    """Options every compile gets: target, C++17, line info, and ``-DTMAKIT_DEBUG=1`` when debugging."""
    if debug is None:
        debug = os.environ.get("TMAKIT_DEBUG", "") not in ("", "0")
    opts = [f"--gpu-architecture={arch}", "-std=c++17", "-lineinfo"]
    if debug:
        opts.append("-DTMAKIT_DEBUG=1")
    return opts


@functools.lru_cache(maxsize=None)
def compiler_id() -> str:
    """Identifies the compiler that will run (goes into the cache key): ``nvrtc-13.0`` or nvcc's version line."""
    if use_nvcc():
        nvcc = _find_nvcc()
        out = subprocess.run([nvcc, "--version"], capture_output=True, text=True, check=True).stdout
        return "nvcc-" + out.strip().splitlines()[-1]
    nvrtc = _nvrtc()
    err, major, minor = nvrtc.nvrtcVersion()
    _check(nvrtc, err, "nvrtcVersion")
    return f"nvrtc-{major}.{minor}"


def _check(nvrtc, err, call: str, prog=None):
    if int(err) != 0:
        _, msg = nvrtc.nvrtcGetErrorString(err)
        raise RuntimeError(f"{call} failed: {msg.decode() if isinstance(msg, bytes) else msg} ({int(err)})")


def _read_log(nvrtc, prog) -> str:
    err, n = nvrtc.nvrtcGetProgramLogSize(prog)
    _check(nvrtc, err, "nvrtcGetProgramLogSize")
    buf = _out_buffer(n)
    (err,) = nvrtc.nvrtcGetProgramLog(prog, buf)
    _check(nvrtc, err, "nvrtcGetProgramLog")
    return bytes(buf).rstrip(b"\x00 ").decode(errors="replace")


def _out_buffer(n: int) -> bytearray:
    """A writable buffer for NVRTC to fill. Never ``b" " * n``: bytes are immutable, and for ``n == 1`` (an empty
    log) that expression is CPython's shared ``b" "`` object, so NVRTC's NUL would turn every ``b" "`` in the
    process into ``b"\x00"`` (it broke ``import torch`` after a compile)."""
    return bytearray(n)


def _text(what: str, value, fix: str) -> str:
    if isinstance(value, bytes):
        raise CompileInputError(f"{what} must be str, not bytes (tmakit does not guess an encoding)", value,
                                f"pass {fix}.decode() (or read the file in text mode)")
    if not isinstance(value, str):
        raise CompileInputError(f"{what} must be str, not {type(value).__name__}", value, f"pass {fix} as a str")
    if "\0" in value:
        line = value.count("\n", 0, value.index("\0")) + 1
        raise CompileInputError(f"{what} contains a NUL byte (line {line}); NVRTC would silently stop reading there",
                                value, "remove the NUL byte (\\0) from it")
    return value


def _str_list(what: str, value, example: str) -> list:
    if isinstance(value, (str, bytes, os.PathLike)):
        raise CompileInputError(f"{what} must be a list, not a single {type(value).__name__} (it would be split "
                                "into characters)", value, f"wrap it in a list: {what}=[{example}]")
    try:
        return list(value)
    except TypeError:
        raise CompileInputError(f"{what} must be a list", value, f"{what}=[{example}]") from None


def check_inputs(source, name, options=(), include_dirs=(), name_expressions=()):
    """Refuse what NVRTC would misread; returns (options, include_dirs, name_expressions) as lists.

    ``source``/``name``: str without NUL bytes (bytes are refused, not decoded: the encoding is the caller's call);
    ``options``/``name_expressions``: lists of such str; ``include_dirs``: a list of str or ``os.PathLike``.
    """
    _text("source", source, "source")
    _text("name", name, "name")
    opts = [_text(f"options[{i}]", o, "the option") for i, o in enumerate(_str_list("options", options, "'-DX=1'"))]
    exprs = [_text(f"name_expressions[{i}]", e, "the C++ name")
             for i, e in enumerate(_str_list("name_expressions", name_expressions, "'kernel<int>'"))]
    dirs = _str_list("include_dirs", include_dirs, "'path/to/include'")
    for i, d in enumerate(dirs):
        if not isinstance(d, (str, os.PathLike)):
            raise CompileInputError(f"include_dirs[{i}] must be a str or path, not {type(d).__name__}", d,
                                    "pass directory paths")
        _text(f"include_dirs[{i}]", os.fspath(d), "the path")
    return opts, dirs, exprs


def _trace_headers(trace_dir: str) -> tuple[str, ...] | None:
    """Headers the NVRTC front end processed, from its ``--fdevice-time-trace`` JSON (absolute paths)."""
    found: list[str] = []
    try:
        files = os.listdir(trace_dir)
        if not files:
            return None
        for fname in files:
            with open(os.path.join(trace_dir, fname), encoding="utf-8") as f:
                events = json.load(f).get("traceEvents", [])
            for ev in events:
                if ev.get("name") == "Processing Header File":
                    p = os.path.abspath(str(ev.get("args", {}).get("detail", "")))
                    if os.path.isfile(p) and p not in found:
                        found.append(p)
    except (OSError, ValueError, AttributeError):
        return None
    return tuple(found)


def nvrtc_compile(source: str, name: str, options: list[str], name_expressions=(),
                  headers: dict[str, str] | None = None) -> Compiled:
    """One NVRTC compile to a cubin. Raises :class:`CompileError` with the formatted log.

    The headers NVRTC opened (``Compiled.headers_read``) come from its time trace (``--fdevice-time-trace``, written
    to a temporary directory): NVRTC has no ``-M``/``-MD`` dependency output.
    """
    options, _, name_expressions = check_inputs(source, name, options, (), name_expressions)
    nvrtc = _nvrtc()
    err, prog = nvrtc.nvrtcCreateProgram(source.encode(), name.encode(), 0, [], [])
    _check(nvrtc, err, "nvrtcCreateProgram")
    trace_dir = None if any(o.startswith("--fdevice-time-trace") for o in options) else \
        tempfile.mkdtemp(prefix="tmakit-deps-")
    try:
        for expr in name_expressions:
            (err,) = nvrtc.nvrtcAddNameExpression(prog, expr.encode())
            _check(nvrtc, err, "nvrtcAddNameExpression")
        traced = options + ([f"--fdevice-time-trace={trace_dir}/trace"] if trace_dir else [])
        opts = [o.encode() for o in traced]
        (err,) = nvrtc.nvrtcCompileProgram(prog, len(opts), opts)
        log = _read_log(nvrtc, prog)
        if int(err) != 0:
            raise CompileError(name, log, source, options, compiler=compiler_id(), headers=headers)
        err, size = nvrtc.nvrtcGetCUBINSize(prog)
        _check(nvrtc, err, "nvrtcGetCUBINSize")
        cubin = _out_buffer(size)
        (err,) = nvrtc.nvrtcGetCUBIN(prog, cubin)
        _check(nvrtc, err, "nvrtcGetCUBIN")
        lowered = {}
        for expr in name_expressions:
            err, low = nvrtc.nvrtcGetLoweredName(prog, expr.encode())
            _check(nvrtc, err, "nvrtcGetLoweredName")
            lowered[expr] = low.decode() if isinstance(low, bytes) else str(low)
        read = _trace_headers(trace_dir) if trace_dir else None
        return Compiled(cubin=bytes(cubin), lowered=lowered, log=log, compiler=compiler_id(), headers_read=read)
    finally:
        nvrtc.nvrtcDestroyProgram(prog)
        if trace_dir:
            shutil.rmtree(trace_dir, ignore_errors=True)


@functools.lru_cache(maxsize=None)
def _find_nvcc() -> str:
    cands = [shutil.which("nvcc")]
    for env in ("CUDA_HOME", "CUDA_PATH"):
        if os.environ.get(env):
            cands.append(str(Path(os.environ[env]) / "bin" / "nvcc"))
    cands.append("/usr/local/cuda/bin/nvcc")
    for c in cands:
        if c and Path(c).exists():
            return c
    raise RuntimeUnavailable("TMAKIT_NVCC=1 but no nvcc was found (PATH, CUDA_HOME)")


def nvcc_compile(source: str, name: str, options: list[str], name_expressions=(),
                 headers: dict[str, str] | None = None) -> Compiled:
    """Compile with nvcc to a cubin (only with ``TMAKIT_NVCC=1``); ``extern "C"`` kernels only."""
    if name_expressions:
        raise ValueError("name_expressions need NVRTC; use extern \"C\" kernels with TMAKIT_NVCC=1")
    nvcc = _find_nvcc()
    args = []
    for o in options:
        if o.startswith("--gpu-architecture="):
            arch = o.split("=", 1)[1]
            virt = arch.replace("sm_", "compute_")
            args.append(f"-gencode=arch={virt},code={arch}")
        elif o.startswith("--include-path="):
            args.append("-I" + o.split("=", 1)[1])
        else:
            args.append(o)
    with tempfile.TemporaryDirectory(prefix="tmakit-nvcc-") as tmp:
        src = Path(tmp) / Path(name).name
        if src.suffix != ".cu":
            src = src.with_suffix(".cu")
        src.write_text(source)
        out, dep = Path(tmp) / "out.cubin", Path(tmp) / "out.d"
        r = subprocess.run([nvcc, "-cubin", *args, "-MD", "-MF", str(dep), "-o", str(out), str(src)],
                           capture_output=True, text=True)
        log = (r.stdout + r.stderr).replace(str(src), name)
        if r.returncode != 0:
            raise CompileError(name, log, source, options, compiler=compiler_id(), headers=headers)
        return Compiled(cubin=out.read_bytes(), log=log, compiler=compiler_id(), headers_read=_make_deps(dep, src))


def _make_deps(dep: Path, src: Path) -> tuple[str, ...] | None:
    """The headers listed in an nvcc ``-MD`` file (absolute paths, the source itself left out)."""
    try:
        text = dep.read_text().replace("\\\n", " ")
    except OSError:
        return None
    _, _, files = text.partition(":")
    paths = [os.path.abspath(p) for p in files.split()]
    return tuple(p for p in dict.fromkeys(paths) if p != str(src) and os.path.isfile(p))
