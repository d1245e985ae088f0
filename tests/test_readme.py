"""The README's Python examples run as written (the first example's printed values are checked too)."""

import contextlib
import io
import pathlib
import re

README = pathlib.Path(__file__).resolve().parents[1] / "README.md"


def _python_blocks():
    return re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.S)


def test_readme_examples_run():
    blocks = _python_blocks()
    assert len(blocks) >= 2
    for code in blocks:
        buf = io.StringIO()
        with contextlib.redirect_stdout(buf):
            exec(compile(code, str(README), "exec"), {})  # noqa: S102 - the README's own code
        out = buf.getvalue()
        for expected in re.findall(r"# ((?:\(|ArithTuple|Sw<)\S.*)$", code, flags=re.M):
            assert expected.strip() in out
