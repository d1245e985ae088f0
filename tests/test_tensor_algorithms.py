"""CuTe's tensor algorithms (clear, fill, axpby, transform and for_each of tensors) on numpy-backed tensors of
non-trivial layouts: each element by index (t(i), i < size(t)), only the tensor's own elements written."""

from __future__ import annotations

import numpy as np
import pytest

import tmakit as tk

I = tk.Int  # noqa: E741


def strided():
    """A (3, 4) tensor over every other column of a (3, 8) buffer, and the buffer."""
    buf = np.arange(24.0).reshape(3, 8)
    return tk.make_tensor(buf[:, ::2]), buf


def test_clear_and_fill_write_only_the_tensors_elements():
    t, buf = strided()
    odd = buf[:, 1::2].copy()
    tk.fill(t, 7.0)
    assert np.all(buf[:, ::2] == 7.0) and np.array_equal(buf[:, 1::2], odd)
    tk.clear(t)
    assert np.all(buf[:, ::2] == 0.0) and np.array_equal(buf[:, 1::2], odd)


def test_axpby_with_beta_zero_does_not_read_y():
    x = tk.make_tensor(np.arange(12.0).reshape(3, 4))
    ybuf = np.full((4, 3), np.nan)
    y = tk.make_tensor(ybuf.T)  # a column-major view: the index order differs from memory order
    tk.axpby(2.0, x, 0, y)
    assert np.array_equal(ybuf.T, 2 * np.arange(12.0).reshape(3, 4))
    tk.axpby(1.0, x, -1.0, y, lambda i: i % 2 == 0)  # y = x - y = -x where predicated
    want = 2 * np.arange(12.0).reshape(3, 4)
    for i in range(12):
        r, c = i % 3, i // 3  # t(i): colexicographic coordinates
        if i % 2 == 0:
            want[r, c] = -np.arange(12.0).reshape(3, 4)[r, c]
    assert np.array_equal(ybuf.T, want)


def test_transform_forms_and_for_each_order():
    a = np.arange(6).reshape(2, 3)
    x = tk.make_tensor(a)
    seen = []
    tk.for_each(x, seen.append)
    assert seen == [x(i) for i in range(6)] == [0, 3, 1, 4, 2, 5]
    out = tk.make_tensor(np.zeros((2, 3), np.int64))
    tk.transform(x, out, lambda v: v * 10)
    assert [out(i) for i in range(6)] == [0, 30, 10, 40, 20, 50]
    tk.transform(x, out, out, lambda u, v: u + v)
    assert [out(i) for i in range(6)] == [0, 33, 11, 44, 22, 55]
    tk.transform(x, lambda v: -v)
    assert np.array_equal(a, -np.arange(6).reshape(2, 3))
    assert tk.transform((I(1), 2), lambda v: v * 2) == (I(2), 4)  # the tuple form is unchanged
    assert tk.for_each((1, 2), lambda v: None) is None


def test_tensor_algorithms_refuse_mismatched_sizes():
    x = tk.make_tensor(np.zeros(6))
    y = tk.make_tensor(np.zeros(4))
    with pytest.raises(tk.LayoutError, match="6 and 4 elements"):
        tk.axpby(1.0, x, 1.0, y)
    with pytest.raises(tk.LayoutError, match="6 and 4 elements"):
        tk.transform(x, y, lambda v: v)
    with pytest.raises(tk.LayoutError, match="transform"):
        tk.transform(x, y, x, y, lambda *v: 0)
