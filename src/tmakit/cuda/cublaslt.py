"""cuBLASLt through ctypes: one planned 16-bit or FP8 matmul per problem, launched with pre-built descriptors.

Calls that tmakit's kernels do not take go to cuBLAS, the library ``torch.matmul`` itself runs. Through torch,
every such call pays torch's dispatch and cuBLAS's per-call heuristic lookup on top of tmakit's own routing; here
the descriptors and the algorithm are chosen once per problem (:func:`plan`) and a repeated call is one
``cublasLtMatmul`` through ctypes with integer arguments. The library is the one already loaded in the process
(torch's, found in ``/proc/self/maps``), else the first ``libcublasLt.so.{13,12}`` the loader finds; without one,
:func:`available` is False and callers keep their torch path.

Row-major ``D (m, n) = A (m, k) @ B (k, n)`` is column-major ``D^T = B^T A^T``: cuBLAS's first operand is our B.
"""

from __future__ import annotations

import ctypes
import threading

__all__ = ["LtMatmul", "SCALE_MODES", "alignment", "available", "plan"]

# cudaDataType_t, cublasComputeType_t, cublasOperation_t and attribute ids (cublasLt.h / library_types.h)
_R_32F, _R_16F, _R_16BF, _R_8F_E4M3, _R_8F_E5M2 = 0, 2, 14, 28, 29
_COMPUTE_32F = 68
_OP_N, _OP_T = 0, 1
_DESC_TRANSA, _DESC_TRANSB = 3, 4
_DESC_A_SCALE_POINTER, _DESC_B_SCALE_POINTER, _DESC_FAST_ACCUM = 17, 18, 25
_DESC_A_SCALE_MODE, _DESC_B_SCALE_MODE = 31, 32
_PREF_MAX_WORKSPACE, _PREF_ALIGN_A, _PREF_ALIGN_B, _PREF_ALIGN_C, _PREF_ALIGN_D = 1, 5, 6, 7, 8
_TYPES = {"bfloat16": _R_16BF, "float16": _R_16F, "float32": _R_32F}
_FP8_TYPES = {"float8_e4m3fn": _R_8F_E4M3, "float8_e5m2": _R_8F_E5M2}
# cublasLtMatmulMatrixScale_t of (our A's scales, our B's scales) per scaling mode: one fp32 value each (tensor),
# a vector per row of A / column of B (row), per 1x128 of A and 128x128 of B (block, DeepSeek-V3)
SCALE_MODES = {"tensor": (0, 0), "row": (3, 3), "block": (4, 5)}
WORKSPACE_BYTES = 32 << 20  # what torch gives cuBLAS on Hopper: the same algorithms become eligible


class _Heuristic(ctypes.Structure):
    """``cublasLtMatmulHeuristicResult_t``: the 64-byte algorithm, its workspace, status, waves."""

    _fields_ = [("algo", ctypes.c_uint64 * 8), ("workspace", ctypes.c_size_t), ("state", ctypes.c_int),
                ("waves", ctypes.c_float), ("reserved", ctypes.c_int * 4)]


_lib = None
_lock = threading.Lock()
_handles: dict = {}  # device index -> cublasLtHandle_t
_ONE, _ZERO = ctypes.c_float(1.0), ctypes.c_float(0.0)


def _find_library():
    """The process's libcublasLt (torch's, when torch loaded one), else the loader's, else None."""
    try:
        with open("/proc/self/maps") as f:
            loaded = sorted({line.split()[-1] for line in f if "libcublasLt.so" in line})
    except OSError:
        loaded = []
    for name in loaded + ["libcublasLt.so.13", "libcublasLt.so.12"]:
        try:
            return ctypes.CDLL(name)
        except OSError:
            continue
    return None


def _bind():
    """Load the library once and declare the entry points used (False when there is none)."""
    global _lib
    with _lock:
        if _lib is None:
            lib = _find_library()
            if lib is not None:
                vp, sz = ctypes.c_void_p, ctypes.c_size_t
                for name, args in (("cublasLtCreate", [vp]), ("cublasLtMatmulDescCreate", [vp, ctypes.c_int,
                                                                                           ctypes.c_int]),
                                   ("cublasLtMatmulDescSetAttribute", [vp, ctypes.c_int, vp, sz]),
                                   ("cublasLtMatrixLayoutCreate", [vp, ctypes.c_int, ctypes.c_uint64,
                                                                   ctypes.c_uint64, ctypes.c_int64]),
                                   ("cublasLtMatmulPreferenceCreate", [vp]),
                                   ("cublasLtMatmulPreferenceSetAttribute", [vp, ctypes.c_int, vp, sz]),
                                   ("cublasLtMatmulPreferenceDestroy", [vp]),
                                   ("cublasLtMatmulAlgoGetHeuristic", [vp] * 7 + [ctypes.c_int, vp, vp]),
                                   ("cublasLtMatmul", [vp] * 14 + [sz, vp])):
                    f = getattr(lib, name)
                    f.argtypes, f.restype = args, ctypes.c_int
            _lib = lib or False
    return _lib


def available() -> bool:
    """True when a cuBLASLt library can be loaded in this process."""
    return bool(_lib if _lib is not None else _bind())


def _check(status: int, call: str) -> None:
    if status:
        from .errors import CudaError

        raise CudaError(call, status, "CUBLAS_STATUS", "cuBLASLt returned an error status")


def _handle(device: int):
    """The cuBLASLt handle of ``device`` (created once; the caller has made the device current)."""
    h = _handles.get(device)
    if h is None:
        h = ctypes.c_void_p()
        _check(_lib.cublasLtCreate(ctypes.byref(h)), "cublasLtCreate")
        h = _handles[device] = h.value
    return h


def _set(setter, obj, attr: int, value, ctype) -> None:
    v = ctype(value)
    _check(setter(obj, attr, ctypes.byref(v), ctypes.sizeof(v)), setter.__name__)


def alignment(ptr: int) -> int:
    """The largest power of two up to 256 dividing ``ptr`` (cuBLASLt's MIN_ALIGNMENT preference)."""
    return min(256, ptr & -ptr) if ptr else 256


class LtMatmul:
    """One planned problem: ``__call__(a_ptr, b_ptr, d_ptr, workspace_ptr, stream[, scale_a_ptr, scale_b_ptr])``
    runs ``D = A @ B`` (FP8: times the scales of the plan's mode) with the algorithm cuBLASLt's heuristic ranked
    first for these shapes, strides, dtypes and address alignments. The workspace must hold ``workspace_bytes``, what
    the chosen algorithm uses (0: pass 0), and belong to ``stream`` (stream order keeps it safe). FP8 scale
    addresses are attributes of the shared descriptor: a call sets them under a lock."""

    __slots__ = ("_objs", "_args", "_fn", "_scaled", "_lock", "workspace_bytes", "describe")

    def __init__(self, objs, args, workspace_bytes: int, describe: str, scaled: bool = False):
        self._objs, self._args, self._fn = objs, args, _lib.cublasLtMatmul
        self._scaled, self._lock = scaled, threading.Lock()
        self.workspace_bytes, self.describe = workspace_bytes, describe

    def __call__(self, a_ptr: int, b_ptr: int, d_ptr: int, workspace_ptr: int, stream: int, scale_a_ptr: int = 0,
                 scale_b_ptr: int = 0) -> None:
        h, desc, alpha, bdesc, adesc, beta, ddesc, algo, ws = self._args
        if not self._scaled:
            r = self._fn(h, desc, alpha, b_ptr, bdesc, a_ptr, adesc, beta, d_ptr, ddesc, d_ptr, ddesc, algo,
                         workspace_ptr, ws, stream)
        else:
            with self._lock:  # cuBLAS's A is our B: its A scales are ours of B
                _set(_lib.cublasLtMatmulDescSetAttribute, desc, _DESC_A_SCALE_POINTER, scale_b_ptr, ctypes.c_void_p)
                _set(_lib.cublasLtMatmulDescSetAttribute, desc, _DESC_B_SCALE_POINTER, scale_a_ptr, ctypes.c_void_p)
                r = self._fn(h, desc, alpha, b_ptr, bdesc, a_ptr, adesc, beta, d_ptr, ddesc, d_ptr, ddesc, algo,
                             workspace_ptr, ws, stream)
        if r:
            _check(r, "cublasLtMatmul")


def _operands(a_strides, b_strides, m: int, n: int, k: int):
    """cuBLAS's (op, rows, cols, ld) of its A (our B) and its B (our A), or None: an operand without a unit stride."""
    ops = []
    for (s0, s1), rows, cols in ((b_strides, k, n), (a_strides, m, k)):  # cuBLAS's A is our B, its B our A
        if s1 == 1 and s0 >= max(cols, 1):
            ops.append((_OP_N, cols, rows, s0))  # row-major (rows, cols) = column-major (cols, rows), ld s0
        elif s0 == 1 and s1 >= max(rows, 1):
            ops.append((_OP_T, rows, cols, s1))
        else:
            return None
    return ops


def _types(in_dtype: str, b_dtype, out_dtype: str, scaling, ops):
    """(cuBLAS's A type, its B type, D type), or None where cuBLASLt is not given the combination here. FP8 needs
    a scaling mode, both operands K-major (cuBLAS's "TN") and not both e5m2; 16-bit types take no scales."""
    b_dtype = b_dtype or in_dtype
    if out_dtype not in _TYPES:
        return None
    if in_dtype in ("bfloat16", "float16") and b_dtype == in_dtype and scaling is None:
        return _TYPES[in_dtype], _TYPES[in_dtype], _TYPES[out_dtype]
    if in_dtype in _FP8_TYPES and b_dtype in _FP8_TYPES and scaling in SCALE_MODES:
        if (ops[0][0], ops[1][0]) != (_OP_T, _OP_N) or in_dtype == b_dtype == "float8_e5m2":
            return None
        return _FP8_TYPES[b_dtype], _FP8_TYPES[in_dtype], _TYPES[out_dtype]
    return None


def plan(device: int, in_dtype: str, out_dtype: str, m: int, n: int, k: int, a_strides, b_strides, d_stride: int,
         a_ptr: int, b_ptr: int, d_align: int = 256, *, b_dtype: str | None = None, scaling: str | None = None,
         fast_accum: bool = False):
    """The :class:`LtMatmul` of row-major ``D (m, n) = A (m, k) @ B (k, n)``, or None when cuBLASLt cannot take it
    (no library, a dtype combination it is not given here, an operand without a unit stride, a heuristic with no
    answer). ``a_strides``/``b_strides``: element strides of A and B (either may be transposed: one must be 1);
    ``d_stride``: D's row stride (its column stride is 1); ``a_ptr``, ``b_ptr``: addresses whose alignment the
    algorithm may assume; ``d_align``: the alignment every output address will have. FP8 (``in_dtype`` A's type,
    ``b_dtype`` B's, default the same): ``scaling`` one of :data:`SCALE_MODES` (the scale addresses come with each
    call), ``fast_accum`` as ``torch._scaled_mm``'s ``use_fast_accum``. Needs the device current."""
    if not available() or min(m, n, k) < 1 or d_stride < n:
        return None
    ops = _operands(a_strides, b_strides, m, n, k)
    types = _types(in_dtype, b_dtype, out_dtype, scaling, ops) if ops is not None else None
    if types is None:
        return None
    lib = _lib
    h = _handle(device)
    desc = ctypes.c_void_p()
    _check(lib.cublasLtMatmulDescCreate(ctypes.byref(desc), _COMPUTE_32F, _R_32F), "cublasLtMatmulDescCreate")
    setd = lib.cublasLtMatmulDescSetAttribute
    _set(setd, desc, _DESC_TRANSA, ops[0][0], ctypes.c_int32)
    _set(setd, desc, _DESC_TRANSB, ops[1][0], ctypes.c_int32)
    if scaling is not None:
        mode_a, mode_b = SCALE_MODES[scaling]
        _set(setd, desc, _DESC_A_SCALE_MODE, mode_b, ctypes.c_int32)  # cuBLAS's A is our B
        _set(setd, desc, _DESC_B_SCALE_MODE, mode_a, ctypes.c_int32)
        _set(setd, desc, _DESC_FAST_ACCUM, int(bool(fast_accum)), ctypes.c_int8)
    layouts = []
    for dtype, rows, cols, ld in ((types[0], *ops[0][1:]), (types[1], *ops[1][1:]), (types[2], n, m, d_stride)):
        lay = ctypes.c_void_p()
        _check(lib.cublasLtMatrixLayoutCreate(ctypes.byref(lay), dtype, rows, cols, ld), "cublasLtMatrixLayoutCreate")
        layouts.append(lay)
    res = _heuristic(lib, h, desc, layouts, a_ptr, b_ptr, d_align)
    if res is None:
        return None
    algo = _Heuristic.algo.offset  # keep the whole result alive; pass the address of its algo field
    args = (h, desc.value, ctypes.addressof(_ONE), layouts[0].value, layouts[1].value, ctypes.addressof(_ZERO),
            layouts[2].value, ctypes.addressof(res) + algo, int(res.workspace))
    what = f"{in_dtype}" if scaling is None else f"{in_dtype} x {b_dtype or in_dtype}, {scaling} scales"
    return LtMatmul((desc, layouts, res), args, int(res.workspace),
                    f"cuBLASLt {what} -> {out_dtype} ops ({ops[0][0]},{ops[1][0]}), workspace {res.workspace} B",
                    scaled=scaling is not None)


def _heuristic(lib, h, desc, layouts, a_ptr: int, b_ptr: int, d_align: int):
    """The first algorithm cuBLASLt's heuristic ranks for this problem, or None."""
    pref = ctypes.c_void_p()
    _check(lib.cublasLtMatmulPreferenceCreate(ctypes.byref(pref)), "cublasLtMatmulPreferenceCreate")
    try:
        setp = lib.cublasLtMatmulPreferenceSetAttribute
        _set(setp, pref, _PREF_MAX_WORKSPACE, WORKSPACE_BYTES, ctypes.c_uint64)
        for attr, align in ((_PREF_ALIGN_A, alignment(b_ptr)), (_PREF_ALIGN_B, alignment(a_ptr)),
                            (_PREF_ALIGN_C, d_align), (_PREF_ALIGN_D, d_align)):
            _set(setp, pref, attr, align, ctypes.c_uint32)
        res, count = _Heuristic(), ctypes.c_int(0)
        st = lib.cublasLtMatmulAlgoGetHeuristic(h, desc, layouts[0], layouts[1], layouts[2], layouts[2], pref, 1,
                                                ctypes.byref(res), ctypes.byref(count))
    finally:
        lib.cublasLtMatmulPreferenceDestroy(pref)
    if st or count.value < 1 or res.state:
        return None
    return res
