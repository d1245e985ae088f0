"""Run one test body from several threads at once and report the first failure (the replayed and packed launch
paths keep per-thread state; these tests check that threads sharing a launcher do not disturb each other)."""

from __future__ import annotations

import threading


def in_threads(body, threads: int = 4, calls: int = 20) -> None:
    """Call ``body()`` ``calls`` times in each of ``threads`` threads started together; re-raise the first error."""
    errors = []

    def work():
        try:
            for _ in range(calls):
                body()
        except Exception as e:  # noqa: BLE001 - re-raised below
            errors.append(e)

    ts = [threading.Thread(target=work) for _ in range(threads)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    if errors:
        raise errors[0]
