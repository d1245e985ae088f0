"""The packed launch path without a GPU: ``Launcher`` launches from one packed slot per calling thread, re-pointed in
place when the addresses change, on the launcher's device's current stream. The driver entry points are replaced by
recorders that read back what the driver would read (the parameter block's pointer words, the config's stream)."""

from __future__ import annotations

import ctypes
import threading

import pytest

from tmakit.cuda import packed


class FakeKernel:
    handle = 0x1234

    def __init__(self):
        self.checked = []

    def __call__(self, grid, block, *args, smem=0, pdl=False):
        self.checked.append(args)


class Params(ctypes.Structure):
    _fields_ = [("n", ctypes.c_int64)]


class PointerLauncher(packed.Launcher):
    """Two pointer arguments (source, destination) and a params struct, as the bulk kernels take."""

    def _args(self, sp, dp):
        return [sp, dp, self.params]

    def _address_slots(self):
        return [(0, True, 0, False), (1, False, 0, False)]


@pytest.fixture
def driver(monkeypatch):
    """Recorded launches: (thread, src, dst, stream, fn, params value); the stream is per thread."""
    launches, streams = [], {}

    def launch_ex(cfg_addr, fn, params_addr, extra):
        if threading.get_ident() not in {t for t, _ in contexts}:  # as the driver on a thread without a context
            return 201
        cfg = packed._LaunchConfig.from_address(cfg_addr)
        ptrs = (ctypes.c_void_p * 3).from_address(params_addr)
        words = [ctypes.c_uint64.from_address(ptrs[i]).value for i in range(2)]
        n = Params.from_address(ptrs[2]).n
        launches.append((threading.get_ident(), *words, cfg.stream, fn, n, cfg.nattrs))
        return 0

    def bind():
        packed._launch_ex = launch_ex
        packed._stream_of = lambda dev: streams.get(threading.get_ident(), 7)
        packed._current_device = lambda: 0

    monkeypatch.setattr(packed, "_bind_fast_path", bind)
    for name in ("_launch_ex", "_stream_of", "_current_device"):  # restored after the test (GPU runs share them)
        monkeypatch.setattr(packed, name, None)
    contexts[:] = [(threading.get_ident(), 0)]  # the test's thread has one
    monkeypatch.setattr(packed, "_thread_context", lambda dev: contexts.append((threading.get_ident(), dev)))
    yield launches, streams


contexts: list = []  # (thread, device) of every context the fake driver was asked to make current


def test_first_call_is_checked_then_packed_launches_follow_the_addresses(driver):
    launches, streams = driver
    k = FakeKernel()
    p = Params(n=42)
    L = PointerLauncher(k, 3, 128, 0, p, [])
    L(0x1000, 0x2000)  # the checked launch through tmakit.cuda (here: the fake kernel)
    assert k.checked == [(0x1000, 0x2000, p)] and launches == []
    L(0x1000, 0x2000)
    L(0x3000, 0x4000)  # new addresses: the same slot, re-pointed
    streams[threading.get_ident()] = 9
    L(0x3000, 0x4000)  # torch's current stream changed: the config follows
    me = threading.get_ident()
    assert launches == [(me, 0x1000, 0x2000, 7, 0x1234, 42, 0), (me, 0x3000, 0x4000, 7, 0x1234, 42, 0),
                        (me, 0x3000, 0x4000, 9, 0x1234, 42, 0)]
    assert len(k.checked) == 1 and len(L._slots) == 1


def test_threads_launch_their_own_addresses_from_their_own_slots(driver):
    launches, streams = driver
    L = PointerLauncher(FakeKernel(), 1, 32, 0, Params(n=1), [])
    L.pdl = True
    L(1, 2)  # checked
    go = threading.Barrier(4)

    def work(t):
        streams[threading.get_ident()] = 100 + t
        go.wait()
        for i in range(200):
            L(0x10000 * (t + 1) + 16 * i, 0x90000 * (t + 1) + 16 * i)

    threads = [threading.Thread(target=work, args=(t,)) for t in range(4)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert len(launches) == 800 and len(L._slots) == 4
    # each new thread's first launch failed for want of a context (CUDA_ERROR_INVALID_CONTEXT, as on a thread that
    # never touched CUDA): the device's context was made current once and the launch repeated
    assert sorted(t for t, _ in contexts[1:]) == sorted({t for t, *_ in launches}) and {d for _, d in contexts} == {0}
    by_thread = {}
    for tid, sp, dp, stream, _fn, _n, nattrs in launches:
        by_thread.setdefault(tid, []).append((sp, dp, stream, nattrs))
    for seq in by_thread.values():
        t = seq[0][2] - 100
        assert seq == [(0x10000 * (t + 1) + 16 * i, 0x90000 * (t + 1) + 16 * i, 100 + t, 1) for i in range(200)]


class OffsetLauncher(PointerLauncher):
    """A source address 16 bytes into the tensor: not the plain two-pointer block, so re-pointing goes through
    ``patch`` (as for tensor maps) and is skipped while the addresses stay the same."""

    def _args(self, sp, dp):
        return [sp + 16, dp, self.params]

    def _address_slots(self):
        return [(0, True, 16, False), (1, False, 0, False)]


def test_the_two_pointer_block_launches_through_one_closure(driver):
    launches, _ = driver
    L = PointerLauncher(FakeKernel(), 1, 32, 0, Params(n=5), [])
    L(1, 2)
    L(1, 2)
    s = next(iter(L._slots.values()))
    assert s.go is not None
    for i in range(3):
        L(16 * i, 32 * i)
    assert [w[1:3] for w in launches] == [(1, 2), (0, 0), (16, 32), (32, 64)]


def test_a_failed_repoint_raises_and_the_next_call_repoints_again(driver, monkeypatch):
    launches, _ = driver
    L = OffsetLauncher(FakeKernel(), 1, 32, 0, Params(n=5), [])
    L(1, 2)
    L(1, 2)
    s = next(iter(L._slots.values()))
    assert s.go is None and launches[-1][1:3] == (17, 2)

    def boom(sp, dp):
        raise RuntimeError("cuTensorMapReplaceAddress failed")

    good = s.patch
    monkeypatch.setattr(s, "patch", boom)
    with pytest.raises(RuntimeError):
        L(3, 4)
    assert s.sp is None  # half-patched: the next call re-points every address
    monkeypatch.setattr(s, "patch", good)
    L(3, 4)
    assert launches[-1][1:3] == (19, 4)


def test_a_driver_error_names_the_call_and_the_kernel(driver):
    pytest.importorskip("cuda.bindings.driver")
    from tmakit.cuda import CudaError

    L = PointerLauncher(FakeKernel(), 1, 32, 0, Params(n=5), [])
    L(1, 2)
    packed._launch_ex = lambda *a: 1  # CUDA_ERROR_INVALID_VALUE (the fixture restores the binding)
    with pytest.raises(CudaError, match="cuLaunchKernelEx"):
        L(1, 2)  # the slot's first launch
    with pytest.raises(CudaError, match="cuLaunchKernelEx"):
        L(1, 2)  # its closure


class FakeMap:
    """A map template: ``at(base)`` is a 128-byte 'tensor map' whose first word is the address (what the recorder
    reads back)."""

    offset = 0

    def __init__(self):
        self.made = []

    def at(self, base):
        buf = (ctypes.c_uint64 * 16)(base)
        self.made.append(buf)
        return type("Map", (), {"getPtr": lambda _self, b=buf: ctypes.addressof(b)})()


class MapLauncher(packed.Launcher):
    """A source and a destination tensor map and a params struct, as the tensor-map kernels take."""


def test_map_launchers_keep_a_block_per_address_pair(driver, monkeypatch):
    launches, _ = driver
    replaced = []

    def replace_map_address(ptr, addr):
        replaced.append(addr)
        ctypes.c_uint64.from_address(ptr).value = addr

    monkeypatch.setattr(packed, "replace_map_address", replace_map_address)
    monkeypatch.setattr(packed, "MAX_BLOCKS", 3)
    src, dst = FakeMap(), FakeMap()
    L = MapLauncher(FakeKernel(), 1, 32, 0, Params(n=5), [(src, True), (dst, False)])
    L(0x100, 0x900)  # checked
    pairs = [(0x100, 0x900), (0x200, 0xa00), (0x300, 0xb00)] * 3
    for sp, dp in pairs:
        L(sp, dp)
    assert [w[1:3] for w in launches] == pairs and replaced == []
    assert len(src.made) == 1 + 1 + 3  # the checked launch, the slot's own block, one block per pair
    for sp, dp in [(0x400, 0xc00), (0x500, 0xd00), (0x100, 0x900)]:  # blocks full: the own block is re-pointed
        L(sp, dp)
    assert [w[1:3] for w in launches[-3:]] == [(0x400, 0xc00), (0x500, 0xd00), (0x100, 0x900)]
    assert replaced == [0x400, 0xc00, 0x500, 0xd00]
