"""Bounded memo tables: when a table is full, its oldest quarter goes (insertion order), not the whole table.

Dropping a whole table at once turns one call past the limit into a burst of first-time calls (re-planning,
re-encoding tensor maps) for every layout still in use; dropping the oldest entries keeps the ones a loop over a few
dozen layouts is reusing. Imports nothing from tmakit, so every layer may use it.
"""

from __future__ import annotations

from itertools import islice

__all__ = ["make_room"]


def make_room(table: dict, limit: int) -> None:
    """Delete the oldest quarter of ``table`` when it holds ``limit`` entries or more."""
    if len(table) >= limit:
        for key in list(islice(table, max(1, len(table) // 4))):
            table.pop(key, None)
