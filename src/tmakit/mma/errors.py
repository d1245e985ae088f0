"""The SM100 host algebra's one exception type."""

from __future__ import annotations

from ..layout import LayoutError


class MmaError(LayoutError):
    """An SM100 MMA / TMEM / UMMA-descriptor rule was broken: the message names the rule, the value and the fix."""
