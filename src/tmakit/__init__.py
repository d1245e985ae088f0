"""tmakit: Hopper's Tensor Memory Accelerator from Python.

``import tmakit as tk`` gives CuTe's layout algebra (``tk.make_layout`` ...), the TMA host API
(``tk.make_tma_copy``, ``tk.TensorMap`` ...) and the emulator (``tk.emu``).
"""

__version__ = "0.1.0"

from . import emu  # noqa: F401,E402
from .layout import *  # noqa: F401,F403
from .layout import __all__ as _layout_all
from .layout import abs, max, min, sum  # noqa: F401,A004 - CuTe's tk.max ...; not in __all__ (they shadow builtins)
from .mma import *  # noqa: F401,F403,E402
from .mma import __all__ as _mma_all  # noqa: E402
from .mma.latex import format_latex_tv, print_latex_tv  # noqa: E402 - CuTe's print_latex_tv (util/print_latex.hpp)
from .mma.recast import recast  # noqa: E402 - CuTe's recast<NewType>(tensor)
from .tma import *  # noqa: F401,F403
from .tma import __all__ as _tma_all

__all__ = ["__version__", "emu", *_layout_all, *_tma_all, *_mma_all, "recast", "format_latex_tv", "print_latex_tv"]


def __getattr__(name):
    """``tk.ops`` is imported on first use, so ``import tmakit`` needs neither torch nor the GPU runtime."""
    if name == "ops":
        import importlib

        return importlib.import_module(".ops", __name__)
    raise AttributeError(f"module 'tmakit' has no attribute {name!r}")
