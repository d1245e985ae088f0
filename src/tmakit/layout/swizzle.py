"""``Swizzle<B,M,S>`` and CuTe's MixedBits (the partly static offsets a sliced swizzled layout carries)."""

from __future__ import annotations

from .int_tuple import LayoutError
from .integer import Int


class Swizzle:
    """``x ^ ((x & (((1<<B)-1) << (M+S))) >> S)``: XOR B bits taken S bits above bit M into bit M."""

    __slots__ = ("bits", "base", "shift")

    def __init__(self, B: int, M: int, S: int):
        if B < 0 or M < 0 or abs(S) < B:
            raise LayoutError(f"Swizzle<{B},{M},{S}>: need B >= 0, M >= 0 and |S| >= B (bit ranges must not overlap)")
        self.bits, self.base, self.shift = int(B), int(M), int(S)

    def __str__(self):
        return f"Sw<{self.bits},{self.base},{self.shift}>"

    __repr__ = __str__

    def __eq__(self, o):
        return isinstance(o, Swizzle) and (self.bits, self.base, self.shift) == (o.bits, o.base, o.shift)

    def __hash__(self):
        return hash((self.bits, self.base, self.shift))

    @property
    def yyy_mask(self) -> int:
        return ((1 << self.bits) - 1) << (self.base + max(0, self.shift))

    @property
    def zzz_mask(self) -> int:
        return ((1 << self.bits) - 1) << (self.base - min(0, self.shift))

    def __call__(self, x):
        """``x ^ shiftr(x & yyy_msk, S)``; a static ``x`` gives a static result, a MixedBits a MixedBits."""
        if isinstance(x, MixedBits):
            return mixed_xor(x, mixed_shiftr(mixed_and(x, self.yyy_mask), self.shift))
        y = int(x) & self.yyy_mask
        v = int(x) ^ (y >> self.shift if self.shift >= 0 else y << -self.shift)
        return Int(v) if type(x) is Int else v

    def size(self):
        return Int(1 << (self.base + self.bits + abs(self.shift)))

    def cosize(self):
        return self.size()


def make_swizzle(y: int, z: int) -> Swizzle:
    """CuTe's ``make_swizzle<Y,Z>``: the swizzle whose Y bits are ``y`` and Z bits are ``z`` (how CuTe rebuilds a
    swizzle seen through a layout). Both must be equally long runs of bits that do not overlap."""
    if not (0 <= y < 1 << 32 and 0 <= z < 1 << 32):
        raise LayoutError(f"make_swizzle: Y={y} and Z={z} must be 32-bit non-negative bit masks (CuTe takes them as "
                          "uint32_t template arguments); a negative stride or a huge offset cannot be a swizzle")
    b, tz_y, tz_z = y.bit_count(), _trailing_zeros(y), _trailing_zeros(z)
    m, s = min(tz_y, tz_z) % 32, tz_y - tz_z
    if b != z.bit_count() or abs(s) < b or y | z != _code(b, m, s):
        raise LayoutError(f"make_swizzle: Y={y:#b} and Z={z:#b} are not the Y and Z bits of a Swizzle<B,M,S> (need "
                          "two non-overlapping runs of B bits); the layout does not map the swizzle's bits onto "
                          "swizzle bits (CuTe rejects it at compile time)")
    return Swizzle(b, m, s)


def _trailing_zeros(x: int) -> int:
    return (x & -x).bit_length() - 1 if x else 32


def _code(b: int, m: int, s: int) -> int:
    bits = (1 << b) - 1
    return (bits << (m + max(0, s))) | (bits << (m - min(0, s)))


def compose_swizzles(a: Swizzle, b: Swizzle) -> Swizzle:
    """CuTe's composition of two swizzles of one shift: their Y and Z masks XORed into one swizzle."""
    if a.shift != b.shift:
        raise LayoutError(f"composition({a}, {b}): only swizzles of the same shift merge (CuTe's static_assert); "
                          "compose the swizzle with a layout instead")
    return make_swizzle(a.yyy_mask ^ b.yyy_mask, a.zzz_mask ^ b.zzz_mask)


class UInt(Int):
    """CuTe's unsigned static integer ``C<Nu>``: the offset a sliced swizzled layout keeps once MixedBits arithmetic
    knows every bit. It prints and computes as ``Int``; only negation differs, wrapping modulo 2**32 as C++ does
    (``right_inverse`` negates the offset)."""

    __slots__ = ()

    def __repr__(self):
        return f"UInt({int(self)})"

    def __neg__(self):
        return UInt(-int(self) & 0xFFFFFFFF)


def signed(x):
    """``x`` with a ``UInt`` read as a plain ``Int`` (for the MixedBits arithmetic, which tests ``type(x) is Int``)."""
    return Int(x) if type(x) is UInt else x


class MixedBits:
    """CuTe's MixedBits: an integer whose bits outside the mask ``f`` are static (``s``) and whose bits in ``f`` are
    only known at run time (``d``). Prints as CuTe does: ``M_s|(d&f)=value``."""

    __slots__ = ("s", "f", "d")

    def __init__(self, s, f, d):
        self.s, self.f, self.d = s, f, d

    def __int__(self):
        return self.s | self.d

    __index__ = __int__

    def __str__(self):
        return f"M_{self.s}|({self.d}&{self.f})={self.s | self.d}"

    __repr__ = __str__

    def __add__(self, o):
        return int(self) + o

    __radd__ = __add__


def make_mixed_bits(s, d, f):
    """CuTe's make_mixed_bits: ``C<s> | (d & C<f>)``, static when no dynamic bit remains."""
    f &= ~s
    if f == 0 or type(d) is Int:
        return Int(s | (int(d) & f))
    return MixedBits(s, f, int(d) & f)


def _parts(x):
    return (x.s, x.f, x.d) if isinstance(x, MixedBits) else (int(x), 0, 0)


def mixed_xor(a, b):
    if not isinstance(a, MixedBits) and not isinstance(b, MixedBits):
        return a ^ b
    if any(not isinstance(v, MixedBits) and type(v) is not Int for v in (a, b)):
        return int(a) ^ int(b)  # a MixedBits meeting a dynamic int decays to a dynamic int
    (s0, f0, d0), (s1, f1, d1) = _parts(a), _parts(b)
    return make_mixed_bits((~s0 & s1 & ~f0) | (s0 & ~s1 & ~f1), (s0 | d0) ^ (s1 | d1), f0 | f1)


def mixed_and(x, mask: int):
    if isinstance(x, MixedBits):
        return make_mixed_bits(x.s & mask, x.d, x.f & mask)
    return x & Int(mask)


def mixed_shiftr(x, k: int):
    if isinstance(x, MixedBits):
        sh = (lambda v: v >> k) if k >= 0 else (lambda v: v << -k)
        return make_mixed_bits(sh(x.s), sh(x.d), sh(x.f))
    return x >> Int(k) if k >= 0 else x << Int(-k)
