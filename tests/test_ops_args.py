"""tk.ops argument checking without a GPU: clear errors for bad arguments, torch fallback off the GPU."""

from __future__ import annotations

import pytest

from tmakit.tma.errors import TmaDescriptorError

torch = pytest.importorskip("torch")

from tmakit import ops  # noqa: E402


def test_copy_shape_mismatch():
    with pytest.raises(ValueError, match="shapes differ"):
        ops.copy(torch.zeros(3), torch.zeros(4))


def test_copy_not_a_tensor():
    with pytest.raises(TypeError, match="torch.Tensor"):
        ops.copy([1, 2], torch.zeros(2))


def test_copy_cpu_falls_back_or_raises_when_strict():
    x, y = torch.arange(6.0), torch.empty(6)
    assert torch.equal(ops.copy(x, y), x) and ops.last_path.startswith("torch:")
    with pytest.raises(ValueError, match="TMA cannot"):
        ops.copy(x, y, strict=True)


def test_transpose_permute_cpu_fallback():
    x = torch.arange(24.0).reshape(2, 3, 4)
    assert torch.equal(ops.transpose(x, 0, 2), x.transpose(0, 2))
    assert torch.equal(ops.permute(x, (2, 0, 1)), x.permute(2, 0, 1))
    with pytest.raises(ValueError, match="not a permutation"):
        ops.permute(x, (0, 0, 1))


def test_reduce_bad_op():
    with pytest.raises(TmaDescriptorError, match="reduce"):
        ops.reduce_into(torch.zeros(2), torch.zeros(2), op="mul")


@pytest.mark.parametrize("op", ops.REDUCE_OPS)
def test_reduce_cpu_fallback_matches_ptx_semantics(op):
    d = torch.tensor([0, 1, 5, 7], dtype=torch.int32)
    s = torch.tensor([3, 1, 2, 9], dtype=torch.int32)
    want = {"add": [3, 2, 7, 16], "min": [0, 1, 2, 7], "max": [3, 1, 5, 9], "and": [0, 1, 0, 1], "or": [3, 1, 7, 15],
            "xor": [3, 0, 7, 14], "inc": [1, 0, 0, 8], "dec": [3, 0, 2, 6]}[op]
    assert ops.reduce_into(d, s, op).tolist() == want
