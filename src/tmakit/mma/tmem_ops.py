"""The TMEM load/store copy operations (CuTe's ``SM100_TMEM_LOAD_*`` / ``SM100_TMEM_STORE_*`` + Copy_Traits).

``tk.SM100_TMEM_LOAD_32dp32b1x()`` is one ``tcgen05.ld.sync.aligned.32x32b.x1.b32``: each of a warp's 32 threads
reads 32 bits (x1) from its own lane. Names: ``{32dp32b, 16dp32b, 16dp64b, 16dp128b, 16dp256b}{N}x[_16b]``;
``_16b`` packs two 16-bit values per 32-bit register (``.pack::16b`` / ``.unpack::16b``). Layouts are in bits,
as CuTe writes them (``DP_b`` = one TMEM lane in bit addressing).
"""

from __future__ import annotations

from dataclasses import dataclass

from ..layout import Int, Layout

DP_B = Int(1 << 21)  # TMEM::DP_b: the lane stride in bit addressing
_MAX_REPEAT = {"32dp32b": 128, "16dp32b": 128, "16dp64b": 128, "16dp128b": 64, "16dp256b": 32}
_PTX_SHAPE = {"32dp32b": "32x32b", "16dp32b": "16x32bx2", "16dp64b": "16x64b", "16dp128b": "16x128b",
              "16dp256b": "16x256b"}


def _L(shape, stride) -> Layout:  # noqa: N802
    def conv(x):
        return tuple(conv(v) for v in x) if isinstance(x, tuple) else (x if isinstance(x, Int) else Int(x))

    return Layout(conv(shape), conv(stride))


@dataclass(frozen=True)
class TmemCopyOp:
    """One ``tcgen05.ld`` (``is_load``) or ``tcgen05.st``. ``dp``: lanes a warp touches (32, or 16 per half),
    ``bits``: bits per lane per repetition (32/64/128/256), ``repeat``: the ``.xN``, ``pack16``: the ``_16b`` form.
    ``bits_per_thread`` is what one thread moves; the emulator reads the layouts below like CuTe's Copy_Traits."""

    shape: str  # 32dp32b, 16dp32b, 16dp64b, 16dp128b, 16dp256b
    repeat: int
    is_load: bool
    pack16: bool = False

    @property
    def name(self) -> str:
        return f"SM100_TMEM_{'LOAD' if self.is_load else 'STORE'}_{self.shape}{self.repeat}x" + \
            ("_16b" if self.pack16 else "")

    def __str__(self):
        return self.name

    @property
    def dp(self) -> int:
        return 32 if self.shape == "32dp32b" else 16

    @property
    def bits(self) -> int:
        return int(self.shape.split("dp")[1][:-1])

    @property
    def ptx(self) -> str:
        kind = "ld" if self.is_load else "st"
        pack = (".pack::16b" if self.is_load else ".unpack::16b") if self.pack16 else ""
        return f"tcgen05.{kind}.sync.aligned.{_PTX_SHAPE[self.shape]}.x{self.repeat}{pack}.b32"

    # --- Copy_Traits (bit layouts) ---
    @property
    def thr_id(self) -> Layout:
        return _L(32, 1)

    @property
    def _width(self) -> int:
        """Bits per lane the ValID spans in one instruction."""
        per = {"32dp32b": 32, "16dp32b": 64, "16dp64b": 64, "16dp128b": 128, "16dp256b": 256}[self.shape]
        return per * self.repeat

    @property
    def val_id(self) -> Layout:
        rows = 32 if self.shape == "32dp32b" else 16
        w = self._width
        if self.pack16:
            return Layout(((Int(16), Int(w // 16)), Int(rows)), ((Int(1), Int(32)), DP_B))
        return Layout((Int(w), Int(rows)), (Int(1), DP_B))

    @property
    def _tmem_side(self) -> Layout:
        """The TMEM side (thr, bit): every thread of the warp sees the whole access (stride 0)."""
        return _L((32, self._width * (32 if self.shape == "32dp32b" else 16)), (0, 1))

    @property
    def _reg_side(self) -> Layout:
        """The register side (thr, bit) -> bit of the access, as CuTe's Copy_Traits DstLayout of the load."""
        n, s = self.repeat, self.shape
        if s == "32dp32b":
            return _L((32, 32 * n), (32 * n, 1))
        if s == "16dp32b":
            return _L(((16, 2), 32 * n), ((64 * n, 32 * n), 1))
        if s == "16dp64b":
            if n == 1:
                return _L(((2, 2, 8), 32), ((512, 32, 64), 1))
            return _L(((2, 2, 8), (32, n)), ((512 * n, 32, 64 * n), (1, 64)))
        if s == "16dp128b":
            if n == 1:
                return _L(((4, 8), (32, 2)), ((32, 128), (1, 1024)))
            return _L(((4, 8), (32, 2, n)), ((32, 128 * n), (1, 1024 * n, 128)))
        if n == 1:  # 16dp256b
            return _L(((4, 8), (64, 2)), ((64, 256), (1, 2048)))
        return _L(((4, 8), (64, 2, n)), ((64, 256 * n), (1, 2048 * n, 256)))

    @property
    def src_layout(self) -> Layout:
        return self._tmem_side if self.is_load else self._reg_side

    @property
    def dst_layout(self) -> Layout:
        return self._reg_side if self.is_load else self._tmem_side

    @property
    def ref_layout(self) -> Layout:
        return self._tmem_side


def _factory(shape: str, n: int, is_load: bool, pack16: bool):
    op = TmemCopyOp(shape, n, is_load, pack16)

    def make() -> TmemCopyOp:
        return op

    make.__name__ = make.__qualname__ = op.name
    make.__doc__ = f"CuTe's ``{op.name}{{}}``: ``{op.ptx}``."
    return make


TMEM_OPS = {}
for _shape, _max in _MAX_REPEAT.items():
    _n = 1
    while _n <= _max:
        for _load in (True, False):
            for _pack in (False, True):
                _f = _factory(_shape, _n, _load, _pack)
                TMEM_OPS[_f.__name__] = _f
        _n *= 2
globals().update(TMEM_OPS)

__all__ = ["TmemCopyOp", *TMEM_OPS]
