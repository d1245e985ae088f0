"""Errors of the TMA host layer.

The driver answers every bad descriptor with ``CUDA_ERROR_INVALID_VALUE``; ``TmaDescriptorError`` says which
rule failed, the offending value and how to fix it.
"""

from __future__ import annotations


class TmaError(Exception):
    """Base of every error raised by ``tmakit.tma``."""


class TmaDescriptorError(TmaError, ValueError):
    """A TMA descriptor (or a request to build one) breaks a rule.

    Attributes: ``rule`` (short id such as ``"globalStrides.multiple16"``), ``what`` (the rule in words),
    ``value`` (the offending value), ``where`` (the value as shown, e.g. ``"globalStrides[0] = 200 bytes"``)
    and ``fix`` (what to change).
    """

    def __init__(self, rule: str, what: str, value, fix: str, where: str | None = None):
        self.rule = rule
        self.what = what
        self.value = value
        self.where = where if where is not None else repr(value)
        self.fix = fix
        super().__init__(f"{what} [{rule}]: got {self.where}. Fix: {fix}")

    def __reduce__(self):
        return (type(self), (self.rule, self.what, self.value, self.fix, self.where))
