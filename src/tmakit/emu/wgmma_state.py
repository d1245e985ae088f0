"""Per-warpgroup bookkeeping of ``wgmma``: fences, the open (uncommitted) MMAs, committed groups, and the hazard
checks on registers (PTX ISA, ``wgmma.fence`` / ``wgmma.commit_group`` / ``wgmma.wait_group``).

A CTA is one Python program, so a warpgroup is a number (0..7, a CTA has at most 1024 threads) that the program
passes; each has its own ``WarpgroupState``. Register hazards reported (``RaceError``, or a warning when not strict):

* accessing an accumulator (or an A fragment) that an MMA not yet covered by a completed ``wgmma.wait_group`` may
  still write (or read);
* an MMA issued before any ``wgmma.fence`` of its warpgroup, or on registers the program accessed after the last
  ``wgmma.fence`` (PTX: the fence orders register accesses before the async MMA that uses the same registers; only
  accumulator accesses between MMAs of the same shape are ordered without it).
"""

from __future__ import annotations

from .errors import IllegalInstruction, RaceError

MAX_WARPGROUPS = 8


class WarpgroupState:
    def __init__(self, cta, warpgroup: int):
        self.cta, self.warpgroup = cta, warpgroup
        self.fences = 0  # wgmma.fence executed so far (an epoch counter)
        self.open: list = []  # MMAs since the last commit_group
        self.groups: list[list] = []  # committed, not yet waited for, oldest first
        self.committed = 0  # groups committed so far

    @property
    def label(self) -> str:
        return f"warpgroup {self.warpgroup} of {self.cta.label}"

    def report(self, msg: str) -> None:
        self.cta.cluster.launch.report(RaceError(msg))


def warpgroup_state(cta, warpgroup) -> WarpgroupState:
    if isinstance(warpgroup, bool) or not isinstance(warpgroup, int) or not 0 <= warpgroup < MAX_WARPGROUPS:
        raise IllegalInstruction(f"{cta.label}: warpgroup {warpgroup!r} must be 0..{MAX_WARPGROUPS - 1} (threads "
                                 "128w..128w+127; a CTA has at most 1024 threads)")
    table = getattr(cta, "wgmma_states", None)
    if table is None:
        table = cta.wgmma_states = {}
    st = table.get(warpgroup)
    if st is None:
        st = table[warpgroup] = WarpgroupState(cta, warpgroup)
    return st


def why_pending(state: WarpgroupState, op) -> str:
    """Why ``op`` is not known to be complete."""
    if op.group is None:
        return "no wgmma_commit_group covers it yet"
    newer = state.committed - op.group - 1
    return (f"its group (#{op.group} of {state.label}) has not been waited for: call wgmma_wait_group(n) with n <= "
            f"{newer} (the groups committed after it) first")


class Registers:
    """Registers of one warpgroup that async MMAs use: tracks the MMAs that may still use them and the last program
    access (for the fence rule)."""

    kind = "registers"

    def __init__(self, state: WarpgroupState):
        self.state = state
        self.pending: list = []  # MMAs using these registers, not yet waited for
        self.touched: int | None = None  # state.fences at the program's last access

    def access(self, how: str) -> None:
        """The program reads or writes these registers (``how``: "reads" / "writes")."""
        self.pending = [op for op in self.pending if not op.waited]
        if self.pending:
            op = self.pending[-1]
            self.state.report(f"{self.state.label} {how} the {self.kind} of {op.what} before that MMA is known to be "
                              f"complete: {why_pending(self.state, op)} (PTX: accessing them before the covering "
                              "wgmma.wait_group is undefined)")
        self.touched = self.state.fences

    def check_fenced(self, what: str) -> None:
        """Before an MMA uses these registers: no program access since the last ``wgmma.fence``."""
        if self.touched is not None and self.touched == self.state.fences:
            self.state.report(f"{what} in {self.state.label} uses {self.kind} that the program accessed after the "
                              "last wgmma.fence: call wgmma_fence() between touching them and the MMA")
