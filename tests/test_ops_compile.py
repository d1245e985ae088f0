"""tk.ops under torch.compile: each op is a custom op (torch.ops.tmakit.*) that stays in the graph -- fullgraph
capture succeeds -- with the results of the eager op (CPU here: the ops' torch fallbacks run inside the custom ops;
the GPU tests run the TMA kernels the same way)."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("torch._dynamo")

from tmakit import ops  # noqa: E402


def _compile(fn):
    torch._dynamo.reset()
    return torch.compile(fn, backend="aot_eager", fullgraph=True)


def _ops_in_graph(fn, *args) -> set:
    """The tmakit custom ops in the FX graph dynamo captures for ``fn(*args)`` (fullgraph: a break raises)."""
    seen = set()

    def backend(gm, example_inputs):
        seen.update(str(n.target).removesuffix(".default") for n in gm.graph.nodes if "tmakit" in str(n.target))
        return gm.forward

    torch._dynamo.reset()
    torch.compile(fn, backend=backend, fullgraph=True)(*args)
    return seen


@pytest.mark.parametrize("eager_first", [False, True])
def test_permute_transpose_copy_reduce_compile_without_graph_breaks(eager_first):
    x = torch.randn(4, 6, 8)
    if eager_first:  # an eager call first: the ops then keep torch.compiler.is_compiling for their check
        ops.permute(x, (2, 0, 1))

    def f(x, acc):
        y = ops.permute(x, (2, 0, 1)) * 2
        t = ops.transpose(y, 0, 1)
        out = torch.empty_like(t)
        ops.copy(t, out)
        ops.reduce_into(acc, out.sum(0), "max")
        return out, acc

    acc = torch.zeros(8, 6)
    out, acc2 = _compile(f)(x, acc.clone())
    want = (x.permute(2, 0, 1) * 2).transpose(0, 1)
    assert torch.equal(out, want) and torch.equal(acc2, torch.maximum(acc, want.sum(0)))
    assert _ops_in_graph(f, x, acc.clone()) == {"tmakit.permute", "tmakit.copy_", "tmakit.reduce_into_"}


def test_compiled_permute_is_differentiable_and_out_variants_work():
    x = torch.randn(3, 5, 7, requires_grad=True)
    w = torch.randn(7, 3, 5)
    f = _compile(lambda x: (ops.permute(x, (-1, 0, 1)) * w).sum())
    f(x).backward()
    assert torch.allclose(x.grad, w.permute(1, 2, 0))
    o = torch.empty(5, 3)
    g = _compile(lambda m, o: ops.transpose(m, 0, 1, out=o))
    m = torch.randn(3, 5)
    assert torch.equal(g(m, o), m.t()) and torch.equal(o, m.t())


def test_compiled_mutations_get_private_buffers():
    """Under torch.compile, functionalization hands a mutating op a private copy of its destination, so overlapping
    views are well defined there (the eager op refuses them): the result is that of copying from a snapshot."""
    x = torch.arange(16.0)
    f = torch.compile(lambda a, b: ops.copy(a, b), backend="aot_eager")
    torch._dynamo.reset()
    f(x[1:], x[:-1])
    assert torch.equal(x, torch.cat([torch.arange(1.0, 16.0), torch.tensor([15.0])]))
    with pytest.raises(ValueError, match="overlap in memory"):
        ops.copy(x[1:], x[:-1])
