"""First contact: the test suite's own hygiene, the README's set-up, and the CLI's first commands."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path


def test_tests_use_a_temporary_kernel_cache():
    """The suite compiles hundreds of kernels; they go to a temporary directory, never ~/.cache/tmakit."""
    d = Path(os.environ["TMAKIT_CACHE_DIR"]).resolve()
    assert d.is_relative_to(Path(tempfile.gettempdir()).resolve())
    assert not d.is_relative_to((Path.home() / ".cache").resolve())


README = Path(__file__).resolve().parents[1] / "README.md"
PYPROJECT = README.parent / "pyproject.toml"


def _section(title: str) -> str:
    text = README.read_text()
    start = text.index(f"## {title}\n")
    end = text.find("\n## ", start + 1)
    return text[start:end if end > 0 else None]


def test_readme_setup_makes_a_venv_before_pip_install():
    """System Pythons (PEP 668) refuse `pip install -e .` outside a virtual environment."""
    import re

    setup = _section("Set up")
    first = re.search(r"```bash\n(.*?)```", setup, flags=re.S).group(1)
    assert "python3 -m venv" in first and first.index("venv") < first.index("pip install -e .")
    assert "tmakit demo" in first
    required = re.search(r'requires-python = ">=(\d+\.\d+)"', PYPROJECT.read_text()).group(1)
    assert f"Python {required} or newer" in setup


def test_readme_test_command_is_one_command():
    """CI runs the block after the marker: one line, no venv step (CI makes its own)."""
    import re

    block = re.search(r"<!-- test-command -->\n```bash\n(.*?)```", README.read_text(), flags=re.S).group(1)
    assert len(block.strip().splitlines()) == 1 and "venv" not in block


def test_readme_demo_sample_is_what_a_plain_install_prints(monkeypatch, capsys):
    """`pip install -e .` brings no cuda-bindings: the README's first `tmakit demo load` line is what that prints."""
    import re
    import sys

    from tmakit.cli import main

    monkeypatch.setitem(sys.modules, "cuda.bindings", None)
    assert main(["demo", "load"]) == 0
    out = capsys.readouterr().out
    sample = re.search(r"\$ tmakit demo load\n(.*?)```", _section("Tour"), flags=re.S).group(1)
    lines = [ln for ln in sample.splitlines() if ln.strip() not in ("", "...")]
    assert out.splitlines()[0] == lines[0]
    for ln in lines[1:]:
        assert ln in out, ln


def test_readme_states_no_fuzz_total_the_conformance_doc_lacks():
    """A count in the README's summary of the conformance runs must be one docs/CONFORMANCE.md states."""
    import re

    head = README.read_text().split("## Set up")[0]
    conformance = (README.parent / "docs" / "CONFORMANCE.md").read_text()
    for n in re.findall(r"(\d[\d,]*) fuzz cases", head):
        assert n in conformance, n
