"""Coalesce and composition of plain layouts (CuTe's layout.hpp), the core the rest of the algebra builds on.

``tmakit.layout.algebra`` lifts these to swizzled (composed) layouts and tensors; this module knows only
``Layout``, so ``ComposedLayout`` can use it without a cycle.
"""

from __future__ import annotations

from .arith_tuple import ScaledBasis
from .int_tuple import LayoutError, flatten, is_tuple, make_int_tuple_like, unwrap, wrap
from .integer import (
    Int,
    _keep,
    ceil_div,
    check_divisor,
    imin,
    is_constant,
    is_int,
    is_static,
    is_underscore,
    signum,
    to_str,
    trunc_div,
)
from .layout import Layout, make_layout
from .memo import memoized


def _as_layout(x):
    if isinstance(x, Layout):
        return x
    if is_int(x):
        return make_layout(x)
    raise LayoutError(f"expected a layout or an integer, got {x!r}")


def _static_true_eq(a, b) -> bool:
    """CuTe's ``is_constant<true, decltype(a == b)>``: equal, and both known statically."""
    return is_static(a) and is_static(b) and _val(a) == _val(b)


def _val(x):
    return (x.mode, int(x.value)) if isinstance(x, ScaledBasis) else ((), int(x))


def _bw_coalesce(fs, fd, ns, nd):
    """Merge flattened modes back to front (CuTe's detail::bw_coalesce)."""
    for s, d in zip(reversed(fs), reversed(fd)):
        if is_constant(1, s):
            continue
        if not is_tuple(ns) and is_constant(1, ns):
            ns, nd = s, d
        elif is_static(_front(ns)) and _static_true_eq(s * d, _front(nd)):
            ns, nd = _replace_front(ns, s * _front(ns)), _replace_front(nd, d)
        else:
            ns, nd = (s,) + wrap(ns), (d,) + wrap(nd)
    if not is_tuple(ns) and is_constant(1, ns):
        return Layout(Int(1), Int(0))
    return Layout(ns, nd)


def _front(t):
    return t[0] if is_tuple(t) else t


def _replace_front(t, v):
    return (v,) + t[1:] if is_tuple(t) else v


@memoized
def coalesce(layout, profile=None):
    """Merge modes that are contiguous in the codomain; size and function are preserved."""
    if not isinstance(layout, Layout):
        return _coalesce_shape(layout)
    if is_tuple(profile):
        return _by_mode(layout, profile, coalesce, keep_rest=True)
    fs, fd = flatten(layout.shape), flatten(layout.stride)
    return _bw_coalesce(fs[:-1], fd[:-1], fs[-1], fd[-1])


def _coalesce_shape(shape):
    flat = flatten(shape)
    out = [flat[0]]
    for a in flat[1:]:
        if is_static(out[-1]) == is_static(a):
            out[-1] = out[-1] * a
        else:
            out.append(a)
    return out[0] if len(out) == 1 else tuple(out)


def _coalesce_x(layout, profile=None):
    """coalesce that also keeps the function outside the domain (the last stride is kept)."""
    if is_tuple(profile):
        return _by_mode(layout, profile, _coalesce_x, keep_rest=True)
    fs, fd = flatten(layout.shape), flatten(layout.stride)
    last = Int(2) if is_constant(1, fs[-1]) else fs[-1]
    return _bw_coalesce(fs[:-1], fd[:-1], last, fd[-1])


def _by_mode(layout, tiler, fn, keep_rest):
    if len(tiler) > len(layout):
        raise LayoutError(f"tiler {to_str(tiler)} has more modes than layout {layout}")
    modes = [fn(layout[i], t) for i, t in enumerate(tiler)]
    if keep_rest:
        modes += [layout[i] for i in range(len(tiler), len(layout))]
    return make_layout(*modes)


def filter_zeros(layout, profile=None):
    """Replace the shape of static stride-0 modes by ``_1``; with ``profile``, of the modes where ``profile`` has a
    static ``_0`` instead (CuTe's two-argument form)."""
    def fz(d, s):
        if is_tuple(d):
            if not is_tuple(s) or len(s) != len(d):
                raise LayoutError(f"filter_zeros: profile {to_str(profile)} does not match shape "
                                  f"{to_str(layout.shape)}; give a profile congruent with the shape")
            return tuple(fz(a, b) for a, b in zip(d, s))
        return make_int_tuple_like(s, Int(1)) if is_constant(0, d) else s

    return Layout(fz(layout.stride if profile is None else profile, layout.shape), layout.stride)


@memoized
@memoized
def filter(layout, profile=None):  # noqa: A001 - CuTe's name
    """Remove stride-0 and size-1 modes, then coalesce."""
    if is_tuple(profile):
        return _by_mode(layout, profile, filter, keep_rest=True)
    return coalesce(filter_zeros(layout))


def _coprofile(layout):
    """CuTe's coprofile: ``_0``s shaped like the codomain (the sum of the strides as an arithmetic tuple)."""
    total = Int(0)
    for d in flatten(layout.stride):
        total = total + d
    total = total.values if hasattr(total, "values") else total.expand() if isinstance(total, ScaledBasis) else total
    return make_int_tuple_like(total, Int(0))


def _basis_get(b, t):
    for m in b.mode:
        t = t[m] if is_tuple(t) else t
    return t


def _composition_impl(ls, ld, rs, rd):
    if is_tuple(rs):
        parts = [_composition_impl(ls, ld, s, d) for s, d in zip(rs, rd)]
        return Layout(tuple(p.shape for p in parts), tuple(p.stride for p in parts))
    if isinstance(rd, ScaledBasis):
        return _composition_impl(_basis_get(rd, ls), _basis_get(rd, ld), rs, rd.value)
    if is_constant(0, rd):
        return Layout(rs, rd)
    if not is_tuple(ls):
        return Layout(rs, rd * ld)
    if int(rd) == 0:
        raise LayoutError(f"the dynamic stride 0 of {to_str(rs)}:{rd} divides by zero (as in CuTe); "
                          "make it static (tk.Int(0))")
    result_s, result_d, rest_s, rest_d = [], [], rs, rd
    for cs, cd in zip(ls[:-1], ld[:-1]):
        check_divisor(rest_d, cs)
        if is_static(cs) and is_static(rest_d) and not (int(rest_d) % int(cs) == 0 or int(rest_d) < int(cs)):
            raise LayoutError(f"stride divisibility fails: stride {rest_d} is neither below nor a multiple of mode "
                              f"size {cs}")
        next_s = ceil_div(cs, abs(rest_d))
        next_d = ceil_div(abs(rest_d), cs) * signum(rest_d)
        if is_constant(1, next_s) or is_constant(1, rest_s):
            rest_d = next_d
            continue
        new_s = imin(next_s, rest_s)
        check_divisor(rest_s, new_s)
        if is_static(new_s) and is_static(rest_s) and int(rest_s) % int(new_s) != 0:
            raise LayoutError(f"shape divisibility fails: {new_s} does not divide shape {rest_s}")
        result_s.append(new_s)
        result_d.append(rest_d * cd)
        rest_s = _keep(rest_s, new_s, trunc_div(int(rest_s), int(new_s)))
        rest_d = next_d
    if not result_s:
        return Layout(rest_s, rest_d * ld[-1])
    if is_constant(1, rest_s):
        return Layout(unwrap(tuple(result_s)), unwrap(tuple(result_d)))
    return Layout(tuple(result_s) + (rest_s,), tuple(result_d) + (rest_d * ld[-1],))


@memoized
def layout_composition(a, b):
    """``R(c) = a(b(c))`` for a plain layout ``a``; ``b`` may be a layout, an integer, ``_``/None or a tuple tiler
    (applied by mode)."""
    if b is None or is_underscore(b):
        return a
    if is_tuple(b):
        return _by_mode(a, b, layout_composition, keep_rest=False)
    if not (is_int(b) or isinstance(b, Layout)):
        raise LayoutError(f"composition({a}, {b!r}) is not supported: the tiler must be a layout, an integer, _ or "
                          "a tuple of those")
    try:
        if is_int(b):
            flat = _coalesce_x(a)
            return _composition_impl(flat.shape, flat.stride, b, Int(1))
        flat = _coalesce_x(a, _coprofile(b))
        return _composition_impl(flat.shape, flat.stride, b.shape, b.stride)
    except LayoutError as e:
        raise LayoutError(f"composition({a}, {to_str(b)}): {e}") from None


__all__ = ["coalesce", "filter", "filter_zeros", "layout_composition"]
