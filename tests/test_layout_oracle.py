"""tmakit against CuTe itself: every case of tests/data/cute_oracle.txt must print exactly what CuTe printed.

The golden file is produced by tests/oracle/regen.sh (CuTe C++ compiled on the host; no GPU); this test only
reads it. Each case is an expression in the spelling of tests/oracle/gen_cpp.py, evaluated here with tmakit.
"""

from __future__ import annotations

import ast
import re
import sys
from pathlib import Path

import numpy as np
import pytest

import tmakit as tk
from tmakit.layout.integer import to_str
from tmakit.mma import numeric

sys.path.insert(0, str(Path(__file__).parent / "oracle"))
from golden import parse_blocks  # noqa: E402

GOLDEN = Path(__file__).parent / "data" / "cute_oracle.txt"


_parse = parse_blocks


class _Names(dict):
    """Evaluation namespace: ``_16`` is ``tk.Int(16)``, ``_m1`` is ``tk.Int(-1)``; the rest is CuTe's API."""

    def __missing__(self, key):
        if re.fullmatch(r"_\d+", key):
            return tk.Int(int(key[1:]))
        if re.fullmatch(r"_m\d+", key):
            return tk.Int(-int(key[2:]))
        return getattr(tk, key)


NAMES = _Names(
    L=tk.make_layout,
    Sw=tk.Swizzle,
    call=lambda f, *args: f(*args),
    mode=tk.get,
    append_n=lambda *a: tk.append(*a[:-1], n=a[-1]),
    prepend_n=lambda *a: tk.prepend(*a[:-1], n=a[-1]),
    arr=lambda *xs: xs,
    print_layout=tk.format_layout,
    print_tensor=tk.format_tensor,
    print_latex=tk.format_latex,
    print_latex_tv=tk.format_latex_tv,
    slice_and_offset=lambda crd, layout: layout.slice_and_offset(crd),
    compose=lambda x, *tilers: x.compose(*tilers),
    tile=lambda x, *tilers: x.tile(*tilers),
    # TiledCopy / ThrCopy / ThrMMA members (tests/oracle/gen_cpp.py METHODS)
    get_slice=lambda x, i: x.get_slice(i),
    partition_S=lambda x, t: x.partition_S(t), partition_D=lambda x, t: x.partition_D(t),
    retile_S=lambda x, t: x.retile_S(t), retile_D=lambda x, t: x.retile_D(t),
    get_layoutS_TV=lambda x: x.get_layoutS_TV(), get_layoutD_TV=lambda x: x.get_layoutD_TV(),
    partition_A=lambda x, t: x.partition_A(t), partition_B=lambda x, t: x.partition_B(t),
    partition_C=lambda x, t: x.partition_C(t),
    partition_fragment_A=lambda x, t: x.partition_fragment_A(t),
    partition_fragment_B=lambda x, t: x.partition_fragment_B(t),
    partition_fragment_C=lambda x, t: x.partition_fragment_C(t),
    layout=lambda t: t.layout,
    # element types of recast_layout(x, OldType, NewType) (tests/oracle/gen_cpp.py TYPES)
    uint8_t=np.uint8, uint16_t=np.uint16, uint32_t=np.uint32, uint64_t=np.uint64, uint128_t=numeric.uint128_t,
    half_t=tk.half_t, float_e2m1_t=tk.float_e2m1_t, float_e2m3_t=tk.float_e2m3_t,
)

# cases whose output is a table or picture
PRINTS = ("print_layout(", "print_tensor(", "print_latex(", "print_latex_tv(")
CASES = _parse(GOLDEN.read_text())


def _eval(expr: str):
    """Evaluate a case; the names it uses are resolved up front, so lambdas in it see them too."""
    tree = ast.parse(expr, mode="eval")
    bound = {a.arg for n in ast.walk(tree) if isinstance(n, ast.Lambda) for a in n.args.args}
    env = {n.id: NAMES[n.id] for n in ast.walk(tree) if isinstance(n, ast.Name) and n.id not in bound}
    return eval(compile(tree, "<case>", "eval"), {"__builtins__": {}, **env})  # noqa: S307 - our own cases


def test_golden_file_is_large_enough():
    assert len(CASES) >= 150


REJECTED = "!!! rejected at compile time"  # tests/oracle/run_oracle.py: CuTe's static_assert refuses the case


@pytest.mark.parametrize("expr,expected", CASES, ids=[c[0] for c in CASES])
def test_matches_cute(expr, expected):
    if expected == REJECTED:
        with pytest.raises(tk.LayoutError):
            _eval(expr)
        return
    value = _eval(expr)
    got = value.rstrip("\n") if expr.startswith(PRINTS) else to_str(value)
    if isinstance(value, bool):  # a run-time predicate: CuTe prints a bool as 1 / 0 (a static one as _1 / _0)
        got = str(int(value))
    assert got == expected
