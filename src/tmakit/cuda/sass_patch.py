"""Edit the scheduling control bits of sm_90 SASS in a cubin (no disassembler needed).

Every sm_90 instruction is 16 bytes; besides the operation, its high word carries scheduling hints the compiler
chose: the stall count, the *yield* flag and the operand *reuse* flags (docs/HARDWARE.md §13). Neither changes what
an instruction computes -- a cleared reuse flag makes the operand come from the register file again, a yield flag
lets the scheduler switch warps -- so rewriting them keeps every result bit-identical; only the issue order moves.

What for: the FP8 GEMM's promotion is a run of ~96 ``FFMA total, part, scale, total`` (``FADD`` without block
scales) issued while the other consumer warpgroup's wgmmas run. ptxas lets every other instruction of the run give
up the issue slot; the rest keep it (and may reuse operands). Letting more of the run yield can let the other
warps of the sub-partition issue sooner (DeepGEMM rewrites its FFMA runs this way). :func:`patch_runs` rewrites
the flags of such runs by one of ``MODES``. Measured on the FP8 GEMM, none beat ptxas's own flags (docs/GEMM.md,
"The promotion's yield flags"), so no op uses them.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

from .errors import RuntimeUnavailable

__all__ = ["FADD", "FFMA", "MODES", "Instr", "patch_runs", "runs", "text_sections"]

FFMA = 0x223  # FFMA Rd, Ra, Rb, Rc (all registers): the low 12 bits of the low word
FADD = 0x221  # FADD Rd, Ra, Rb
MODES = ("yield-all", "yield-head", "yield-none", "yield-every-3", "yield-every-4", "yield-every-8",
         "reuse-every-3", "reuse-every-4", "reuse-every-8")

_STAY = 1 << 45  # high-word bit: set = keep the issue slot (operand reuse allowed), clear = may yield
_REUSE = 0xF << 58  # high-word operand reuse flags, honoured only with _STAY set
_SHT_PROGBITS = 1


@dataclass(frozen=True)
class Instr:
    """One instruction of a text section: its byte offset in the cubin and its two words."""

    offset: int
    lo: int
    hi: int

    @property
    def opcode(self) -> int:
        return self.lo & 0xFFF

    @property
    def sources(self) -> tuple[int, int, int]:
        """Registers a, b, c (FADD: a, b and an unused c)."""
        return (self.lo >> 24) & 0xFF, (self.lo >> 32) & 0xFF, self.hi & 0xFF

    @property
    def yields(self) -> bool:
        return not self.hi & _STAY

    @property
    def reuse(self) -> int:
        return (self.hi >> 58) & 0xF


def text_sections(cubin: bytes) -> dict[str, tuple[int, int]]:
    """``{".text.<symbol>": (file offset, size)}`` of an ELF64 little-endian cubin."""
    if cubin[:4] != b"\x7fELF" or cubin[4] != 2 or cubin[5] != 1:
        raise RuntimeUnavailable("not an ELF64 little-endian cubin; SASS patching needs the compiler's cubin")
    shoff, = struct.unpack_from("<Q", cubin, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", cubin, 0x3A)
    heads = [struct.unpack_from("<IIQQQQ", cubin, shoff + i * shentsize) for i in range(shnum)]
    strtab = heads[shstrndx][4]
    out = {}
    for name_off, kind, _flags, _addr, off, size in heads:
        end = cubin.index(b"\0", strtab + name_off)
        name = cubin[strtab + name_off:end].decode()
        if kind == _SHT_PROGBITS and name.startswith(".text."):
            out[name] = (off, size)
    return out


def _instrs(cubin: bytes, off: int, size: int) -> list[Instr]:
    return [Instr(off + i, *struct.unpack_from("<QQ", cubin, off + i)) for i in range(0, size - size % 16, 16)]


def runs(cubin: bytes, opcode: int = FFMA, min_len: int = 16) -> list[list[Instr]]:
    """Runs of at least ``min_len`` instructions of ``opcode`` in the text sections, each allowed one other
    instruction between two of its members (ptxas places a barrier arrival or a select there)."""
    found = []
    for off, size in text_sections(cubin).values():
        cur: list[Instr] = []
        gap = 0
        for ins in _instrs(cubin, off, size):
            if ins.opcode == opcode:
                cur.append(ins)
                gap = 0
            elif cur and gap == 0:
                gap = 1
            else:
                if len(cur) >= min_len:
                    found.append(cur)
                cur, gap = [], 0
        if len(cur) >= min_len:
            found.append(cur)
    return found


def _yielding(hi: int) -> int:
    return hi & ~(_STAY | _REUSE)


def _with_reuse(hi: int, ins: Instr, nxt: Instr | None, nsrc: int) -> int:
    """``hi`` with a reuse flag on each source slot that the instruction right after ``ins`` reads again."""
    if nxt is None or nxt.offset != ins.offset + 16:
        return hi
    for slot, (r, q) in enumerate(zip(ins.sources[:nsrc], nxt.sources[:nsrc])):
        if r == q and r != 255:  # RZ is no register
            hi |= 1 << (58 + slot)
    return hi


def _rewrite(run: list[Instr], i: int, mode: str, nsrc: int) -> int:
    """The high word of run member ``i`` under ``mode`` (see :func:`patch_runs`)."""
    hi = run[i].hi
    if mode == "yield-none":
        return hi | _STAY
    if mode == "yield-all" or (mode == "yield-head" and i < len(run) * 9 // 16):
        return _yielding(hi)
    if mode == "yield-head":
        return hi
    every = int(mode.rsplit("-", 1)[1])
    if i % every == 0:
        return _yielding(hi)
    if mode.startswith("reuse-"):
        return _with_reuse(hi | _STAY, run[i], run[i + 1] if i + 1 < len(run) else None, nsrc)
    return hi | _STAY


def patch_runs(cubin: bytes, mode: str = "yield-all", opcode: int = FFMA, min_len: int = 16) -> tuple[bytes, int]:
    """The cubin with the control bits of every :func:`runs` member rewritten by ``mode``, and how many
    instructions changed:

    - ``"yield-all"``: every instruction of the run may yield (and so reuses no operand);
    - ``"yield-head"``: the same for the run's first 9/16, the rest as compiled;
    - ``"yield-none"``: no instruction of the run yields (operand reuse flags as compiled);
    - ``"yield-every-N"``: members 0, N, 2N ... yield, the others keep the slot (reuse flags as compiled);
    - ``"reuse-every-N"``: the same, the members that keep the slot also reusing each source register that the
      next instruction reads in the same slot.
    """
    if mode not in MODES:
        raise ValueError(f"SASS patch mode must be one of {MODES}, got {mode!r}")
    out = bytearray(cubin)
    changed = 0
    nsrc = 3 if opcode == FFMA else 2
    for run in runs(cubin, opcode, min_len):
        for i, ins in enumerate(run):
            hi = _rewrite(run, i, mode, nsrc)
            if hi != ins.hi:
                struct.pack_into("<Q", out, ins.offset + 8, hi)
                changed += 1
    return bytes(out), changed
