"""Pictures of tiles, partitions, swizzles and multicast masks (matplotlib)."""
