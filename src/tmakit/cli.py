"""The ``tmakit`` command."""

from __future__ import annotations

import argparse
import sys


def build_parser() -> argparse.ArgumentParser:
    from . import __version__

    p = argparse.ArgumentParser(prog="tmakit", description="Hopper's Tensor Memory Accelerator from Python.")
    p.add_argument("--version", action="version", version=f"tmakit {__version__}")
    p.add_subparsers(dest="command")
    return p


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if args.command is None:
        build_parser().print_help()
    return 0


if __name__ == "__main__":
    sys.exit(main())
