"""Deterministic cooperative scheduling of CTA programs: one OS thread per live CTA, one baton.

Only the thread holding the baton runs. A CTA hands the baton back at a scheduling point (a wait that is not yet
satisfied, a cluster barrier, ``tma_store_wait``, exit); the scheduler then completes every in-flight TMA operation
and resumes the next runnable CTA in rank order. Worker threads are pooled across launches. A cluster of one CTA
runs on the launching thread: it completes its in-flight operations in place at a wait, so it never parks.
"""

from __future__ import annotations

import threading

from .errors import EmuError

_tls = threading.local()


class Aborted(BaseException):
    """Raised inside a parked CTA program to unwind it when the launch fails."""


def current_cta():
    """The CTA whose program runs on this thread."""
    cta = getattr(_tls, "cta", None)
    if cta is None:
        raise EmuError("tmakit.emu device functions can only be called inside a kernel run by tk.emu.launch")
    return cta


class Worker:
    """A pooled thread that runs CTA programs handed to it."""

    def __init__(self, sched):
        self.sched = sched
        self.go = threading.Lock()
        self.go.acquire()
        self.cta = None
        threading.Thread(target=self._loop, daemon=True, name="tmakit-emu-cta").start()

    def _loop(self):
        while True:
            self.go.acquire()
            cta = self.cta
            _tls.cta = cta
            try:
                cta.run()
            finally:
                _tls.cta = None
                self.cta = None
                self.sched.back.release()


class Scheduler:
    """The baton: ``resume(cta)`` from the launching thread, ``park(cta)`` from a CTA's thread."""

    def __init__(self):
        self.back = threading.Lock()
        self.back.acquire()
        self.idle: list[Worker] = []

    def resume(self, cta) -> None:
        if cta.worker is None:
            cta.worker = self.idle.pop() if self.idle else Worker(self)
            cta.worker.cta = cta
        cta.worker.go.release()
        self.back.acquire()
        if cta.state in ("exited", "failed", "aborted"):
            self.idle.append(cta.worker)
            cta.worker = None

    @staticmethod
    def run_inline(cta) -> None:
        """Run a lone CTA (cluster of 1) on the launching thread: it never needs to hand over the baton."""
        _tls.cta = cta
        try:
            cta.run()
        finally:
            _tls.cta = None

    def park(self, cta) -> None:
        self.back.release()
        cta.worker.go.acquire()
        if cta.abort:
            raise Aborted()


SCHEDULER = Scheduler()
LAUNCH_LOCK = threading.Lock()
