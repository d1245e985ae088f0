"""The TMA copy operations (CuTe's ``SM90_TMA_*`` structs): what each does and which PTX it issues."""

from __future__ import annotations

from dataclasses import dataclass

from .errors import TmaDescriptorError


@dataclass(frozen=True)
class CopyOp:
    """One TMA operation. ``kind`` is ``load``, ``store``, ``reduce`` or ``prefetch`` (``Op.PREFETCH``);
    ``reduce_op`` names the reduction."""

    name: str
    kind: str
    multicast: bool = False
    reduce_op: str | None = None
    im2col: bool = False  # SM90_TMA_*_IM2COL (make_im2col_tma_copy): .im2col loads, .im2col_no_offs stores

    def __str__(self):
        return self.name

    @property
    def is_load(self) -> bool:
        return self.kind == "load"

    @property
    def is_store(self) -> bool:
        return self.kind in ("store", "reduce")

    @property
    def PREFETCH(self) -> CopyOp:  # noqa: N802 - CuTe's name
        """CuTe's ``Op::PREFETCH``: the L2 prefetch of a load's tile (the multicast load's is the plain load's, as
        in CuTe). ``cute::prefetch(tma, src)`` (``tk.emu.prefetch``) issues it."""
        if self.kind != "load":
            raise TmaDescriptorError("copy.prefetch", "only TMA loads have a PREFETCH op (CuTe's Op::PREFETCH)",
                                     self.name, "take PREFETCH of tk.SM90_TMA_LOAD or tk.SM90_TMA_LOAD_IM2COL")
        return CopyOp(f"SM90_TMA_LOAD{'_IM2COL' if self.im2col else ''}::PREFETCH", "prefetch", im2col=self.im2col)

    @property
    def ptx(self) -> str:
        if self.kind == "prefetch":
            return f"cp.async.bulk.prefetch.tensor.Nd.L2.global.{'im2col' if self.im2col else 'tile'}"
        if self.kind == "load":
            mc = ".multicast::cluster" if self.multicast else ""
            mode = "im2col" if self.im2col else "tile"
            return f"cp.async.bulk.tensor.Nd.shared::cluster.global.{mode}.mbarrier::complete_tx::bytes{mc}"
        if self.kind == "store":
            mode = "im2col_no_offs" if self.im2col else "tile"
            return f"cp.async.bulk.tensor.Nd.global.shared::cta.{mode}.bulk_group"
        return f"cp.reduce.async.bulk.tensor.Nd.global.shared::cta.{self.reduce_op}.tile.bulk_group"


SM90_TMA_LOAD = CopyOp("SM90_TMA_LOAD", "load")
SM90_TMA_LOAD_MULTICAST = CopyOp("SM90_TMA_LOAD_MULTICAST", "load", multicast=True)
SM90_TMA_STORE = CopyOp("SM90_TMA_STORE", "store")
SM90_TMA_REDUCE_ADD = CopyOp("SM90_TMA_REDUCE_ADD", "reduce", reduce_op="add")
SM90_TMA_REDUCE_MIN = CopyOp("SM90_TMA_REDUCE_MIN", "reduce", reduce_op="min")
SM90_TMA_REDUCE_MAX = CopyOp("SM90_TMA_REDUCE_MAX", "reduce", reduce_op="max")
SM90_TMA_REDUCE_INC = CopyOp("SM90_TMA_REDUCE_INC", "reduce", reduce_op="inc")
SM90_TMA_REDUCE_DEC = CopyOp("SM90_TMA_REDUCE_DEC", "reduce", reduce_op="dec")
SM90_TMA_REDUCE_AND = CopyOp("SM90_TMA_REDUCE_AND", "reduce", reduce_op="and")
SM90_TMA_REDUCE_OR = CopyOp("SM90_TMA_REDUCE_OR", "reduce", reduce_op="or")
SM90_TMA_REDUCE_XOR = CopyOp("SM90_TMA_REDUCE_XOR", "reduce", reduce_op="xor")

ALL_OPS = (SM90_TMA_LOAD, SM90_TMA_LOAD_MULTICAST, SM90_TMA_STORE, SM90_TMA_REDUCE_ADD, SM90_TMA_REDUCE_MIN,
           SM90_TMA_REDUCE_MAX, SM90_TMA_REDUCE_INC, SM90_TMA_REDUCE_DEC, SM90_TMA_REDUCE_AND, SM90_TMA_REDUCE_OR,
           SM90_TMA_REDUCE_XOR)


def copy_op(op) -> CopyOp:
    """``op`` itself, or the op a CuTe name such as ``"SM90_TMA_LOAD"`` names (exact names only)."""
    if isinstance(op, CopyOp):
        return op
    found = [o for o in ALL_OPS if isinstance(op, str) and op == o.name]
    if found:
        return found[0]
    raise TmaDescriptorError("copy.op", "op must be one of the TMA copy operations", op,
                             "pass one of tk." + ", tk.".join(o.name for o in ALL_OPS) + " (or its name as a string)",
                             f"op = {op!r}")
