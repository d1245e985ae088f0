"""Errors of the emulator: one base class, one subclass per kind of failure a real GPU would show."""

from __future__ import annotations


class EmuError(Exception):
    """Base of every error raised by ``tmakit.emu``."""


class TmaUnitError(EmuError, ValueError):
    """A TMA instruction the emulator cannot execute (bad operands, unsupported descriptor)."""


class IllegalInstruction(TmaUnitError):
    """The real GPU would kill the context (sticky ``cudaErrorIllegalInstruction`` / misaligned address)."""


class IllegalAddress(TmaUnitError):
    """An access outside global or shared memory (``cudaErrorIllegalAddress`` on the GPU)."""


class BarrierError(EmuError):
    """An mbarrier used against its PTX rules (count range, re-init of a live barrier, over-arrival)."""


class Deadlock(EmuError):
    """Every CTA of a cluster waits and nothing is in flight: the kernel would hang on the GPU."""


class RaceError(EmuError):
    """A data race or visibility bug: missing proxy fence, barrier init not visible, smem reused too early."""


class ExitError(EmuError):
    """A CTA exits while its shared memory may still be written or read (pending TMA or bulk stores)."""


class LaunchError(EmuError, ValueError):
    """Bad launch or host-side setup (grid not divisible by the cluster, cluster too large, bad ``alloc`` shape)."""


class TimeLimitExceeded(EmuError):
    """The launch ran past its ``time_limit`` (an endless loop?); the message says where each CTA was."""
