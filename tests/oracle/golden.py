"""The golden files' format (tests/data/cute_*oracle.txt): a block is a ``>>> label`` line followed by what CuTe
printed for that case, up to the next ``>>> `` line."""

from __future__ import annotations


def parse_blocks(text: str) -> list[tuple[str, str]]:
    """``[(label, printed text)]`` in file order."""
    blocks, label, lines = [], None, []
    for line in text.splitlines():
        if line.startswith(">>> "):
            if label is not None:
                blocks.append((label, "\n".join(lines)))
            label, lines = line[4:], []
        else:
            lines.append(line)
    if label is not None:
        blocks.append((label, "\n".join(lines)))
    return blocks
