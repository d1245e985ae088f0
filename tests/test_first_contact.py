"""First contact: the test suite's own hygiene, the README's set-up, and the CLI's first commands."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path


def test_tests_use_a_temporary_kernel_cache():
    """The suite compiles hundreds of kernels; they go to a temporary directory, never ~/.cache/tmakit."""
    d = Path(os.environ["TMAKIT_CACHE_DIR"]).resolve()
    assert d.is_relative_to(Path(tempfile.gettempdir()).resolve())
    assert not d.is_relative_to((Path.home() / ".cache").resolve())
