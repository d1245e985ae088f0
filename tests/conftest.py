"""Shared pytest hooks: tests marked ``gpu`` skip cleanly without a Hopper GPU (CI has none); the kernel cache lives
in a temporary directory for the session (tests never write to ``~/.cache/tmakit``)."""

from __future__ import annotations

import functools
import os
import shutil
import tempfile

import pytest

_KERNEL_CACHE = "TMAKIT_CACHE_DIR"
_saved_cache_env: list = []


def pytest_configure(config):
    """Before collection (some test modules compile at import): one temporary kernel cache for the session."""
    _saved_cache_env.append((os.environ.get(_KERNEL_CACHE), tempfile.mkdtemp(prefix="tmakit-test-cache-")))
    os.environ[_KERNEL_CACHE] = _saved_cache_env[-1][1]


def pytest_unconfigure(config):
    if not _saved_cache_env:
        return
    old, tmp = _saved_cache_env.pop()
    if old is None:
        os.environ.pop(_KERNEL_CACHE, None)
    else:
        os.environ[_KERNEL_CACHE] = old
    shutil.rmtree(tmp, ignore_errors=True)


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
