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


def test_overlapping_source_and_destination_are_refused():
    x = torch.arange(64.0)
    with pytest.raises(ValueError, match="overlap in memory"):
        ops.copy(x[1:], x[:-1])
    with pytest.raises(ValueError, match="overlap in memory"):
        ops.reduce_into(x[:-1], x[1:])
    m = torch.arange(64.0).reshape(8, 8)
    with pytest.raises(ValueError, match="overlap in memory"):
        ops.transpose(m, 0, 1, out=m)
    with pytest.raises(ValueError, match="overlap in memory"):
        ops.permute(m, (1, 0), out=m, strict=True)
    assert torch.equal(x, torch.arange(64.0)) and torch.equal(m, torch.arange(64.0).reshape(8, 8))


def test_a_destination_that_writes_an_address_twice_is_refused():
    dst = torch.zeros(8).as_strided((4, 4), (1, 1))
    with pytest.raises(ValueError, match="more than once"):
        ops.copy(torch.ones(4, 4), dst)
    with pytest.raises(ValueError, match="more than once"):
        ops.reduce_into(torch.zeros(3).expand(4, 3), torch.ones(4, 3))


def test_disjoint_interleaved_views_of_one_tensor_run():
    m = torch.arange(48.0).reshape(4, 12)
    want = m.clone()
    want[:, 6:] = m[:, :6]
    ops.copy(m[:, :6], m[:, 6:])
    assert torch.equal(m, want)
    want[:, 1::2] += want[:, 0::2]
    ops.reduce_into(m[:, 1::2], m[:, 0::2])
    assert torch.equal(m, want)


def test_the_very_same_view_is_a_noop_copy_and_a_valid_reduction():
    x = torch.arange(10.0)
    assert ops.copy(x, x) is x and ops.last_path == "none:src is dst" and torch.equal(x, torch.arange(10.0))
    ops.reduce_into(x, x, "add")
    assert torch.equal(x, 2 * torch.arange(10.0))
    y = torch.arange(10, dtype=torch.int32)
    ops.copy(y.view(torch.float32), y.view(torch.float32))
    assert torch.equal(y, torch.arange(10, dtype=torch.int32))
    z = torch.arange(4, dtype=torch.int16)  # one memory as two dtypes: torch converts element by element
    ops.copy(z.view(torch.float16), z)
    assert torch.equal(z, torch.arange(4, dtype=torch.int16).view(torch.float16).to(torch.int16))


def test_permute_and_transpose_are_differentiable():
    x = torch.randn(3, 4, 5, dtype=torch.float64, requires_grad=True)
    assert torch.autograd.gradcheck(lambda t: ops.permute(t, (2, 0, -2)), (x,))
    assert torch.autograd.gradcheck(lambda t: ops.transpose(t, -1, 0), (x,))
    y = ops.permute(x, (1, 2, 0))
    assert y.requires_grad and y.grad_fn is not None and y.is_contiguous()
    w = torch.randn(4, 5, 3, dtype=torch.float64)
    (y * w).sum().backward()
    assert torch.equal(x.grad, w.permute(2, 0, 1))
    with pytest.raises(ValueError, match="not a permutation"):
        ops.permute(x, (0, 0, 1))
    with torch.no_grad():
        assert not ops.permute(x, (1, 2, 0)).requires_grad


def test_copy_and_reduce_keep_the_autograd_graph_through_torch():
    src = torch.randn(6, requires_grad=True)
    dst = torch.zeros(6)
    ops.copy(src, dst)
    assert ops.last_path.startswith("torch:autograd") and dst.grad_fn is not None
    dst.sum().backward()
    assert torch.equal(src.grad, torch.ones(6))
    leaf = torch.zeros(6, requires_grad=True)
    with pytest.raises(RuntimeError, match="leaf Variable"):
        ops.reduce_into(leaf, torch.ones(6))
    with pytest.raises(ValueError, match="TMA cannot run this op: autograd"):
        ops.copy(src, torch.zeros(6), strict=True)
    with torch.no_grad():
        ops.reduce_into(leaf, torch.ones(6))
    assert torch.equal(leaf.detach(), torch.ones(6)) and ops.last_path == "torch:not CUDA tensors"


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_gemm_shapes_that_do_not_compose_raise_gemm_error_on_the_cpu_path_too(dtype):
    """The same GemmError (a ValueError) as on the kernel's path, not torch.matmul's RuntimeError."""
    from tmakit.kernels.gemm import GemmError

    a, w = torch.randn(64, 256, dtype=dtype), torch.randn(128, 256, dtype=dtype)
    with pytest.raises(GemmError, match=r"shapes do not compose: a is 64x256, b is 128x256"):
        ops.gemm(a, w)
    assert ops.gemm(a, w.t()).shape == (64, 128) and ops.last_path.startswith("torch:")


@pytest.mark.parametrize("op", ["inc", "dec"])
@pytest.mark.parametrize("ddt,sdt", [(torch.int32, torch.float32), (torch.int32, torch.bfloat16),
                                     (torch.float32, torch.float32), (torch.int64, torch.bool)])
def test_inc_dec_refuse_non_integer_operands(op, ddt, sdt):
    """inc / dec compare integers (PTX); a float src would otherwise be truncated before the comparison."""
    d = torch.tensor([0, 1, 5, 7]).to(ddt)
    s = torch.tensor([0.5, 1.5, 2.0, 9.0]).to(sdt)
    before = d.clone()
    with pytest.raises(ValueError, match=f"{op} is an integer op"):
        ops.reduce_into(d, s, op)
    assert torch.equal(d, before)


def test_inc_dec_mixed_integer_widths_compare_exactly():
    d = torch.tensor([0, 1, 5, 7], dtype=torch.int32)
    s = torch.tensor([3, 1, 2, 2**40], dtype=torch.int64)
    assert ops.reduce_into(d, s, "inc").tolist() == [1, 0, 0, 8]
