"""``launch(kernel, grid, cluster, *args)``: run one Python program per CTA, cluster by cluster."""

from __future__ import annotations

import functools
import itertools
import time
import warnings

import numpy as np

from ..layout.int_tuple import LayoutError
from ..layout.tensor import array_span
from .checks import as_int
from .cluster import Cluster
from .cta import CTA, Dim3
from .diagnostics import deadlock_message
from .errors import Deadlock, EmuError, ExitError, LaunchError, RaceError, TimeLimitExceeded
from .global_memory import GLOBAL
from .scheduler import LAUNCH_LOCK, SCHEDULER, STOP_GRACE_S, TimeUp, current_cta
from .shared_memory import DEFAULT_SMEM_BYTES, SharedMemory

MAX_SMEM_BYTES = 227 * 1024


class EmuWarning(UserWarning):
    """A hazard reported instead of raised (``launch(..., strict=False)``)."""


GRID_LIMITS = (2**31 - 1, 65535, 65535)  # CUDA's maximum gridDim.x, .y, .z


def dim3(x, what: str, limits=GRID_LIMITS) -> Dim3:
    """1 to 3 positive integers (no rounding of 2.5) within ``limits`` per axis."""
    t = (x,) if not isinstance(x, (tuple, list)) else tuple(x)
    if not 1 <= len(t) <= 3:
        raise LaunchError(f"{what} must be 1 to 3 positive ints, got {x!r}")
    t = tuple(as_int(v, f"{what} {x!r}: {'xyz'[i]}", 1, limits[i], LaunchError) for i, v in enumerate(t))
    return Dim3(*t)


def _is_dim(x) -> bool:
    return isinstance(x, (tuple, list, Dim3)) and 1 <= len(x) <= 3 and all(
        isinstance(v, (int, np.integer)) for v in x)


def _arrays(args, kwargs):
    """numpy arrays among the arguments (also inside lists/tuples/dicts and array-backed tk tensors)."""
    found = []

    def visit(x, depth=0):
        if isinstance(x, np.ndarray):
            found.append(x)
        elif getattr(getattr(x, "iterator", None), "array", None) is not None:
            found.append(x.iterator.array)
        elif depth < 2 and isinstance(x, (list, tuple)):
            for v in x:
                visit(v, depth + 1)
        elif depth < 2 and isinstance(x, dict):
            for v in x.values():
                visit(v, depth + 1)

    for a in itertools.chain(args, kwargs.values()):
        visit(a)
    spans = []  # a strided view is global memory as the span of its own memory (never a copy)
    for a in found:
        try:
            spans.append(a if a.flags.c_contiguous else array_span(a)[0])
        except LayoutError:
            pass  # byte strides that are not whole elements: no tensor map can describe them anyway
    return spans


class Launch:
    """One emulated kernel launch. ``stats`` counts TMA instructions by kind."""

    def __init__(self, program, grid: Dim3, cluster: Dim3, smem_bytes: int, strict: bool, memory,
                 time_limit: float | None = None):
        self.program, self.grid, self.cluster, self.strict, self.memory = program, grid, cluster, strict, memory
        self.smem_bytes, self.time_limit = smem_bytes, time_limit
        self.deadline: float | None = None
        self.clusters_done = 0
        self.stats: dict[str, int] = {}
        self._pool: list[SharedMemory] = []

    def report(self, exc: EmuError) -> None:
        """A hazard: raised in strict mode, else a warning."""
        if self.strict:
            raise exc
        warnings.warn(str(exc), EmuWarning, stacklevel=2)

    def run(self) -> None:
        """Cluster by cluster (x fastest), each created when it runs."""
        g, c = self.grid, self.cluster
        if self.time_limit is not None:
            self.deadline = time.monotonic() + self.time_limit
        for z in range(g.z // c.z):
            for y in range(g.y // c.y):
                for x in range(g.x // c.x):
                    self.run_cluster(Dim3(x, y, z))
                    self.clusters_done += 1

    def _smem(self) -> SharedMemory:
        return self._pool.pop() if self._pool else SharedMemory(self.smem_bytes)

    def run_cluster(self, cid: Dim3) -> None:
        c = self.cluster
        cl = Cluster(self, cid, c)
        for rank, (z, y, x) in enumerate(itertools.product(range(c.z), range(c.y), range(c.x))):
            local = Dim3(x, y, z)
            block = Dim3(cid.x * c.x + x, cid.y * c.y + y, cid.z * c.z + z)
            cta = CTA(cl, rank, local, block, self._smem())
            cta.program = self.program
            cl.ctas.append(cta)
        try:
            self.schedule(cl)
            self.finish(cl)
        finally:
            self.abort(cl)
            for cta in cl.ctas:
                cta.smem.reset()
                self._pool.append(cta.smem)

    def schedule(self, cl: Cluster) -> None:
        start = 0
        while True:
            cta = self.pick(cl, start)
            if cta is None:
                if cl.inflight:
                    cl.deliver_all()
                    continue
                if all(x.state == "exited" for x in cl.ctas):
                    return
                raise Deadlock(deadlock_message(cl))
            if cl.size == 1 and self.deadline is None:
                SCHEDULER.run_inline(cta)
            else:
                try:
                    SCHEDULER.resume(cta, self.deadline)
                except TimeUp:
                    raise TimeLimitExceeded(self.time_report(cl)) from None
            if cta.state == "failed":
                err = cta.error
                if hasattr(err, "add_note"):
                    err.add_note(f"(in {cta.label} of cluster {cl.cid}, tk.emu.launch)")
                raise err
            if cta.state == "exited":
                self.on_exit(cl, cta)
            cl.deliver_all()
            start = cta.rank + 1

    @staticmethod
    def pick(cl: Cluster, start: int):
        n = cl.size
        for k in range(n):
            cta = cl.ctas[(start + k) % n]
            if cta.state == "new" or (cta.state == "blocked" and cta.block.ready()):
                return cta
        return None

    def on_exit(self, cl: Cluster, cta) -> None:
        cl.exit(cta)
        tmem = getattr(cta, "tmem", None)  # Blackwell TMEM (emu/tmem.py): every allocation freed before exit
        if tmem is not None and tmem.allocs:
            self.report(ExitError(tmem.leak_message()))
        unwaited = [op for op in cta.bulk_ops() if not op.waited]
        if unwaited:
            self.report(ExitError(
                f"{cta.label} exited with {len(unwaited)} bulk store/reduce operation(s) not waited for "
                f"(first: {unwaited[0].what}): call tma_store_arrive() then tma_store_wait(0) before exit, "
                "the shared source must stay valid until the bulk read completes"))
        pending = cl.targets(cta)
        if pending:
            self.report(ExitError(f"{cta.label} exited while {pending[0].what} from {pending[0].issuer.label} is "
                                  "still writing its shared memory: wait on its mbarrier (or cluster_sync()) first; "
                                  "a parity wait naming the previous phase returns at once"))

    def finish(self, cl: Cluster) -> None:
        if cl.hazards:
            self.report(RaceError("\n".join(cl.hazards)))
        for cta in cl.ctas:
            for notes in cta.lost.values():
                self.report(RaceError(notes[0]))
            for b in cta.barriers.values():
                if b.remote_signaled and not b.fenced:
                    self.report(RaceError(f"{b.name} was signalled by peer CTAs but {cta.label} never executed "
                                          "fence_barrier_init() after initializing it"))

    def time_report(self, cl: Cluster) -> str:
        lines = [f"the launch ran past its time limit of {self.time_limit} s in cluster {cl.cid} ("
                 f"{self.clusters_done} cluster(s) finished before it); an endless loop in the kernel? Where each "
                 "CTA of the cluster was:"]
        for cta in cl.ctas:
            state = cta.stopped_at or (cta.block.describe() if cta.state == "blocked" and cta.block else cta.state)
            lines.append(f"  {cta.label}: {state}")
        return "\n".join(lines)

    @staticmethod
    def abort(cl: Cluster) -> None:
        """Unwind the parked CTAs of a failed cluster (each gets ``Aborted``; one that will not end is given up)."""
        for cta in cl.ctas:
            if cta.state == "blocked" and cta.worker is not None:
                cta.abort = True
                try:
                    SCHEDULER.resume(cta, time.monotonic() + STOP_GRACE_S)
                except TimeUp:
                    pass


def launch(kernel, grid, cluster=(1, 1, 1), *args, smem_bytes: int = DEFAULT_SMEM_BYTES, strict: bool = True,
           memory=None, non_portable_cluster: bool = False, time_limit: float | None = None, **kwargs) -> dict:
    """Run ``kernel(*args, **kwargs)`` once per CTA of ``grid`` (in CTAs), cluster by cluster.

    ``cluster`` may be omitted when the first argument is not a 1-3 tuple of ints. Numpy arrays among the
    arguments are global memory for the launch. ``strict=False`` turns race/exit reports into warnings (deadlocks
    and illegal instructions always raise). ``time_limit`` (seconds) stops a launch that runs longer with
    ``TimeLimitExceeded``, saying where each CTA was. Returns the TMA instruction counts.
    """
    if not _is_dim(cluster):
        args, cluster = (cluster, *args), (1, 1, 1)
    g, c = dim3(grid, "grid"), dim3(cluster, "cluster")
    smem_bytes = as_int(smem_bytes, "smem_bytes", None, None, LaunchError)
    if time_limit is not None and (isinstance(time_limit, bool) or not isinstance(time_limit, (int, float))
                                   or not 0 < time_limit < float("inf")):
        raise LaunchError(f"time_limit must be a positive number of seconds (or None), got {time_limit!r}")
    if g.x % c.x or g.y % c.y or g.z % c.z:
        raise LaunchError(f"grid {g} is not divisible by cluster {c} (CUDA_ERROR_INVALID_CLUSTER_SIZE, 912)")
    size = c.x * c.y * c.z
    if size > (16 if non_portable_cluster else 8):
        raise LaunchError(f"cluster of {size} CTAs: portable clusters hold at most 8, 16 with "
                          "non_portable_cluster=True (CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED)")
    if not 0 < smem_bytes <= MAX_SMEM_BYTES:
        raise LaunchError(f"smem_bytes {smem_bytes} outside 1..{MAX_SMEM_BYTES} (227 KiB per CTA on Hopper)")
    try:
        current_cta()
    except EmuError:
        pass
    else:
        raise LaunchError("tk.emu.launch cannot be called from inside an emulated kernel")
    memory = memory or GLOBAL
    arrays = _arrays(args, kwargs)
    with LAUNCH_LOCK:
        for a in arrays:
            memory.register(a)
        try:
            run = Launch(functools.partial(kernel, *args, **kwargs), g, c, smem_bytes, strict, memory, time_limit)
            run.run()
        finally:
            for a in arrays:
                memory.unregister(a)
    return run.stats
