"""Hopper's warpgroup MMA inside an emulated kernel (PTX ISA, "Asynchronous Warpgroup Level Matrix Multiply-Accumulate
Instructions"; docs/EMULATOR.md, "Warpgroup MMA").

* ``wgmma_accumulator(n, dtype, warpgroup)``: the warpgroup's 64 x N accumulator registers (``wgmma_regs``)
* ``wgmma_fragment_a(atype, warpgroup)``: A fragment registers for the RS form
* ``wgmma_fence(warpgroup)``: ``wgmma.fence.sync.aligned``
* ``wgmma_mma_async(d, a, b_desc, scale_d, imm_scale_a, imm_scale_b, imm_trans_a, imm_trans_b, atype=, btype=)``:
  ``wgmma.mma_async.sync.aligned.m64nNkK.dtype.atype.btype`` (A: a descriptor, or a FragmentA)
* ``wgmma_commit_group(warpgroup)``: ``wgmma.commit_group.sync.aligned``
* ``wgmma_wait_group(n, warpgroup)``: ``wgmma.wait_group.sync.aligned n``

A CTA is one Python program: the warpgroup (0..7) is an argument, and its MMAs, groups and fences are its own.
"""

from __future__ import annotations

import numpy as np

from .checks import as_int
from .device_sync import block_until
from .errors import IllegalInstruction, RaceError
from .scheduler import current_cta
from .wgmma import WgmmaOp
from .wgmma_desc import check_in_smem, check_wgmma_desc, decode_wgmma_desc, operand_addresses
from .wgmma_regs import FragmentA, WarpgroupAccumulator
from .wgmma_state import warpgroup_state
from .wgmma_types import check_types, shape_name


def wgmma_accumulator(n: int, dtype: str = "f32", warpgroup: int = 0) -> WarpgroupAccumulator:
    """The accumulator registers (64 x ``n``, ``dtype`` "f32" or "f16") of ``warpgroup``; uninitialized (NaN)."""
    return WarpgroupAccumulator(warpgroup_state(current_cta(), warpgroup), n, dtype)


def wgmma_fragment_a(atype: str, warpgroup: int = 0) -> FragmentA:
    """A fragment registers (64 x K of ``atype``) of ``warpgroup`` for the RS form."""
    return FragmentA(warpgroup_state(current_cta(), warpgroup), atype)


def wgmma_fence(warpgroup: int = 0) -> None:
    """``wgmma.fence``: the warpgroup's register (and shared) accesses so far are ordered before later MMAs."""
    warpgroup_state(current_cta(), warpgroup).fences += 1


def _flag(value, what: str, allowed) -> int:
    v = as_int(value, what, None, None, IllegalInstruction)
    if v not in allowed:
        raise IllegalInstruction(f"{what} {v}: must be one of {allowed}")
    return v


def _smem_operand(cta, desc, major: int, rows: int, elem_bytes: int, what: str) -> np.ndarray:
    d = decode_wgmma_desc(as_int(desc, f"{what} (64-bit descriptor)", 0, 2**64 - 1, IllegalInstruction))
    check_wgmma_desc(d, what)
    addr = operand_addresses(d, major, rows, elem_bytes)
    check_in_smem(addr, cta.smem.size, d, what)
    smem = cta.smem
    unfenced = smem.written[addr] | (smem.data[addr] != smem.async_view[addr])
    if unfenced.any():
        bad = int(addr[unfenced][0])
        cta.cluster.launch.report(RaceError(
            f"{what}: {cta.label} wrote shared byte {bad:#x} with generic stores and the MMA reads it through the "
            "async proxy without fence.proxy.async in between (call fence_proxy_async() after writing the operand "
            "tiles)"))
    return addr


def _check_hazards(state, d, frag, shape, what: str) -> None:
    if state.fences == 0:
        state.report(f"{what} in {state.label} before any wgmma.fence: PTX requires wgmma_fence() before the first "
                     "wgmma.mma_async of a warpgroup")
        return
    d.check_fenced(what)
    if frag is not None:
        frag.check_fenced(what)
    live = [op for op in d.pending if not op.waited]
    if live and live[-1].shape != shape and live[-1].fence_epoch == state.fences:
        state.report(f"{what} in {state.label} uses the accumulator of {live[-1].what}, a different shape, without "
                     "wgmma_fence() in between (only MMAs of the same shape are ordered on it implicitly)")


def wgmma_mma_async(d: WarpgroupAccumulator, a, b_desc: int, scale_d=1, imm_scale_a: int = 1, imm_scale_b: int = 1,
                    imm_trans_a: int = 0, imm_trans_b: int = 0, *, atype: str = "bf16", btype: str | None = None,
                    shape: str | None = None) -> None:
    """``wgmma.mma_async``: D = A x B (+ D when ``scale_d``); ``a`` a shared-memory descriptor (SS) or a
    ``FragmentA`` (RS); ``imm_scale_*`` 1 or -1 (negate); ``imm_trans_*`` 1 = MN-major (f16/bf16 only; RS has no
    ``imm_trans_a``). Queued; runs at the next scheduling point."""
    cta = current_cta()
    if not isinstance(d, WarpgroupAccumulator) or d.state.cta is not cta:
        raise IllegalInstruction(f"wgmma.mma_async in {cta.label}: d must be a wgmma_accumulator(...) of this CTA")
    state, btype = d.state, btype or atype
    ta, tb = check_types(d.dtype, atype, btype, f"wgmma.mma_async .{d.dtype}.{atype}.{btype}")
    name = shape_name(d.n, atype)
    what = f"wgmma.mma_async.sync.aligned.{name}.{d.dtype}.{atype}.{btype}"
    if shape is not None and shape != name:
        raise IllegalInstruction(f"{what}: shape {shape!r} but the accumulator and .{atype} make {name}")
    scale_d = bool(as_int(int(bool(scale_d)) if isinstance(scale_d, (bool, np.bool_)) else scale_d,
                          f"{what}: scale-d", 0, 1, IllegalInstruction))
    neg_a = _flag(imm_scale_a, f"{what}: imm-scale-a", (1, -1)) < 0
    neg_b = _flag(imm_scale_b, f"{what}: imm-scale-b", (1, -1)) < 0
    trans_a = _flag(imm_trans_a, f"{what}: imm-trans-a", (0, 1))
    trans_b = _flag(imm_trans_b, f"{what}: imm-trans-b", (0, 1))
    if (trans_a or trans_b) and ta.elem_bytes != 2:
        raise IllegalInstruction(f"{what}: imm-trans-a/b exist for .f16/.bf16 only; .{atype} operands are K-major")
    frag = a if isinstance(a, FragmentA) else None
    if frag is not None:
        if frag.state is not state or frag.atype is not ta or trans_a:
            raise IllegalInstruction(f"{what}: the A fragment must be a .{atype} wgmma_fragment_a of {state.label}, "
                                     f"got {frag!r}{' (and RS has no imm-trans-a)' if trans_a else ''}")
        a_src = frag
    else:
        a_src = _smem_operand(cta, a, trans_a, 64, ta.elem_bytes, f"{what} A descriptor")
    b_addr = _smem_operand(cta, b_desc, trans_b, d.n, tb.elem_bytes, f"{what} B descriptor")
    _check_hazards(state, d, frag, (d.n, d.dtype, ta.k), what)
    op = WgmmaOp(state, d, a_src, b_addr, ta, tb, scale_d, neg_a, neg_b, what)
    d.pending.append(op)
    if frag is not None:
        frag.pending.append(op)
    state.open.append(op)
    cta.cluster.issue(op)
    stats = cta.cluster.launch.stats
    stats["wgmma"] = stats.get("wgmma", 0) + 1


def wgmma_commit_group(warpgroup: int = 0) -> None:
    """``wgmma.commit_group``: the warpgroup's MMAs since the last commit form one group (maybe empty)."""
    state = warpgroup_state(current_cta(), warpgroup)
    for op in state.open:
        op.group = state.committed
    state.groups.append(state.open)
    state.open = []
    state.committed += 1


def wgmma_wait_group(n: int = 0, warpgroup: int = 0) -> None:
    """``wgmma.wait_group n``: wait until at most the ``n`` newest committed groups are pending (a scheduling
    point); the MMAs of the older groups are complete and their registers and shared operands free."""
    cta = current_cta()
    state = warpgroup_state(cta, warpgroup)
    n = as_int(n, "wgmma.wait_group count", 0, None, IllegalInstruction)
    old = state.groups[:max(0, len(state.groups) - n)]
    block_until(cta, lambda: all(op.done for g in old for op in g),
                lambda: f"wgmma_wait_group({n}) of {state.label}: waiting for its MMAs")
    for g in old:
        for op in g:
            op.retire()
    del state.groups[:len(old)]
