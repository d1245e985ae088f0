"""Shared pytest hooks: tests marked ``gpu`` skip cleanly without a Hopper GPU (CI has none)."""

from __future__ import annotations

import functools

import pytest


@functools.lru_cache(maxsize=None)
def _hopper_gpu() -> bool:
    try:
        from tmakit.cuda import is_available
    except Exception:
        return False
    return is_available()


def pytest_collection_modifyitems(config, items):
    gpu_items = [item for item in items if "gpu" in item.keywords]
    if gpu_items and not _hopper_gpu():
        skip = pytest.mark.skip(reason="needs a Hopper (sm_90+) GPU with cuda-bindings")
        for item in gpu_items:
            item.add_marker(skip)
