"""The batched forms' flattening as a property (no GPU): a 3-D x 3-D call reaches the grouped kernel through (G M, .)
views of ``a``, its scales and the result, never copies. For any layout (batches back to back, apart, permuted), the
views either address exactly the batch's elements in batch-major row order, in the caller's own storage, or the call
is refused with a reason naming the tensor that does not flatten."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

torch = pytest.importorskip("torch")

from tmakit.ops.scaled_grouped import _batch_views  # noqa: E402

SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


BITS = {torch.float8_e4m3fn: torch.uint8, torch.bfloat16: torch.int16, torch.float32: torch.int32}


def _distinct(count: int, dtype):
    """``count`` elements of ``dtype`` with distinct bit patterns where the dtype has that many (fp8: modulo 251)."""
    x = torch.arange(count, dtype=torch.int64)
    if dtype == torch.float8_e4m3fn:
        x = x % 251
    return x.to(BITS[dtype]).view(dtype)


def _layout(draw, shape, dtype):
    """A (G, R, C) tensor of ``shape``: contiguous, with a gap between batches or rows, or stored permuted."""
    g, r, c = shape
    kind = draw(st.sampled_from(["plain", "batch_gap", "row_gap", "permuted"]))
    if kind == "permuted":
        order = draw(st.permutations([0, 1, 2]))
        base = _distinct(g * r * c, dtype).reshape([shape[i] for i in order])
        return base.permute([order.index(i) for i in range(3)])
    gap_b = draw(st.integers(1, 3)) if kind == "batch_gap" else 0
    gap_r = draw(st.integers(1, 3)) if kind == "row_gap" else 0
    return _distinct(g * (r + gap_b) * (c + gap_r), dtype).reshape(g, r + gap_b, c + gap_r)[:, :r, :c]


def _same_elements(view, t, rows: int) -> bool:
    """``view`` holds ``t``'s elements as (rows, .) (or (rows,)) rows, in ``t``'s own storage (bit for bit)."""
    want = t.reshape(rows, -1) if t.dim() == 3 else t.reshape(rows)
    bits = BITS[t.dtype]
    return (view.untyped_storage().data_ptr() == t.untyped_storage().data_ptr()
            and tuple(view.shape) == tuple(want.shape) and torch.equal(view.view(bits), want.view(bits)))


@SETTINGS
@given(data=st.data(), g=st.integers(1, 5), m=st.integers(1, 6), n=st.integers(1, 300), k=st.integers(1, 300),
       block=st.booleans(), with_out=st.booleans())
def test_batch_views_are_exact_or_refused(data, g, m, n, k, block, with_out):
    e4 = torch.float8_e4m3fn
    a = _layout(data.draw, (g, m, k), e4)
    b = torch.zeros(g, n, k, dtype=e4).transpose(-2, -1)
    kb, nb = -(-k // 128), -(-n // 128)
    sa = _layout(data.draw, (g, m, kb if block else 1), torch.float32)
    sa = sa if block else sa[..., 0]
    sb = torch.ones(g, nb, kb) if block else torch.ones(g, n)
    out = _layout(data.draw, (g, m, n), torch.bfloat16) if with_out else None
    a2, sa2, out2, scaling, why = _batch_views(a, b, sa, sb, out, torch.bfloat16, False)
    assert scaling == ("block" if block else "row")
    if why:
        assert any(why.startswith(f"{nm}'s batches are") for nm in ("a", "scale_a", "out")), why
        return
    assert _same_elements(a2, a, g * m)
    assert _same_elements(sa2, sa, g * m)
    assert out2 is None if out is None else _same_elements(out2, out, g * m)
