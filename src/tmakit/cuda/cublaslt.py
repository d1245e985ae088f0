"""cuBLASLt through ctypes: one planned 16-bit matmul per problem, launched with pre-built descriptors.

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

__all__ = ["LtMatmul", "alignment", "available", "plan"]

# cudaDataType_t, cublasComputeType_t, cublasOperation_t and attribute ids (cublasLt.h / library_types.h)
_R_32F, _R_16F, _R_16BF = 0, 2, 14
_COMPUTE_32F = 68
_OP_N, _OP_T = 0, 1
_DESC_TRANSA, _DESC_TRANSB = 3, 4
_PREF_MAX_WORKSPACE, _PREF_ALIGN_A, _PREF_ALIGN_B, _PREF_ALIGN_C, _PREF_ALIGN_D = 1, 5, 6, 7, 8
_TYPES = {"bfloat16": _R_16BF, "float16": _R_16F, "float32": _R_32F}
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
    """One planned problem: ``__call__(a_ptr, b_ptr, d_ptr, workspace_ptr, stream)`` runs ``D = A @ B`` with the
    algorithm cuBLASLt's heuristic ranked first for these shapes, strides, dtypes and address alignments. The
    workspace must hold ``workspace_bytes``, what the chosen algorithm uses (0: pass 0), and belong to ``stream``
    (stream order keeps it safe)."""

    __slots__ = ("_objs", "_args", "_fn", "workspace_bytes", "describe")

    def __init__(self, objs, args, workspace_bytes: int, describe: str):
        self._objs, self._args, self._fn = objs, args, _lib.cublasLtMatmul
        self.workspace_bytes, self.describe = workspace_bytes, describe

    def __call__(self, a_ptr: int, b_ptr: int, d_ptr: int, workspace_ptr: int, stream: int) -> None:
        h, desc, alpha, bdesc, adesc, beta, ddesc, algo, ws = self._args
        r = self._fn(h, desc, alpha, b_ptr, bdesc, a_ptr, adesc, beta, d_ptr, ddesc, d_ptr, ddesc, algo,
                     workspace_ptr, ws, stream)
        if r:
            _check(r, "cublasLtMatmul")


def plan(device: int, in_dtype: str, out_dtype: str, m: int, n: int, k: int, a_strides, b_strides, d_stride: int,
         a_ptr: int, b_ptr: int, d_align: int = 256):
    """The :class:`LtMatmul` of row-major ``D (m, n) = A (m, k) @ B (k, n)``, or None when cuBLASLt cannot take it
    (no library, a dtype it is not given here, an operand without a unit stride, a heuristic with no answer).
    ``a_strides``/``b_strides``: element strides of A and B (either may be transposed: one must be 1);
    ``d_stride``: D's row stride (its column stride is 1); ``a_ptr``, ``b_ptr``: addresses whose alignment the
    algorithm may assume; ``d_align``: the alignment every output address will have. Needs the device current."""
    if not available() or in_dtype not in ("bfloat16", "float16") or out_dtype not in _TYPES:
        return None
    if min(m, n, k) < 1:
        return None
    ops = []
    for (s0, s1), rows, cols in ((b_strides, k, n), (a_strides, m, k)):  # cuBLAS's A is our B, its B our A
        if s1 == 1 and s0 >= max(cols, 1):
            ops.append((_OP_N, cols, rows, s0))  # row-major (rows, cols) = column-major (cols, rows), ld s0
        elif s0 == 1 and s1 >= max(rows, 1):
            ops.append((_OP_T, rows, cols, s1))
        else:
            return None
    if d_stride < n:
        return None
    lib, tin, tout = _lib, _TYPES[in_dtype], _TYPES[out_dtype]
    h = _handle(device)
    desc = ctypes.c_void_p()
    _check(lib.cublasLtMatmulDescCreate(ctypes.byref(desc), _COMPUTE_32F, _R_32F), "cublasLtMatmulDescCreate")
    _set(lib.cublasLtMatmulDescSetAttribute, desc, _DESC_TRANSA, ops[0][0], ctypes.c_int32)
    _set(lib.cublasLtMatmulDescSetAttribute, desc, _DESC_TRANSB, ops[1][0], ctypes.c_int32)
    layouts = []
    for dtype, rows, cols, ld in ((tin, *ops[0][1:]), (tin, *ops[1][1:]), (tout, n, m, d_stride)):
        lay = ctypes.c_void_p()
        _check(lib.cublasLtMatrixLayoutCreate(ctypes.byref(lay), dtype, rows, cols, ld), "cublasLtMatrixLayoutCreate")
        layouts.append(lay)
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
    algo = _Heuristic.algo.offset  # keep the whole result alive; pass the address of its algo field
    args = (h, desc.value, ctypes.addressof(_ONE), layouts[0].value, layouts[1].value, ctypes.addressof(_ZERO),
            layouts[2].value, ctypes.addressof(res) + algo, int(res.workspace))
    return LtMatmul((desc, layouts, res), args, int(res.workspace),
                    f"cuBLASLt {in_dtype}->{out_dtype} ops ({ops[0][0]},{ops[1][0]}), workspace {res.workspace} B")
