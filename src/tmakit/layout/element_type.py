"""Element types as tensors name them: numpy dtypes, or tmakit's tags for CuTe types numpy lacks (``tk.half_t``,
``tk.float_e4m3_t``, ... in tmakit.mma.numeric). Kept here, below both layers, so the layout layer's tensor
algorithms can compare element types without importing the mma layer."""

from __future__ import annotations

import numpy as np


def same_type(a, b) -> bool:
    """CuTe's ``is_same`` of two element types: tmakit's tag types (``tk.half_t``, ...) are singletons, numpy dtypes
    compare by value."""
    if a is b:
        return True
    try:
        return np.dtype(a) == np.dtype(b)
    except TypeError:  # a tag type numpy has no dtype for
        return False
