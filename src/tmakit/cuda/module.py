"""Loading cubins into the current (primary) context and looking up kernels."""

from __future__ import annotations

import threading

from .driver import check, cu, ensure_context
from .nvrtc import Compiled

__all__ = ["Kernel", "Module", "load_module"]


class Kernel:
    """A ``CUfunction`` plus its launch helpers. Call it: ``k(grid, block, *args, smem=..., cluster=...)``."""

    def __init__(self, module: Module, name: str, handle):
        self.module, self.name, self.handle = module, name, handle
        self._dyn_smem = 48 * 1024  # the default limit of dynamic shared memory
        self._non_portable = False
        self._configs: dict = {}

    def attribute(self, attr: str) -> int:
        """A ``CU_FUNC_ATTRIBUTE_*`` value, e.g. ``attribute("NUM_REGS")``."""
        d = cu()
        a = getattr(d.CUfunction_attribute, "CU_FUNC_ATTRIBUTE_" + attr)
        return int(check(d.cuFuncGetAttribute(a, self.handle), "cuFuncGetAttribute", kernel=self.name, attr=attr))

    def set_attribute(self, attr: str, value: int) -> None:
        d = cu()
        a = getattr(d.CUfunction_attribute, "CU_FUNC_ATTRIBUTE_" + attr)
        check(d.cuFuncSetAttribute(self.handle, a, int(value)), "cuFuncSetAttribute", kernel=self.name, attr=attr,
              value=value)

    def set_max_dynamic_smem(self, nbytes: int) -> None:
        """Allow ``nbytes`` of dynamic shared memory (needed above 48 KiB; 227 KiB max per block on sm_90)."""
        if nbytes > self._dyn_smem:
            self.set_attribute("MAX_DYNAMIC_SHARED_SIZE_BYTES", nbytes)
            self._dyn_smem = nbytes

    def allow_non_portable_cluster(self) -> None:
        """Opt in to clusters above the portable 8 CTAs (16 on H100/H200)."""
        if not self._non_portable:
            self.set_attribute("NON_PORTABLE_CLUSTER_SIZE_ALLOWED", 1)
            self._non_portable = True

    def max_active_clusters(self, cluster, block, smem: int = 0) -> int:
        """``cuOccupancyMaxActiveClusters`` for this kernel and launch shape (the dynamic shared-memory attribute is
        raised to ``smem`` first, as a launch does: the query fails above 48 KiB without it)."""
        from .launch import make_config

        if smem > self._dyn_smem:
            self.set_max_dynamic_smem(smem)
        cfg = make_config(self, _dim3(cluster), _dim3(block), smem, 0, _dim3(cluster))
        return int(check(cu().cuOccupancyMaxActiveClusters(self.handle, cfg), "cuOccupancyMaxActiveClusters",
                         kernel=self.name, cluster=cluster, block=block, smem=smem))

    def __call__(self, grid, block, *args, smem: int = 0, stream=None, cluster=None, non_portable: bool = False,
                 pdl: bool = False):
        from .launch import launch

        launch(self, grid, block, args, smem=smem, stream=stream, cluster=cluster, non_portable=non_portable, pdl=pdl)

    def __repr__(self) -> str:
        return f"Kernel({self.name!r})"


def _dim3(x) -> tuple[int, int, int]:
    from .launch import dim3

    return dim3(x)


class Module:
    """A loaded cubin (``cuModuleLoadData``) in the context current at load time."""

    def __init__(self, compiled: Compiled | bytes):
        self.compiled = compiled if isinstance(compiled, Compiled) else Compiled(cubin=bytes(compiled))
        self.context = ensure_context()
        self.handle = check(cu().cuModuleLoadData(self.compiled.cubin), "cuModuleLoadData",
                            cubin_bytes=len(self.compiled.cubin), key=self.compiled.key)
        self._kernels: dict[str, Kernel] = {}

    def kernel(self, name: str) -> Kernel:
        """The kernel ``name`` (an ``extern "C"`` name or a name expression given at compile time)."""
        k = self._kernels.get(name)
        if k is None:
            sym = self.compiled.symbol(name)
            h = check(cu().cuModuleGetFunction(self.handle, sym.encode()), "cuModuleGetFunction", name=sym)
            k = self._kernels[name] = Kernel(self, name, h)
        return k

    __getitem__ = kernel


_modules: dict = {}
_lock = threading.Lock()


def load_module(compiled: Compiled) -> Module:
    """Load ``compiled`` once per context (memoised on its cache key)."""
    ctx = ensure_context()
    key = (compiled.key or id(compiled), int(ctx))
    m = _modules.get(key)
    if m is None:
        with _lock:
            m = _modules.get(key)
            if m is None:
                m = _modules[key] = Module(compiled)
    return m
