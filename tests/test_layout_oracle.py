"""tmakit against CuTe itself: every case of tests/data/cute_oracle.txt must print exactly what CuTe printed.

The golden file is produced by tests/oracle/regen.sh (CuTe C++ compiled on the host; no GPU); this test only
reads it. Each case is an expression in the spelling of tests/oracle/gen_cpp.py, evaluated here with tmakit.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

import tmakit as tk
from tmakit.layout.integer import to_str
from tmakit.mma import numeric

GOLDEN = Path(__file__).parent / "data" / "cute_oracle.txt"


def _parse(text: str) -> list[tuple[str, str]]:
    cases, expr, lines = [], None, []
    for line in text.splitlines():
        if line.startswith(">>> "):
            if expr is not None:
                cases.append((expr, "\n".join(lines)))
            expr, lines = line[4:], []
        else:
            lines.append(line)
    if expr is not None:
        cases.append((expr, "\n".join(lines)))
    return cases


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
    append_n=lambda x, n: tk.append(x, n=n),
    print_layout=tk.format_layout,
    print_tensor=tk.format_tensor,
    slice_and_offset=lambda crd, layout: layout.slice_and_offset(crd),
    compose=lambda x, *tilers: x.compose(*tilers),
    tile=lambda x, *tilers: x.tile(*tilers),
    # element types of recast_layout(x, OldType, NewType) (tests/oracle/gen_cpp.py TYPES)
    uint8_t=np.uint8, uint16_t=np.uint16, uint32_t=np.uint32, uint64_t=np.uint64, uint128_t=numeric.uint128_t,
    half_t=tk.half_t, float_e2m1_t=tk.float_e2m1_t, float_e2m3_t=tk.float_e2m3_t,
)

CASES = _parse(GOLDEN.read_text())


def test_golden_file_is_large_enough():
    assert len(CASES) >= 150


REJECTED = "!!! rejected at compile time"  # tests/oracle/run_oracle.py: CuTe's static_assert refuses the case


@pytest.mark.parametrize("expr,expected", CASES, ids=[c[0] for c in CASES])
def test_matches_cute(expr, expected):
    if expected == REJECTED:
        with pytest.raises(tk.LayoutError):
            eval(expr, {"__builtins__": {}}, NAMES)  # noqa: S307 - our own committed cases
        return
    value = eval(expr, {"__builtins__": {}}, NAMES)  # noqa: S307 - our own committed cases
    got = value.rstrip("\n") if expr.startswith(("print_layout(", "print_tensor(")) else to_str(value)
    if isinstance(value, bool):  # a run-time predicate: CuTe prints a bool as 1 / 0 (a static one as _1 / _0)
        got = str(int(value))
    assert got == expected
