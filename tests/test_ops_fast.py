"""The ops' fast path without a GPU: a checked call's launcher is reused only for the same layouts, dtypes, devices,
op arguments and address alignment (the kernels' configs are constants). A fake launcher stands in for the kernels
(CPU tensors are made to look launchable)."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from tmakit import ops  # noqa: E402
from tmakit.kernels import bandwidth as bw  # noqa: E402
from tmakit.ops import fast_path, memory_ops  # noqa: E402


class FakeLauncher(bw.Launcher):
    def __init__(self, plan_key):
        super().__init__(None, 1, 32, 0, None, [])
        self.plan_key, self.calls = plan_key, []
        self.kind, self.path = "fake", "tma:fake"

    def __call__(self, sp, dp):
        self.calls.append((sp, dp))


@pytest.fixture
def fake(monkeypatch):
    """Every TMA-eligible call plans through a counting fake ``launcher_for``."""
    planned = []

    def launcher_for(src, dst, *, op=-1, dtype=None, allow_transpose=True, engine=None):
        key = (tuple(src.shape), tuple(src.stride()), tuple(dst.stride()), src.dtype, op, engine,
               src.data_ptr() % 128, dst.data_ptr() % 128, bw.COPY_CONFIG, bw.REDUCE_CONFIG)
        planned.append(key)
        run = FakeLauncher(key)
        run.kind = "combine" if op >= 0 else "fake"
        run.path = "tma:" + run.kind
        return run

    monkeypatch.setattr(memory_ops, "_gpu_reason", lambda src, dst: "")
    monkeypatch.setattr(bw, "launcher_for", launcher_for)
    fast_path.clear()
    yield planned
    fast_path.clear()


def test_second_identical_call_skips_planning(fake):
    x, y = aligned((64, 128)), aligned((128, 64))
    ops.transpose(x, 0, 1, out=y)
    ops.transpose(x, 0, 1, out=y)
    assert len(fake) == 1 and ops.last_path == "tma:fake"
    outs = [ops.transpose(x, 0, 1) for _ in range(4)]  # out=None: new contiguous outputs, the same layout as y
    assert all(o.shape == (128, 64) for o in outs)
    assert len(fake) <= 2  # CPU allocations are 64-byte aligned: at most one more plan for the other class


def aligned(shape, dtype=torch.bfloat16, mod=0):
    """A tensor whose address is ``mod`` modulo 128 (CPU allocations are only 64-byte aligned)."""
    e = torch.tensor([], dtype=dtype).element_size()
    n = 1
    for k in shape:
        n *= k
    base = torch.zeros(n + 256 // e, dtype=dtype)
    off = ((mod - base.data_ptr()) % 128) // e
    return base[off:off + n].view(shape)


def test_layout_dtype_and_alignment_changes_replan(fake):
    x, y = aligned((64, 32)), aligned((32, 64))
    ops.permute(x, (1, 0), out=y)
    ops.permute(x, (1, 0), out=y)
    assert len(fake) == 1
    ops.permute(aligned((64, 32), torch.float32), (1, 0), out=aligned((32, 64), torch.float32))  # dtype
    assert len(fake) == 2
    ops.permute(aligned((64, 64))[:, :32], (1, 0), out=y)  # source strides
    assert len(fake) == 3
    ops.permute(x, (1, 0), out=aligned((64, 64)).t()[:32])  # destination strides
    assert len(fake) == 4
    ops.permute(aligned((64, 32), mod=16), (1, 0), out=y)  # source address 16 mod 128
    assert len(fake) == 5 and fake[-1][6] == 16
    ops.permute(x, (1, 0), out=aligned((32, 64), mod=32))  # destination address 32 mod 128
    assert len(fake) == 6 and fake[-1][7] == 32
    ops.permute(aligned((64, 32)), [1, 0], out=aligned((32, 64)))  # other tensors, dims as a list: cached
    assert len(fake) == 6
    ops.permute(x, (-1, 0), out=y)  # another spelling of the permutation: planned once more, then cached
    ops.permute(x, (-1, 0), out=y)
    assert len(fake) == 7
    ops.transpose(x, 0, 1, out=y)  # transpose and permute keep separate keys
    assert len(fake) == 8


def test_copy_and_reduce_keys(fake):
    a, b = aligned((1024,), torch.float32), aligned((1024,), torch.float32)
    ops.copy(a, b)
    ops.copy(a, b)
    ops.copy(b, a)  # other addresses, same alignment: the launcher takes the pointers
    assert len(fake) == 1
    ops.copy(a[:512], b[:512])  # shape
    assert len(fake) == 2
    ops.reduce_into(b, a, "add")
    ops.reduce_into(b, a, "add")
    assert len(fake) == 3 and ops.last_path == "tma:combine"
    ops.reduce_into(b, a, "max")
    ops.reduce_into(b, a, "add", method="store-reduce")
    assert len(fake) == 5


def test_the_ops_plan_with_the_default_configs(fake):
    """The ops never pass a config: they plan with the kernels' defaults, which are constants (the cache keys need
    not hold them); variants go to ``launcher_for`` directly (tests/test_kernels_bandwidth.py)."""
    x, y = aligned((32, 64)), aligned((64, 32))
    ops.transpose(x, 0, 1, out=y)
    ops.transpose(x, 0, 1, out=y)
    assert len(fake) == 1 and fake[0][-2:] == (bw.COPY_CONFIG, bw.REDUCE_CONFIG)
    with pytest.raises(TypeError):
        bw.TRANSPOSE_CONFIG[2] = bw.TRANSPOSE_CONFIG[4]


def test_errors_unchanged_after_caching(fake):
    x = torch.zeros(8, 16)
    ops.permute(x, (1, 0))
    with pytest.raises(ValueError, match="not a permutation"):
        ops.permute(x, (0, 0))
    with pytest.raises(ValueError, match="out has shape"):
        ops.permute(x, (1, 0), out=torch.zeros(8, 16))
    with pytest.raises(TypeError, match="torch.Tensor"):
        ops.permute([[1.0]], (1, 0))
    with pytest.raises(TypeError, match="torch.Tensor"):
        ops.permute(x, (1, 0), out=[0])
    with pytest.raises(ValueError, match="shapes differ"):
        ops.copy(torch.zeros(3), torch.zeros(4))


def test_fallbacks_are_not_cached():
    fast_path.clear()
    x, y = torch.arange(6.0), torch.empty(6)
    ops.copy(x, y)
    ops.copy(x, y)
    assert fast_path.entries == {} and ops.last_path.startswith("torch:")
    with pytest.raises(ValueError, match="TMA cannot"):
        ops.copy(x, y, strict=True)


def test_a_cached_launcher_is_not_reused_for_overlapping_addresses(fake):
    a, b = aligned((1024,), torch.float32), aligned((1024,), torch.float32)
    ops.copy(a, b)
    ops.reduce_into(b, a)
    assert len(fake) == 2
    base = aligned((2048,), torch.float32)
    with pytest.raises(ValueError, match="overlap in memory"):
        ops.copy(base[:1024], base[512:1536])  # same key (layout, alignment); the extents intersect
    with pytest.raises(ValueError, match="overlap in memory"):
        ops.reduce_into(base[512:1536], base[:1024])
    m = aligned((64, 64))
    ops.copy(m[:, :32], m[:, 32:])  # intersecting extents, disjoint elements: planned once, then cached
    ops.copy(m[:, :32], m[:, 32:])
    assert len(fake) == 3 and ops.last_path == "tma:fake"
    with pytest.raises(ValueError, match="overlap in memory"):
        ops.copy(m[:, :32], m[:, 16:48])


def test_last_path_is_per_thread(fake):
    """Each thread reads the path of its own last op, whatever other threads ran meanwhile."""
    import threading

    a, b = aligned((1024,), torch.float32), aligned((1024,), torch.float32)
    ops.copy(a, b)  # planned here, so the other thread's call takes the fast path too
    ops.copy(a, b)
    assert ops.last_path == "tma:fake"
    seen = {}
    step = threading.Barrier(2)

    def other():
        seen["before"] = ops.last_path  # nothing run on this thread yet
        ops.copy(torch.arange(6.0, requires_grad=True), torch.empty(6))  # autograd records: the torch fallback
        step.wait()  # the main thread reads its path while this thread's last op is the fallback
        step.wait()
        seen["after"] = ops.last_path

    t = threading.Thread(target=other)
    t.start()
    step.wait()
    mine = ops.last_path
    ops.reduce_into(b, a)
    step.wait()
    t.join()
    assert seen["before"] == "" and seen["after"].startswith("torch:autograd is recording")
    assert mine == "tma:fake" and ops.last_path == "tma:combine"


@pytest.fixture
def checks():
    from tmakit.ops.tensor_check import check_maker

    if check_maker() is None:  # pragma: no cover - depends on the torch build
        pytest.skip("this torch has no tensor check: every call takes the keyed path")


def _object_launcher(key):
    return fast_path.objects[key][1][0]


def test_the_same_objects_skip_the_key_from_their_second_keyed_call(fake, checks):
    a, b = aligned((64, 128), torch.float32), aligned((64, 128), torch.float32)
    ops.copy(a, b)  # checked and planned
    ops.copy(a, b)  # keyed: seen once
    assert fast_path.objects == {}
    ops.copy(a, b)  # keyed again: its check is made
    key = (fast_path.COPY, id(a), id(b))
    run = _object_launcher(key)
    n = len(run.calls)
    ops.copy(a, b)
    ops.copy(a, b)
    assert len(run.calls) == n + 2 and run.calls[-1] == (a.data_ptr(), b.data_ptr()) and len(fake) == 1
    ops.reduce_into(b, a)
    ops.reduce_into(b, a)
    ops.reduce_into(b, a)
    assert (fast_path.REDUCE, id(b), id(a), "add", "auto") in fast_path.objects and ops.last_path == "tma:combine"
    ops.reduce_into(b, b)  # one object twice: no check (it wants distinct objects), the keyed path every time
    ops.reduce_into(b, b)
    ops.reduce_into(b, b)
    assert (fast_path.REDUCE, id(b), id(b), "add", "auto") not in fast_path.objects


def test_in_place_changes_of_the_objects_are_seen(fake, checks):
    a, b = aligned((64, 128), torch.float32), aligned((64, 128), torch.float32)
    for _ in range(3):
        ops.copy(a, b)
    assert (fast_path.COPY, id(a), id(b)) in fast_path.objects
    b.t_()  # (128, 64) now: the shapes differ
    with pytest.raises(ValueError, match="shapes differ"):
        ops.copy(a, b)
    b.t_()
    b.as_strided_((64, 128), (1, 64))  # same shape, other strides: planned for them
    ops.copy(a, b)
    assert len(fake) == 2 and fake[-1][2] == (1, 64)
    b.as_strided_((64, 128), (128, 1))
    a.data = aligned((64, 128), torch.float64)  # another dtype in place (the fixture plans what the GPU would not)
    ops.copy(a, b)
    assert len(fake) == 3 and fake[-1][3] == torch.float64
    a.data = aligned((64, 128), torch.float32, mod=16)  # another address class: planned for it
    ops.copy(a, b)
    assert len(fake) == 4 and fake[-1][6] == 16 and ops.last_path == "tma:fake"
    a.requires_grad_()  # autograd records now: torch's op
    ops.copy(a, b)
    assert ops.last_path.startswith("torch:autograd")


def test_a_transposed_object_gets_an_output_of_its_new_shape(fake, checks, monkeypatch):
    # outputs 128-byte aligned, as on the GPU (CPU allocations are only 64-byte aligned)
    monkeypatch.setattr(torch.Tensor, "new_empty", lambda self, shape: aligned(tuple(shape), self.dtype))
    monkeypatch.setattr(torch, "empty", lambda shape, dtype=None, device=None: aligned(tuple(shape), dtype))
    x = aligned((32, 64))
    for _ in range(3):
        assert ops.transpose(x).shape == (64, 32)
    assert (fast_path.TRANSPOSE, id(x), (0, 1)) in fast_path.objects
    x.t_()
    assert ops.transpose(x).shape == (32, 64) and fake[-1][:2] == ((32, 64), (64, 1))  # planned for the new layout


def test_the_tensor_check_compares_every_property_of_the_layout(checks):
    from tmakit.ops.tensor_check import check_maker

    a, b = torch.zeros(8, 16), torch.zeros(16, dtype=torch.bfloat16)
    check = check_maker()(a, b)
    assert check(a, b) and check(torch.ones(8, 16), torch.ones(16, dtype=torch.bfloat16))
    assert not check(a.t().contiguous().t(), b)  # strides
    assert not check(torch.zeros(16, 8), b) and not check(a, torch.zeros(17, dtype=torch.bfloat16))  # shapes
    assert not check(a, b.half()) and not check(a.requires_grad_(), b)  # dtype, requires_grad
    assert not check(a, a) and not check(b, a)  # order matters; arguments must be distinct objects


def _no_checked_path(monkeypatch):
    def boom(*a, **k):
        raise AssertionError("the checked path ran")

    monkeypatch.setattr(memory_ops, "_copy_run", boom)
    monkeypatch.setattr(memory_ops, "_reduce_run", boom)


def test_fallbacks_the_layouts_decide_go_straight_to_torch_later(monkeypatch):
    fast_path.clear()
    a, b = aligned((48,), torch.float32), aligned((48,), torch.float32)
    x = aligned((16, 24), torch.float32)
    a.copy_(torch.arange(48.0))
    ops.copy(a, b)  # CPU tensors: torch's op, for a reason the layouts decide
    ops.reduce_into(b, a, "ADD")
    ops.transpose(x)
    assert len(fast_path.routes) == 3 and len(fast_path.fresh_routes) == 1  # transpose: with and without out
    assert fast_path.entries == {}
    path = ops.last_path
    with monkeypatch.context() as m:
        _no_checked_path(m)
        b.zero_()
        ops.copy(a, b)
        assert torch.equal(b, a) and ops.last_path.startswith("torch:not CUDA")
        ops.reduce_into(b, a, "ADD")
        assert torch.equal(b, 2 * a)
        t = ops.transpose(x)
        assert torch.equal(t, x.t()) and t.is_contiguous() and t.data_ptr() != x.data_ptr() and ops.last_path == path
    base = aligned((96,), torch.float32)
    with pytest.raises(ValueError, match="overlap in memory"):  # same key, intersecting extents: the checked path
        ops.copy(base[:48], base[32:80])
    with pytest.raises(ValueError, match="TMA cannot"):  # strict: the checked path, which raises
        ops.copy(a, b, strict=True)
    ops.copy(a.requires_grad_(), b)  # autograd records: the checked path's reason
    assert ops.last_path.startswith("torch:autograd")


def test_a_transpose_routed_to_torch_takes_the_object_check_too(monkeypatch, checks):
    fast_path.clear()
    x = aligned((16, 24), torch.float32)
    for _ in range(3):  # checked (route), keyed route (seen once), keyed route (check made)
        t = ops.transpose(x)
    assert (fast_path.TRANSPOSE, id(x), (0, 1)) in fast_path.objects and fast_path.fresh_routes
    with monkeypatch.context() as m:
        _no_checked_path(m)
        m.setattr(fast_path, "fresh_routes", {})  # only the object entry can route it now
        m.setattr(memory_ops, "_fresh_route", {}.get)
        t = ops.transpose(x)
        assert torch.equal(t, x.t()) and t.is_contiguous() and ops.last_path.startswith("torch:not CUDA")
    x.t_()  # another layout: the object check fails; the keyed path plans it
    assert torch.equal(ops.transpose(x), x.t())


def test_a_full_cache_sheds_its_oldest_layouts_not_all(fake, monkeypatch):
    monkeypatch.setattr(fast_path, "MAX_ENTRIES", 8)
    pairs = [(aligned((16 * (i + 1),), torch.float32), aligned((16 * (i + 1),), torch.float32)) for i in range(12)]
    for a, b in pairs:
        ops.copy(a, b)
    assert len(fast_path.entries) <= 8 and len(fake) == 12
    ops.copy(*pairs[-1])  # the newest layouts stay: no plan
    ops.copy(*pairs[-5])
    assert len(fake) == 12
    ops.copy(*pairs[0])  # the oldest went: planned again
    assert len(fake) == 13
