"""The torch paths of ``tk.ops.grouped_mm``: ``torch._grouped_mm`` where it reads the operands and group sizes
safely, else a loop of ``torch.mm`` over the groups (calls the kernels cannot take)."""

from __future__ import annotations

from ..kernels.gemm import GemmError

__all__ = ["torch_grouped"]


def torch_grouped(torch, a, b, offs, out_dtype, out):
    """torch's own grouped GEMM, or a loop of ``torch.mm`` over the groups where torch has none for these inputs."""
    od = out.dtype if out is not None else (out_dtype or a.dtype)
    r = None
    if _torch_takes(a, b) and _torch_group_sizes_ok(a, b, offs):
        try:
            r = torch._grouped_mm(a, b, offs=offs, out_dtype=od)
        except (AttributeError, RuntimeError, TypeError, NotImplementedError, ValueError):
            r = None
    if r is None:
        r = _loop(torch, a, b, offs, od)
    if out is None:
        return r
    return out.copy_(r)


def _torch_takes(a, b) -> bool:
    """Whether ``torch._grouped_mm`` may be handed these operands: ``a`` with contiguous rows, ``b`` with a unit
    stride in one of its last two dims, both :func:`_tma_readable`. torch 2.11 checks less and faults on the GPU
    otherwise (a column-major ``a`` hit a device-side assert; a broken context), so the loop takes the rest."""
    return a.stride(-1) == 1 and 1 in (b.stride(-1), b.stride(-2)) and _tma_readable(a) and _tma_readable(b)


def _torch_group_sizes_ok(a, b, offs) -> bool:
    """Whether torch 2.11's grouped kernel takes these group sizes: along K with a K-major ``a`` or a K-major ``b``,
    and along N (3-D x 2-D: its output's columns), each group must span a multiple of 16 bytes (along K also at least
    one element); torch checks this with a device-side assert, which breaks the CUDA context. So for those forms the
    offsets are read first (one synchronisation), and the loop takes sizes torch would refuse."""
    if offs is None or (a.dim() == 2 and b.dim() == 3):
        return True
    along_k = a.dim() == 2 and b.dim() == 2
    if along_k and a.stride(0) == 1 and b.stride(1) == 1:  # M-major a, row-major b: any sizes, empty ones too
        return True
    align = 16 // a.element_size()
    lo = 0
    for hi in offs.tolist():
        if (hi - lo) % align or (along_k and hi <= lo):
            return False
        lo = hi
    return True


def _tma_readable(t) -> bool:
    """Whether ``t`` starts 16-byte aligned with every stride of its non-unit-stride dims a multiple of 16 bytes.
    torch._grouped_mm (torch 2.11) does not check this for each group's matrix and faults on the GPU (misaligned
    address, a broken context) where it fails, e.g. for ``b`` of shape (8, 16, 62) with strides (62, 496, 1)."""
    eb = t.element_size()
    return t.data_ptr() % 16 == 0 and all(st * eb % 16 == 0 for st, n in zip(t.stride(), t.shape) if st != 1 and n > 1)


def _spans(ends):
    """(group, lo, hi) of the non-empty groups that end offsets ``ends`` describe (a decreasing offset: empty)."""
    lo = 0
    for g, hi in enumerate(ends):
        if hi > lo:
            yield g, lo, hi
        lo = max(lo, hi)


def _loop(torch, a, b, offs, od):
    if offs is None:  # another output dtype: products in fp32 (not rounded to a's dtype on the way)
        a, b = (a, b) if od == a.dtype else (a.float(), b.float())
        return torch.bmm(a, b).to(od) if a.dim() == 3 else torch.matmul(a, b).to(od)
    ends = [int(x) for x in offs.tolist()]
    if a.dim() == 2 and b.dim() == 3:  # rows of a grouped
        r = torch.zeros(a.shape[0], b.shape[2], dtype=od, device=a.device)
        for g, lo, hi in _spans(ends):
            r[lo:hi] = (a[lo:hi].float() @ b[g].float()).to(od)
        return r
    if a.dim() == 3 and b.dim() == 2:  # columns of b grouped
        r = torch.zeros(a.shape[1], b.shape[1], dtype=od, device=a.device)
        for g, lo, hi in _spans(ends):
            r[:, lo:hi] = (a[g].float() @ b[:, lo:hi].float()).to(od)
        return r
    if a.dim() == 2 and b.dim() == 2:  # K grouped (weight gradients): one (M, N) product per group
        r = torch.zeros(len(ends), a.shape[0], b.shape[1], dtype=od, device=a.device)
        for g, lo, hi in _spans(ends):
            r[g] = (a[:, lo:hi].float() @ b[lo:hi].float()).to(od)
        return r
    raise GemmError(f"grouped_mm: no torch path for a {a.dim()}-D x {b.dim()}-D call with offs on this torch")
