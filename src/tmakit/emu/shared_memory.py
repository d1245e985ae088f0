"""One CTA's shared memory: a byte image, a bump allocator that remembers its allocations, and what the async proxy
has been shown.

``written`` marks the bytes the generic proxy (Python code) wrote since the last ``fence.proxy.async``, whatever the
value written; ``async_view`` holds the bytes as the async proxy (TMA) may see them, which also catches generic
writes that bypass the tracking (a plain numpy view) when they change a byte. A TMA operation touching such a byte
is a proxy race (docs/HARDWARE.md §5).

Every access is checked against the image and its allocations: an access that touches an allocation must lie inside
it; raw addresses outside every allocation (hand-placed buffers) only have to lie inside the image.
"""

from __future__ import annotations

import bisect

import numpy as np

from .checks import as_int, as_pow2
from .errors import IllegalAddress
from .smem_image import box_byte_addresses, read_box, write_box

DEFAULT_SMEM_BYTES = 227 * 1024


class SharedMemory:
    def __init__(self, size: int = DEFAULT_SMEM_BYTES):
        self.size = int(size)
        self.data = np.zeros(self.size, np.uint8)
        self.async_view = np.zeros(self.size, np.uint8)
        self.written = np.zeros(self.size, np.bool_)
        self.top = 0
        self.hwm = 0  # bytes [0, hwm) may differ from zero
        self.starts: list[int] = []  # allocation starts, ascending (bump allocator)
        self.ends: list[int] = []
        self.owner = "shared memory"  # label of the CTA using it

    def reset(self) -> None:
        """Back to all zeros for reuse by the next CTA."""
        self.data[:self.hwm] = 0
        self.async_view[:self.hwm] = 0
        self.written[:self.hwm] = False
        self.top = self.hwm = 0
        self.starts, self.ends = [], []

    def touch(self, end: int) -> None:
        self.hwm = max(self.hwm, min(int(end), self.size))

    def alloc(self, nbytes: int, align: int = 16) -> int:
        """Reserve ``nbytes`` at an ``align``-byte aligned shared address (like static ``__shared__``)."""
        nbytes = as_int(nbytes, "shared allocation size (bytes)", 0, None, IllegalAddress)
        align = as_pow2(align, "shared allocation alignment", IllegalAddress)
        addr = -(-self.top // align) * align
        if addr + nbytes > self.size:
            raise IllegalAddress(f"{self.owner}: shared memory exhausted: {nbytes} bytes at {addr:#x} exceed "
                                 f"{self.size} bytes (launch(..., smem_bytes=N) sets the size)")
        self.top = addr + nbytes
        self.starts.append(addr)
        self.ends.append(self.top)
        self.touch(self.top)
        return addr

    def describe_allocation(self, i: int) -> str:
        s, e = self.starts[i], self.ends[i]
        return f"shared allocation #{i} [{s:#x}, {e:#x}) ({e - s} bytes)"

    def check(self, addr: int, nbytes: int, what: str, alloc: int | None = None) -> None:
        """Raise IllegalAddress unless bytes ``[addr, addr + nbytes)`` lie inside the image and inside the one
        allocation they touch (if any); with ``alloc`` (the allocation a pointer came from) inside that one."""
        end = addr + nbytes
        where = f"{self.owner}: {what} at shared [{addr:#x}, {end:#x}) ({nbytes} bytes)"
        if addr < 0 or end > self.size:
            raise IllegalAddress(f"{where} lies outside the {self.size}-byte shared memory (offset {addr}); shared "
                                 "addresses do not wrap around")
        i = alloc if alloc is not None and alloc < len(self.starts) else self._containing(addr)
        if i is None:
            j = bisect.bisect_right(self.starts, addr)
            while j < len(self.starts) and self.starts[j] == self.ends[j]:
                j += 1  # empty allocations hold no bytes
            if j < len(self.starts) and self.starts[j] < end:
                raise IllegalAddress(f"{where} starts outside every allocation and runs into "
                                     f"{self.describe_allocation(j)}")
            return
        s, e = self.starts[i], self.ends[i]
        if addr < s:
            raise IllegalAddress(f"{where} starts {s - addr} bytes before {self.describe_allocation(i)}, the "
                                 "allocation its pointer came from")
        if end > e:
            raise IllegalAddress(f"{where} ends {end - e} bytes past the end of {self.describe_allocation(i)}, at "
                                 f"offset {addr - s} of it: allocate as much as the access (or box) needs")

    def _containing(self, addr: int) -> int | None:
        i = bisect.bisect_right(self.starts, addr) - 1  # last allocation starting at or before addr
        return i if i >= 0 and addr < self.ends[i] else None

    def generic_write(self, addr: int, nbytes: int) -> None:
        """Record a generic-proxy store to ``[addr, addr + nbytes)``."""
        self.written[addr:addr + nbytes] = True
        self.touch(addr + nbytes)

    def fence_proxy_async(self) -> None:
        """``fence.proxy.async.shared::cta``: generic writes so far become visible to the async proxy."""
        np.copyto(self.async_view[:self.hwm], self.data[:self.hwm])
        self.written[:self.hwm] = False

    def tma_write(self, addr: int, geom, data: np.ndarray) -> None:
        """A TMA load's box lands: both proxies see it (it replaces whatever generic stores wrote there)."""
        self.touch(addr + geom.footprint)
        write_box(self.data, addr, geom, data)
        write_box(self.async_view, addr, geom, data)
        if self.written[addr:addr + geom.footprint].any():
            self.written[box_byte_addresses(addr, geom)] = False

    def read(self, addr: int, geom) -> np.ndarray:
        return read_box(self.data, addr, geom)

    def unfenced(self, addr: int, geom) -> int | None:
        """First shared address of the box holding a generic write not yet fenced, or None."""
        span = slice(addr, addr + geom.footprint)
        if not self.written[span].any() and np.array_equal(self.data[span], self.async_view[span]):
            return None
        a, b = read_box(self.data, addr, geom), read_box(self.async_view, addr, geom)
        w = read_box(self.written.view(np.uint8), addr, geom)
        bad = np.flatnonzero((a != b) | (w != 0))
        if bad.size == 0:
            return None
        return int(box_byte_addresses(addr, geom)[bad[0]])
