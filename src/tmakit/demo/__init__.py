"""``tmakit demo``: the walkthroughs of examples/ (load, prefetch, multicast, store, reduce) on the emulator or GPU."""

from __future__ import annotations

from pathlib import Path

from .backends import BackendUnavailable, EmuBackend, GpuBackend, choose, gpu_status

__all__ = ["BackendUnavailable", "EmuBackend", "GpuBackend", "NAMES", "choose", "gpu_status", "run"]

NAMES = ("load", "prefetch", "multicast", "store", "reduce")


def run(which: str = "all", backend=None, figures: str | Path | None = None) -> None:
    """Run walkthrough ``which`` (one of NAMES or "all") on ``backend`` (default: ``choose("auto")``)."""
    if which == "blackwell":  # seed 004: emulator only (no Blackwell GPU backend)
        from .blackwell import run as run_blackwell

        return run_blackwell()
    if which == "hopper":  # TMA + wgmma GEMM (sm_90), emulator only
        from .sm90_tma_wgmma_gemm import main as run_hopper

        return run_hopper()
    if which == "hopper-cute":  # CuTe's Hopper tutorial (wgmma_tma_sm90.cu) on tmakit.mma's GMMA, emulator only
        from .sm90_cute_wgmma_tma import main as run_hopper_cute

        return run_hopper_cute()
    if which == "grouped":  # descriptors edited on the device (CUTLASS 57_hopper_grouped_gemm), emulator only
        from .grouped_gemm import main as run_grouped

        return run_grouped()
    if which == "grouped-k":  # grouped_mm along K: per-group token extents edited on the device, emulator only
        from .grouped_k import main as run_grouped_k

        return run_grouped_k()
    from .walkthroughs import WALKTHROUGHS

    backend = backend or choose("auto")
    names = NAMES if which == "all" else (which,)
    fig_dir = Path(figures) if figures is not None else None
    for name in names:
        for fn in WALKTHROUGHS[name]:
            fn(backend, fig_dir)
    if which == "all" and fig_dir is not None:
        from .walkthroughs import extra_figures

        extra_figures(fig_dir)
