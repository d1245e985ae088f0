"""The pictures. matplotlib is imported inside each function, so ``import tmakit`` never needs it."""

from __future__ import annotations

from pathlib import Path

import numpy as np

PALETTE = ["#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2", "#edc948", "#b07aa1", "#ff9da7",
           "#9c755f", "#bab0ac", "#86bcb6", "#d4a6c8", "#8cd17d", "#f1ce63", "#a0cbe8", "#ffbe7d"]


def _plt():
    try:
        import matplotlib

        matplotlib.use("Agg", force=False)
        import matplotlib.pyplot as plt
    except ImportError as e:  # pragma: no cover - exercised only without matplotlib
        raise ImportError("tmakit.viz needs matplotlib: pip install 'tmakit[viz]'") from e
    return plt


def _color(i: int) -> str:
    return PALETTE[int(i) % len(PALETTE)]


def _light(hex_color: str, amount: float = 0.55):
    from matplotlib.colors import to_rgb

    r, g, b = to_rgb(hex_color)
    return (r + (1 - r) * amount, g + (1 - g) * amount, b + (1 - b) * amount)


def _grid_axes(ax, rows: int, cols: int, xlabel: str = "", ylabel: str = "", ticks: bool = True):
    ax.set_xlim(0, cols)
    ax.set_ylim(rows, 0)
    ax.set_aspect("equal")
    if ticks:
        ax.set_xticks(np.arange(cols) + 0.5, [str(c) for c in range(cols)], fontsize=8)
        ax.set_yticks(np.arange(rows) + 0.5, [str(r) for r in range(rows)], fontsize=8)
        ax.xaxis.tick_top()
    else:
        ax.set_xticks([])
        ax.set_yticks([])
    ax.tick_params(length=0)
    for s in ax.spines.values():
        s.set_visible(False)
    if xlabel:
        ax.set_xlabel(xlabel, fontsize=9)
    if ylabel:
        ax.set_ylabel(ylabel, fontsize=9)


def _cell(ax, r, c, color, text="", fontsize=8, edge="white", lw=1.0, textcolor="black"):
    from matplotlib.patches import Rectangle

    ax.add_patch(Rectangle((c, r), 1, 1, facecolor=color, edgecolor=edge, linewidth=lw))
    if text != "":
        ax.text(c + 0.5, r + 0.5, str(text), ha="center", va="center", fontsize=fontsize, color=textcolor)


def save(fig, path) -> Path:
    """Write ``fig`` to ``path`` (PNG or SVG by suffix) and close it."""
    plt = _plt()
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110, bbox_inches="tight")
    plt.close(fig)
    return path


# ------------------------------------------------------------------------------------------------ tiles -> CTAs
def tile_ownership(shape, tile, highlight=None, values=None, title: str | None = None):
    """Which CTA owns which element: a [N,K] tensor cut into [CTA_N,CTA_K] tiles, CTA (i,j) owning tile (i,j)
    (``local_tile(coord, tile, (i,j))``). ``highlight`` outlines one CTA's tile; ``values`` labels the cells."""
    plt = _plt()
    from matplotlib.patches import Rectangle

    N, K = (int(x) for x in shape)  # noqa: N806
    tn, tk_ = (int(x) for x in tile)
    gn, gk = -(-N // tn), -(-K // tk_)
    fig, ax = plt.subplots(figsize=(max(4.0, 0.62 * K + 1.2), max(3.0, 0.62 * N + 1.4)))
    _grid_axes(ax, N, K, xlabel="K (contiguous)", ylabel="N")
    for r in range(N):
        for c in range(K):
            i, j = r // tn, c // tk_
            base = _color(i * gk + j)
            hl = highlight is not None and (i, j) == tuple(highlight)
            text = "" if values is None else f"{np.asarray(values)[r, c]:g}"
            _cell(ax, r, c, base if hl else _light(base), text, fontsize=9, textcolor="white" if hl else "black")
    for i in range(gn):
        for j in range(gk):
            hl = highlight is not None and (i, j) == tuple(highlight)
            ax.add_patch(Rectangle((j * tk_, i * tn), tk_, tn, fill=False, edgecolor="black",
                                   linewidth=3 if hl else 1.2))
            ax.text(j * tk_ + tk_ - 0.06, i * tn + 0.08, f"CTA ({i},{j})", ha="right", va="top", fontsize=7,
                    color="black", fontweight="bold" if hl else "normal",
                    bbox=dict(facecolor="white", edgecolor="none", alpha=0.7, pad=0.5))
    ax.set_title(title or f"[{N},{K}] tensor in [{tn},{tk_}] tiles: grid [{gn},{gk}] CTAs, CTA (i,j) loads tile (i,j)"
                 + (f"\nCTA {tuple(highlight)} gets rows {highlight[0] * tn}..{highlight[0] * tn + tn - 1}, "
                    f"cols {highlight[1] * tk_}..{highlight[1] * tk_ + tk_ - 1}" if highlight is not None else ""),
                 fontsize=10, pad=22)
    return fig


# ------------------------------------------------------------------------------------------------ multicast
def multicast_split(tile_shape, cluster_size: int, title: str | None = None):
    """A cluster's multicast split of one [rows, cols] row-major smem tile: CTA r issues the r-th contiguous share
    (slowest-moving dimension first, as CuTe's make_tma_copy); every box goes to every CTA's smem (mask all ones).
    One panel per receiving CTA, cells colored by the CTA that issued them."""
    plt = _plt()
    rows, cols = (int(x) for x in tile_shape)
    cs = int(cluster_size)
    share = rows * cols // cs
    scale = 0.42 if cols <= 8 else 0.22
    if cols > 2 * rows:  # wide tiles: one panel per row of the figure
        fig, axes = plt.subplots(cs, 1, figsize=(scale * cols + 1.0, (scale * rows + 0.55) * cs + 1.3), squeeze=False)
        axes = axes[:, 0]
    else:
        fig, axes = plt.subplots(1, cs, figsize=(max(2.2, scale * cols + 0.6) * cs + 0.4,
                                                 max(2.2, scale * rows + 1.9)), squeeze=False)
        axes = axes[0]
    for rank, ax in enumerate(axes):
        _grid_axes(ax, rows, cols, ticks=cols <= 8)
        for r in range(rows):
            for c in range(cols):
                issuer = (r * cols + c) // share
                _cell(ax, r, c, _color(issuer) if issuer == rank else _light(_color(issuer)),
                      str(issuer) if cols <= 8 else "", fontsize=8)
        ax.set_title(f"smem of CTA {rank}", fontsize=9)
    from matplotlib.patches import Patch

    handles = []
    for k in range(cs):
        first, last = k * share // cols, ((k + 1) * share - 1) // cols
        what = f"rows {first}-{last}" if first != last else f"row {first}"
        if share % cols:
            what = f"elements {k * share}-{(k + 1) * share - 1}"
        handles.append(Patch(facecolor=_color(k), label=f"CTA {k} issues {what}"))
    fig.legend(handles=handles, loc="lower center", ncol=min(cs, 4), fontsize=8, frameon=False,
               bbox_to_anchor=(0.5, -0.02))
    fig.suptitle(title or f"multicast split: {cs}-CTA cluster loads a [{rows},{cols}] tile\n"
                 f"each CTA issues 1/{cs} of it with mask {(1 << cs) - 1:#0{cs + 2}b}; every CTA receives all of it "
                 "(dark = issued by this CTA)", fontsize=9)
    fig.tight_layout(rect=(0, 0.08 if len(axes) == cs and cols <= 2 * rows else 0.03, 1, 1))
    return fig


def multicast_mask(cluster_layout, cta_coord, modes, title: str | None = None):
    """``create_tma_multicast_mask(cluster_layout, cta_coord, modes)`` over the cluster grid: the CTAs whose bit is
    set (receivers) colored, the issuing CTA outlined, each cell labeled with its block rank."""
    plt = _plt()
    from ..layout import size
    from ..tma import create_tma_multicast_mask

    mask = create_tma_multicast_mask(cluster_layout, cta_coord, modes)
    n = int(size(cluster_layout))
    shape = cluster_layout.shape if isinstance(cluster_layout.shape, tuple) else (cluster_layout.shape,)
    gr = int(size(shape[0]))
    gc = n // gr
    fig, ax = plt.subplots(figsize=(max(3.0, 0.9 * gc + 1.4), max(2.4, 0.9 * gr + 1.5)))
    _grid_axes(ax, gr, gc, xlabel="cluster modes 1.. (flattened)", ylabel="cluster mode 0")
    me = int(cluster_layout(cta_coord))
    for i in range(gr):
        for j in range(gc):
            rank = int(cluster_layout(i + gr * j))
            on = bool(mask >> rank & 1)
            _cell(ax, i, j, "#4e79a7" if on else "#e8e8e8", f"rank {rank}", fontsize=8,
                  textcolor="white" if on else "#555555", edge="black" if rank == me else "white",
                  lw=3 if rank == me else 1)
    ax.set_title(title or f"multicast mask {mask:#0{n + 2}b} ({mask:#x})\ncluster {cluster_layout}, "
                 f"CTA {cta_coord}, modes {tuple(modes)}; blue = receives", fontsize=9, pad=20)
    return fig


# ------------------------------------------------------------------------------------------------ swizzle
_SW_MASK = {32: 0b1, 64: 0b11, 128: 0b111}


def swizzle_phys(addr, span: int):
    """docs/HARDWARE.md §2: ``phys(A) = A ^ (((A >> 7) & m) << 4)`` with m = 1, 3, 7 for 32/64/128-byte swizzle."""
    m = _SW_MASK[int(span)]
    a = np.asarray(addr)
    return a ^ (((a >> 7) & m) << 4)


def swizzle_chunks(span: int = 128, lines: int = 8, title: str | None = None):
    """The 16-byte-chunk permutation of a 32/64/128-byte swizzle on 8 lines of 128 bytes (32 banks of 4 bytes):
    left the unswizzled image, right where each chunk lands. Colors = the logical chunk (the column a warp reads),
    x axis = the 4 banks each physical chunk position covers: one color spread over distinct columns = no conflict."""
    plt = _plt()
    span = int(span)
    fig, axes = plt.subplots(1, 2, figsize=(10.5, 0.5 * lines + 2.2))
    for ax in axes:
        _grid_axes(ax, lines, 8, ticks=False)
        ax.set_xticks(np.arange(8) + 0.5, [f"{4 * c}-{4 * c + 3}" for c in range(8)], fontsize=7)
        ax.set_yticks(np.arange(lines) + 0.5, [f"{128 * r}" for r in range(lines)], fontsize=7)
        ax.xaxis.tick_top()
        ax.set_xlabel("banks (each 16-byte chunk spans 4 banks)", fontsize=8)
        ax.set_ylabel("line start byte", fontsize=8)
    for r in range(lines):
        for c in range(8):
            a = r * 128 + c * 16
            p = int(swizzle_phys(a, span))
            pr, pc = p // 128, (p % 128) // 16
            _cell(axes[0], r, c, _color(c), f"{c}", fontsize=9, textcolor="white")
            _cell(axes[1], pr, pc, _color(c), f"{c}", fontsize=9, textcolor="white")
    m = _SW_MASK[span]
    axes[0].set_title("unswizzled (logical chunk c of each line)", fontsize=9)
    axes[1].set_title(f"SWIZZLE_{span}B: chunk c of line r lands at c ^ (r & {m})", fontsize=9)
    fig.suptitle(title or f"{span}-byte swizzle: phys = A ^ (((A >> 7) & {m:#b}) << 4)  "
                 f"(CuTe Swizzle<{m.bit_length()},4,3>, period {128 * (m + 1)} B)", fontsize=10)
    fig.tight_layout()
    return fig


# ------------------------------------------------------------------------------------------------ layouts
def layout_grid(layout, title: str | None = None, color_by: int | None = None, period: int | None = None):
    """A rank-2 layout as a colored grid, like ``print_layout``: cell (i,j) shows ``layout(i,j)``.
    Colors group offsets by ``color_by`` consecutive values (default: 8, e.g. one 16-byte chunk of bf16), modulo
    ``period`` groups when given (e.g. 8 chunks of a 128-byte line: same color = same logical chunk column)."""
    plt = _plt()
    from ..layout import size

    shape = layout.shape
    rows, cols = int(size(shape[0])), int(size(shape[1]))
    group = int(color_by or 8)
    cell = 0.55 if cols <= 16 else 0.3
    fig, ax = plt.subplots(figsize=(max(3.0, cell * cols + 1.0), max(2.0, cell * rows + 1.3)))
    _grid_axes(ax, rows, cols, ticks=cols <= 32)
    for i in range(rows):
        for j in range(cols):
            v = int(layout(i, j))
            k = v // group if not period else (v // group) % int(period)
            _cell(ax, i, j, _light(_color(k), 0.25), str(v), fontsize=8 if cols <= 16 else 5)
    ax.set_title(title or str(layout), fontsize=9, pad=18)
    return fig
