"""One CTA's shared memory: a byte image, a bump allocator, and what the async proxy has been shown.

``async_view`` holds the bytes as the async proxy (TMA) may see them: it follows TMA writes and catches up with
generic writes only at ``fence.proxy.async``. A byte where ``data`` and ``async_view`` differ was written by the
generic proxy (Python code) and not fenced; a TMA operation touching it is a proxy race (docs/HARDWARE.md §5).
"""

from __future__ import annotations

import numpy as np

from .errors import IllegalAddress
from .smem_image import box_byte_addresses, read_box, write_box

DEFAULT_SMEM_BYTES = 227 * 1024


class SharedMemory:
    def __init__(self, size: int = DEFAULT_SMEM_BYTES):
        self.size = int(size)
        self.data = np.zeros(self.size, np.uint8)
        self.async_view = np.zeros(self.size, np.uint8)
        self.top = 0
        self.hwm = 0  # bytes [0, hwm) may differ from zero

    def reset(self) -> None:
        """Back to all zeros for reuse by the next CTA."""
        self.data[:self.hwm] = 0
        self.async_view[:self.hwm] = 0
        self.top = self.hwm = 0

    def touch(self, end: int) -> None:
        self.hwm = max(self.hwm, min(int(end), self.size))

    def alloc(self, nbytes: int, align: int = 16) -> int:
        """Reserve ``nbytes`` at an ``align``-byte aligned shared address (like static ``__shared__``)."""
        addr = -(-self.top // align) * align
        if addr + nbytes > self.size:
            raise IllegalAddress(f"shared memory exhausted: {nbytes} bytes at {addr:#x} exceed {self.size} bytes "
                                 "(launch(..., smem_bytes=N) sets the size)")
        self.top = addr + nbytes
        self.touch(self.top)
        return addr

    def fence_proxy_async(self) -> None:
        """``fence.proxy.async.shared::cta``: generic writes so far become visible to the async proxy."""
        np.copyto(self.async_view[:self.hwm], self.data[:self.hwm])

    def tma_write(self, addr: int, geom, data: np.ndarray) -> None:
        """A TMA load's box lands: both proxies see it."""
        self.touch(addr + geom.footprint)
        write_box(self.data, addr, geom, data)
        write_box(self.async_view, addr, geom, data)

    def read(self, addr: int, geom) -> np.ndarray:
        return read_box(self.data, addr, geom)

    def unfenced(self, addr: int, geom) -> int | None:
        """First shared address of the box holding a generic write not yet fenced, or None."""
        a, b = read_box(self.data, addr, geom), read_box(self.async_view, addr, geom)
        bad = np.flatnonzero(a != b)
        if bad.size == 0:
            return None
        return int(box_byte_addresses(addr, geom)[bad[0]])
