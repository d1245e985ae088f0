"""Pictures of tiles, partitions, swizzles and multicast masks (matplotlib, imported lazily).

Every function returns a ``matplotlib.figure.Figure``; ``save(fig, path)`` writes PNG or SVG by suffix.

    from tmakit import viz
    viz.save(viz.tile_ownership((6, 8), (2, 4), highlight=(1, 1)), "tiles.png")
"""

from __future__ import annotations

from .pictures import layout_grid, multicast_mask, multicast_split, save, swizzle_chunks, swizzle_phys, tile_ownership

__all__ = ["layout_grid", "multicast_mask", "multicast_split", "save", "swizzle_chunks", "swizzle_phys",
           "tile_ownership"]
