"""Kernel argument packing without a GPU: C types, pointers from every interop protocol, tensor maps by value."""

from __future__ import annotations

import ctypes

import numpy as np
import pytest

pytest.importorskip("cuda.bindings.driver")

from tmakit.cuda import Ptr, device_pointer  # noqa: E402
from tmakit.cuda.args import ArgPacker  # noqa: E402


def _slots(packer: ArgPacker, addr: int, n: int) -> list[int]:
    ptrs = (ctypes.c_void_p * n).from_address(addr)
    return [p or 0 for p in ptrs]


class CAI:
    def __init__(self, ptr):
        self.__cuda_array_interface__ = {"data": (ptr, False), "shape": (4,), "typestr": "<f4", "version": 3}


class Torchish:
    def data_ptr(self):
        return 0x7000_0000_1000


def test_scalars_by_explicit_c_type():
    p = ArgPacker()
    addr = p.pack([ctypes.c_int32(-5), ctypes.c_uint64(2**40 + 3), ctypes.c_float(1.5), np.float64(2.25),
                   np.int16(-2), ctypes.c_uint8(7)])
    s = _slots(p, addr, 6)
    assert ctypes.c_int32.from_address(s[0]).value == -5
    assert ctypes.c_uint64.from_address(s[1]).value == 2**40 + 3
    assert ctypes.c_float.from_address(s[2]).value == 1.5
    assert ctypes.c_double.from_address(s[3]).value == 2.25
    assert ctypes.c_int16.from_address(s[4]).value == -2
    assert ctypes.c_uint8.from_address(s[5]).value == 7


@pytest.mark.parametrize("bad", [3, 2.0, True])
def test_plain_python_numbers_refused(bad):
    with pytest.raises(TypeError, match="C type"):
        ArgPacker().pack([bad])


def test_pointers_from_every_protocol():
    host = np.arange(8, dtype=np.float32)
    assert device_pointer(CAI(0x1234_5000)) == 0x1234_5000
    assert device_pointer(Torchish()) == 0x7000_0000_1000
    assert device_pointer(Ptr(0xABC0)) == 0xABC0
    assert device_pointer(None) == 0
    assert device_pointer(host[2:]) == host.ctypes.data + 8  # DLPack (numpy exports host DLPack) + byte offset
    p = ArgPacker()
    addr = p.pack([CAI(0x10), Torchish(), Ptr(0x20), None])
    vals = [ctypes.c_uint64.from_address(a).value for a in _slots(p, addr, 4)]
    assert vals == [0x10, 0x7000_0000_1000, 0x20, 0]


def test_tensormap_by_value_64_aligned():
    from cuda.bindings import driver as cu

    tm = cu.CUtensorMap()
    ctypes.memmove(tm.getPtr(), bytes(range(128)), 128)
    p = ArgPacker()
    addr = p.pack([Ptr(1), tm, ctypes.c_int32(9), tm])
    s = _slots(p, addr, 4)
    assert s[1] % 64 == 0 and s[3] % 64 == 0
    assert ctypes.string_at(s[1], 128) == bytes(range(128)) == ctypes.string_at(s[3], 128)
    assert ctypes.c_int32.from_address(s[2]).value == 9


def test_struct_argument_and_reuse():
    class Pair(ctypes.Structure):
        _fields_ = [("a", ctypes.c_int32), ("b", ctypes.c_double)]

    p = ArgPacker()
    a1 = p.pack([Pair(1, 2.5)])
    got = Pair.from_address(_slots(p, a1, 1)[0])
    assert (got.a, got.b) == (1, 2.5)
    a2 = p.pack([Pair(3, 4.5)])
    assert a1 == a2  # the same void** array, rewritten in place
    got = Pair.from_address(_slots(p, a2, 1)[0])
    assert (got.a, got.b) == (3, 4.5)


def test_unknown_objects_refused():
    with pytest.raises(TypeError, match="device pointer"):
        ArgPacker().pack([object()])


def test_large_struct_takes_several_slots():
    class Big(ctypes.Structure):
        _fields_ = [("v", ctypes.c_uint32 * 64)]  # 256 bytes

    big = Big()
    for i in range(64):
        big.v[i] = i * 3
    p = ArgPacker()
    addr = p.pack([ctypes.c_int32(1), big, ctypes.c_int32(2)])
    s = _slots(p, addr, 3)
    assert ctypes.c_int32.from_address(s[0]).value == 1
    assert list(Big.from_address(s[1]).v) == [i * 3 for i in range(64)]
    assert ctypes.c_int32.from_address(s[2]).value == 2
    assert s[2] - s[1] >= 256
    addr = p.pack([ctypes.c_int32(5), ctypes.c_int32(6)])  # back to the fixed layout
    s = _slots(p, addr, 2)
    assert [ctypes.c_int32.from_address(x).value for x in s] == [5, 6] and s[1] - s[0] == 128
