"""The ops' fast path: one cache of planned launchers shared by copy, transpose/permute and reduce_into.

After a call has been checked, planned and launched once, later calls with the same layouts (shape, strides, dtype,
device, op arguments, address alignment mod 128) go straight to its launcher. Each op builds its own key (a tuple
starting with its tag) from everything its plan depends on. The ops plan with the bandwidth kernels' default
configs, which are constants, so the key need not hold them. Fallbacks are never cached (they take the checked path
every time, with the same errors and reasons), except fallbacks whose reason the key decides (a dtype, stride or
alignment TMA cannot take, an op the hardware lacks): ``routes`` sends later calls with that key, disjoint byte
extents, no tensor requiring grad and ``strict=False`` straight to torch's op, with the same ``last_path``.

Building that key reads a dozen tensor attributes from Python (about 1 µs). Calls on the same tensor objects as an
earlier call skip it: ``objects`` maps (tag, the tensors' ids, op arguments) to the entry that call used and a
C++ check (``tensor_check``) that the objects still have that call's sizes, strides, dtypes, devices and
``requires_grad``; the addresses are read and their alignment compared on every call. A check is made the second
time the same objects take the keyed path (objects seen once, such as each step's new output, cost no check).
"""

from __future__ import annotations

from ..bounded import make_room
from ..memory_overlap import Region, byte_extent, relation
from .common import current_device, on_device, state
from .tensor_check import check_maker

__all__ = ["COPY", "PERMUTE", "TRANSPOSE", "REDUCE", "TorchRoute", "entries", "fresh", "objects", "routes",
           "fresh_routes", "get", "launch", "take_route", "remember", "remember_fresh", "note_objects", "clear"]

COPY, PERMUTE, TRANSPOSE, REDUCE = range(4)  # the first item of each op's key
MAX_ENTRIES = 4096

#: key -> (Launcher, src lo, src hi, dst lo, dst hi, any_device, path): the byte extents around each base address;
#: any_device: the process sees one CUDA device, so a tensor's device is always the current one (the ops skip the
#: current-device query, a sixth of their Python time per call); path: the launcher's path, for ``last_path``
entries: dict = {}
#: ((op, x layout, dims), x address mod 128) -> (Launcher, output shape, output address mod 128, any_device, path)
fresh: dict = {}
get = entries.get  # entries is cleared, never rebound
#: (tag, id(tensor), ..., op arguments) -> (check, entry, address bits): the entry the last keyed call on these tensor
#: objects took (an ``entries``, ``fresh`` or ``fresh_routes`` value), ``check(*tensors)`` that they still have that
#: call's layouts, and that call's ``(addresses | ...) & 127``
objects: dict = {}
_seen: dict = {}  # object keys that took the keyed path once (-> None)
#: key -> (TorchRoute, src lo, src hi, dst lo, dst hi); ((op, x layout, dims), x address mod 128) -> (TorchRoute,
#: output shape): layouts whose checked call fell back to torch's op for a reason the key decides
routes: dict = {}
fresh_routes: dict = {}


class TorchRoute(str):
    """A checked call's fallback path (``"torch:<reason>"``) that its layout key decides; ``op``: reduce_into's
    op, normalised."""

    op = ""


_bw = None
_one_device = None


def bandwidth():
    """``tmakit.kernels.bandwidth``, imported on first use (it needs the CUDA runtime's modules)."""
    global _bw
    if _bw is None:
        from ..kernels import bandwidth as bw

        _bw = bw
    return _bw


def clear() -> None:
    entries.clear()
    fresh.clear()
    objects.clear()
    _seen.clear()
    routes.clear()
    fresh_routes.clear()


def note_objects(okey, entry, bits: int, *tensors) -> None:
    """After a keyed launch on ``tensors``: the second time for the same objects, remember ``entry`` under ``okey``
    with a check of their layouts (none where torch has no such check, or one tensor is passed twice: the check
    wants distinct objects)."""
    if okey not in _seen:
        make_room(_seen, MAX_ENTRIES)
        _seen[okey] = None
        return
    make = check_maker()
    if make is None or (len(tensors) == 2 and tensors[0] is tensors[1]):
        return
    make_room(objects, MAX_ENTRIES)
    try:
        objects[okey] = (make(*tensors), entry, bits)
    except Exception:  # pragma: no cover - a tensor torch's check cannot describe: the keyed path stays
        pass


def one_device() -> bool:
    """Whether this process sees exactly one CUDA device (asked once: the visible devices are fixed once CUDA is
    initialized, and a launcher exists only after it was)."""
    global _one_device
    if _one_device is None:
        import torch

        _one_device = torch.cuda.device_count() == 1
    return _one_device


def remember(key, run, src, dst) -> None:
    """Cache ``run`` (a launcher that just ran for ``src`` -> ``dst``, or a :class:`TorchRoute`) under ``key``; a full
    table sheds its oldest quarter (``bounded.make_room``)."""
    s, d = Region.of(src), Region.of(dst)
    extents = (*byte_extent(s.shape, s.strides, s.elem), *byte_extent(d.shape, d.strides, d.elem))
    if isinstance(run, TorchRoute):
        make_room(routes, MAX_ENTRIES)
        routes[key] = (run, *extents)
    else:
        make_room(entries, MAX_ENTRIES)
        entries[key] = (run, *extents, one_device(), run.path)


def remember_fresh(key, run, shape, align: int) -> None:
    """Cache ``run`` for transposes/permutes without ``out`` under ``key``: it writes a new contiguous output of
    ``shape`` (which no source can overlap) at an address ``align`` modulo 128 (torch's CUDA allocator: 0)."""
    if isinstance(run, TorchRoute):
        make_room(fresh_routes, MAX_ENTRIES)
        fresh_routes[key] = (run, shape)
    else:
        make_room(fresh, MAX_ENTRIES)
        fresh[key] = (run, shape, align, one_device(), run.path)


def take_route(key, sp: int, dp: int, src, dst):
    """The :class:`TorchRoute` under ``key`` when ``src`` -> ``dst`` at these addresses may take it (byte extents
    disjoint, no tensor requiring grad), with ``last_path`` set to it; else None (the checked path decides)."""
    r = routes.get(key)
    if r is None or not (sp + r[2] <= dp + r[3] or dp + r[4] <= sp + r[1]) or src.requires_grad or dst.requires_grad:
        return None
    state.path = r[0]
    return r[0]


def launch(entry, sp: int, dp: int, src, dst, dev: int) -> bool:
    """Launch a cached launcher, record its path and return True, unless these tensors need the checked path:
    autograd records (requires_grad), or the byte extents intersect at these addresses with a shared byte
    (interleaved views with no shared byte still run). Launches on ``dev`` (a ``get_device()`` index) when another
    device is current. The ops inline the common case (disjoint extents, ``dev`` current) and call this otherwise."""
    if src.requires_grad or dst.requires_grad:
        return False
    if not (sp + entry[2] <= dp + entry[3] or dp + entry[4] <= sp + entry[1]) and \
            relation(Region.of(src), Region.of(dst)) != "disjoint":
        return False
    if entry[5] or dev < 0 or dev == current_device():
        entry[0](sp, dp)
    else:
        with on_device(dev):
            entry[0](sp, dp)
    state.path = entry[6]
    return True
