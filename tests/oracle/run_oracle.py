"""Build and run the CuTe oracle: translate the cases (gen_cpp.py), compile them as host C++, and print the golden
file. A case CuTe rejects at compile time (a static_assert on the layout) is located by the compiler's
``required from here`` line, dropped from the build, and recorded as ``!!! rejected at compile time``; tmakit must
raise ``LayoutError`` for it.

  python tests/oracle/run_oracle.py OUT.cpp GOLDEN.txt -- COMPILER FLAGS...   (regen.sh passes these)
"""

from __future__ import annotations

import re
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from cases import CASES  # noqa: E402
from gen_cpp import main as write_cpp  # noqa: E402

REJECTED = "!!! rejected at compile time"


def _failing_cases(cpp: Path, stderr: str) -> set[str]:
    """The cases on the lines of ``cpp`` that the compiler's errors point at."""
    lines = cpp.read_text().splitlines()
    found = set()
    for m in re.finditer(re.escape(cpp.name) + r":(\d+):\d+:(?:   required from here| error)", stderr):
        label = re.search(r'R"__\((.*)\)__"', lines[int(m.group(1)) - 1])
        if label:
            found.add(label.group(1))
    return found


def build(cpp: Path, exe: Path, compiler: list[str]) -> list[str]:
    """Compile, dropping rejected cases until the rest compiles; returns the rejected cases."""
    rejected: list[str] = []
    while True:
        write_cpp(cpp, rejected)
        done = subprocess.run([*compiler, str(cpp), "-o", str(exe)], capture_output=True, text=True)
        if done.returncode == 0:
            return rejected
        bad = _failing_cases(cpp, done.stderr) - set(rejected)
        if not bad:
            sys.exit(f"the oracle does not compile, and no case is to blame:\n{done.stderr[-4000:]}")
        print(f"CuTe rejects {len(bad)} case(s) at compile time: {sorted(bad)}", file=sys.stderr)
        rejected += sorted(bad)


def main(argv: list[str]) -> None:
    cpp, golden, compiler = Path(argv[0]), Path(argv[1]), argv[argv.index("--") + 1:]
    with tempfile.TemporaryDirectory() as tmp:
        exe = Path(tmp) / "oracle"
        rejected = build(cpp, exe, compiler)
        out = subprocess.run([str(exe)], capture_output=True, text=True, check=True).stdout
    out += "".join(f">>> {e}\n{REJECTED}\n" for e in CASES if e in set(rejected))
    golden.write_text(out)


if __name__ == "__main__":
    main(sys.argv[1:])
