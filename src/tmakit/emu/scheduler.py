"""Deterministic cooperative scheduling of CTA programs: one OS thread per live CTA, one baton per cluster.

Only the thread holding the baton runs. A CTA hands the baton back at a scheduling point (a wait that is not yet
satisfied, a cluster barrier, ``tma_store_wait``, exit); the scheduler then completes every in-flight TMA operation
and resumes the next runnable CTA in rank order. Worker threads are pooled across launches. A cluster of one CTA
runs on the launching thread (unless the launch has a time limit): it completes its in-flight operations in place at
a wait, so it never parks.

Stopping: when the launching thread is interrupted (Ctrl-C) or a time limit trips while a CTA runs, ``stop`` raises
``Aborted`` in that CTA (at its next emulator call, or asynchronously in pure Python code) and waits a moment for the
baton. A CTA that swallows ``Aborted`` is frozen at its next emulator call; one that never returns is abandoned. A
stopped worker is never reused, and every cluster has its own baton, so nothing of a stopped launch reaches the next.
"""

from __future__ import annotations

import ctypes
import sys
import threading
import time

from .errors import EmuError

_tls = threading.local()
STOP_GRACE_S = 1.0


class Aborted(BaseException):
    """Raised inside a CTA program to unwind it when the launch fails or is stopped."""


def current_cta():
    """The CTA whose program runs on this thread (raises ``Aborted`` in a CTA whose launch is being stopped)."""
    cta = getattr(_tls, "cta", None)
    if cta is None:
        raise EmuError("tmakit.emu device functions can only be called inside a kernel run by tk.emu.launch")
    if cta.abort:
        unwind(cta)
    return cta


def unwind(cta) -> None:
    """Raise ``Aborted`` in a CTA being stopped; if it caught the last one and carried on, freeze its thread (the
    launch goes on without it)."""
    if cta.abort_raised:
        cta.state = "abandoned"
        cta.cluster.baton.release()
        threading.Event().wait()  # never returns: the thread is given up
    cta.abort_raised = True
    raise Aborted()


class Worker:
    """A pooled thread that runs CTA programs handed to it."""

    def __init__(self):
        self.go = threading.Semaphore(0)
        self.cta = None
        self.retired = False
        self.thread = threading.Thread(target=self._loop, daemon=True, name="tmakit-emu-cta")
        self.thread.start()

    def _loop(self):
        try:
            while True:
                self.go.acquire()
                if self.retired:
                    return
                cta = self.cta
                _tls.cta = cta
                try:
                    cta.run()
                finally:
                    _tls.cta = None
                    cta.cluster.baton.release()
                if self.retired:
                    return
        except BaseException:  # noqa: BLE001 - an Aborted sent while the CTA was being stopped: the thread ends
            pass


def _raise_in(thread, exc) -> None:
    """``PyThreadState_SetAsyncExc``: raise ``exc`` in ``thread`` at its next bytecode (``None`` cancels)."""
    if thread.ident is not None:
        ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(thread.ident),
                                                   ctypes.py_object(exc) if exc is not None else None)


def where(cta) -> str:
    """The kernel line a running CTA is at (innermost frame outside the emulator)."""
    worker = cta.worker
    frame = sys._current_frames().get(worker.thread.ident) if worker is not None else None
    inner = None
    while frame is not None:
        if "/tmakit/emu/" not in frame.f_code.co_filename.replace("\\", "/"):
            inner = inner or frame
        frame = frame.f_back
    if inner is None:
        return "running"
    return f"running at {inner.f_code.co_filename}:{inner.f_lineno} in {inner.f_code.co_name}"


class TimeUp(Exception):
    """The launch's time limit passed while a CTA held the baton."""


class Scheduler:
    """The baton: ``resume(cta)`` from the launching thread, ``park(cta)`` from a CTA's thread."""

    def __init__(self):
        self.idle: list[Worker] = []

    def resume(self, cta, deadline: float | None = None) -> None:
        """Run ``cta`` until it parks, exits or fails. Raises ``TimeUp`` past ``deadline``; interrupted (Ctrl-C),
        it stops the CTA before the interrupt goes on."""
        if cta.worker is None:
            cta.worker = self.idle.pop() if self.idle else Worker()
            cta.worker.cta = cta
        cta.worker.go.release()
        try:
            if not _acquire(cta.cluster.baton, deadline):
                cta.stopped_at = where(cta)
                raise TimeUp()
        except BaseException:
            self.stop(cta)
            raise
        if cta.state == "abandoned":
            self.retire(cta)
        elif cta.state in ("exited", "failed", "aborted"):
            self.idle.append(cta.worker)
            cta.worker = None

    def stop(self, cta) -> None:
        """Take the baton back from a CTA that holds it (launching thread), then retire its worker."""
        cta.abort = True
        worker, baton = cta.worker, cta.cluster.baton
        end = time.monotonic() + STOP_GRACE_S
        try:
            while not baton.acquire(timeout=0.05):
                if not worker.thread.is_alive() or time.monotonic() > end:
                    cta.state = "abandoned"
                    break
                _raise_in(worker.thread, Aborted)
        except BaseException:  # noqa: BLE001 - interrupted again: give the thread up
            cta.state = "abandoned"
        _raise_in(worker.thread, None)
        self.retire(cta)

    @staticmethod
    def retire(cta) -> None:
        """Never reuse this CTA's worker; wake it so that it unwinds and ends."""
        worker, cta.worker = cta.worker, None
        if worker is not None:
            worker.retired = True
            worker.go.release()

    @staticmethod
    def run_inline(cta) -> None:
        """Run a lone CTA (cluster of 1) on the launching thread: it never needs to hand over the baton."""
        _tls.cta = cta
        try:
            cta.run()
        finally:
            _tls.cta = None

    @staticmethod
    def park(cta) -> None:
        worker = cta.worker
        cta.cluster.baton.release()
        worker.go.acquire()
        if cta.abort:
            unwind(cta)


def _acquire(sem, deadline: float | None) -> bool:
    if deadline is None:
        return sem.acquire()
    return sem.acquire(timeout=min(max(0.0, deadline - time.monotonic()), threading.TIMEOUT_MAX))


SCHEDULER = Scheduler()
LAUNCH_LOCK = threading.Lock()
