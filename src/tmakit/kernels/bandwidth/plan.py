"""Planning a bandwidth op: which kernel can move ``src`` into ``dst`` (flat, strided, transpose or none, and why),
and the TMA box shapes."""

from __future__ import annotations

import dataclasses

__all__ = ["Plan", "plan_copy", "plan_plain_transpose"]


@dataclasses.dataclass
class Plan:
    kind: str | None  # "flat" | "strided" | "transpose" | "plain" (a transpose without TMA) | None
    reason: str = ""
    dims: list = dataclasses.field(default_factory=list)  # [(size, src_stride, dst_stride)] in elements, inner first
    elem: int = 0


def _merge_dims(shape, s_src, s_dst):
    """Drop size-1 dims and merge neighbours that are contiguous in both tensors; inner first."""
    dims = [(n, a, b) for n, a, b in zip(shape, s_src, s_dst) if n != 1]
    out: list = []
    for n, a, b in reversed(dims):  # innermost first
        if out:
            m, x, y = out[-1]
            if a == x * m and b == y * m:
                out[-1] = (m * n, x, y)
                continue
        out.append((n, a, b))
    return out


def plan_copy(src, dst, *, allow_transpose: bool = True) -> Plan:
    """How to move ``src`` into ``dst`` (same shape and dtype, CUDA tensors) with TMA; see the module docstring."""
    e = src.element_size()
    if src.numel() == 0:
        return Plan(None, "empty tensor")
    for name, t in (("src", src), ("dst", dst)):
        if t.data_ptr() % 16:
            return Plan(None, f"{name} base address is not 16-byte aligned")
    dims = _merge_dims(tuple(src.shape), tuple(src.stride()), tuple(dst.stride()))
    if not dims:  # a single element
        dims = [(1, 1, 1)]
    if any(a == 0 or b == 0 for _, a, b in dims):
        return Plan(None, "broadcast (stride-0) dimension")
    if any(a < 0 or b < 0 for _, a, b in dims):
        return Plan(None, "negative stride")
    if len(dims) == 1 and dims[0][1] == 1 and dims[0][2] == 1:
        return Plan("flat", dims=dims, elem=e)
    ps = [i for i, d in enumerate(dims) if d[1] == 1]
    qs = [i for i, d in enumerate(dims) if d[2] == 1]
    if not ps or not qs:
        return Plan(None, "no unit-stride dimension in " + ("src" if not ps else "dst"))
    p, q = ps[0], qs[0]
    if len(dims) > 5:
        return Plan(None, f"{len(dims)} dimensions after merging contiguous ones (TMA maps have at most 5)")
    for i, (n, a, b) in enumerate(dims):
        if n >= 2 ** 32:
            return Plan(None, "a dimension has 2^32 or more elements")
        if i != p and (a * e) % 16:
            return Plan(None, f"src stride {a * e} bytes is not a multiple of 16")
        if i != q and (b * e) % 16:
            return Plan(None, f"dst stride {b * e} bytes is not a multiple of 16")
    if (dims[q][0] * e) % 16:  # TMA stores write whole 16-byte units of dst's rows (docs/HARDWARE.md §3)
        return Plan(None, f"dst's rows are {dims[q][0]} x {e} bytes, not a multiple of 16: a TMA store would also "
                          f"write the bytes after each row up to the next 16-byte boundary")
    if p == q:
        rest = sorted((d for i, d in enumerate(dims) if i != p), key=lambda d: d[1])
        return Plan("strided", dims=[dims[p]] + rest, elem=e)
    if not allow_transpose:
        return Plan(None, "the unit-stride dimension differs between src and dst")
    for name, t in (("src", src), ("dst", dst)):
        if t.data_ptr() % 128:
            return Plan(None, f"{name} base address is not 128-byte aligned (needed with a swizzled map)")
    rest = sorted((d for i, d in enumerate(dims) if i not in (p, q)), key=lambda d: d[2])
    return Plan("transpose", dims=[dims[p], dims[q]] + rest, elem=e)


def plan_plain_transpose(src, dst) -> Plan | None:
    """A transpose for ``plain_transpose.cu`` (plain loads and stores, no TMA: any strides, any element-aligned
    address), or None: after merging, a dim of unit stride in ``src`` (p), another of unit stride in ``dst`` (q)
    and at most one more (a batch), positive strides, at most 2^31 tiles."""
    if src.numel() == 0:
        return None
    dims = _merge_dims(tuple(src.shape), tuple(src.stride()), tuple(dst.stride()))
    if len(dims) not in (2, 3) or any(a <= 0 or b <= 0 for _, a, b in dims):
        return None
    ps = [i for i, d in enumerate(dims) if d[1] == 1]
    qs = [i for i, d in enumerate(dims) if d[2] == 1]
    if not ps or not qs or ps[0] == qs[0]:
        return None
    p, q = ps[0], qs[0]
    rest = [d for i, d in enumerate(dims) if i not in (p, q)] or [(1, 0, 0)]
    if -(-dims[p][0] // 32) * -(-dims[q][0] // 32) * rest[0][0] >= 2 ** 31:
        return None
    return Plan("plain", dims=[dims[p], dims[q], rest[0]], elem=src.element_size())


def _fit_inner_box(n, elem, cap=256):
    """Inner box: a multiple of 16 bytes, at most ``cap`` elements, at most ``n`` unless ``n`` is under 16 bytes."""
    unit = max(1, 16 // elem)
    if n < unit:
        return unit  # overhangs the tensor: zero-filled on load, clipped on store (accepted for rank >= 2 maps)
    return min(cap, (n // unit) * unit)


def _boxes(sizes, elem, target_bytes):
    """Box per dim (inner first): inner up to 256 elements (a multiple of 16 bytes, <= the dim), then fill outer dims
    (each <= its dim) up to about ``target_bytes``. None when the inner dim is under 16 bytes."""
    b0 = _fit_inner_box(sizes[0], elem)
    if b0 is None:
        return None
    box = [b0]
    budget = max(1, target_bytes // (b0 * elem))
    for n in sizes[1:]:
        b = max(1, min(256, n, budget))
        box.append(b)
        budget = max(1, budget // b)
    return box



def _run_bytes(box, dims, side, elem):
    """Contiguous bytes of one box row-run on ``side`` (1 src, 2 dst): dim 0 times every following dim (in that
    side's stride order) whose box covers the whole previous extent."""
    run, span = box[0] * elem, dims[0][0]
    if box[0] < dims[0][0]:
        return run
    left = list(range(1, len(dims)))
    while left:
        nxt = next((i for i in left if dims[i][side] == span), None)
        if nxt is None:
            break
        run *= box[nxt]
        if box[nxt] < dims[nxt][0]:
            break
        span *= dims[nxt][0]
        left.remove(nxt)
    return run


def _boxes_balanced(dims, elem, target_bytes):
    """Box per dim (inner first) of about ``target_bytes`` maximising the shorter of the two sides' contiguous runs
    (then the box size): a permute that keeps the inner dim gets runs of kilobytes on both sides, not 256 bytes on
    one. Powers of two or the whole dim per outer dim, each <= 256."""
    b0 = _fit_inner_box(dims[0][0], elem)
    rest = dims[1:]
    choices = []
    for n, _, _ in rest:
        c = {min(n, 256)} | {1 << i for i in range(9) if (1 << i) < n}
        choices.append(sorted(c))
    best, best_key = None, None

    def rec(i, box, nbytes):
        nonlocal best, best_key
        if i == len(rest):
            full = [b0] + box
            runs = (_run_bytes(full, dims, 1, elem), _run_bytes(full, dims, 2, elem))
            key = (min(runs), nbytes, max(runs))
            if best_key is None or key > best_key:
                best, best_key = full, key
            return
        for b in choices[i]:
            if nbytes * b > target_bytes and b > 1:
                break
            rec(i + 1, box + [b], nbytes * b)

    rec(0, [], b0 * elem)
    return best

