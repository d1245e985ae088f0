"""Errors of the GPU runtime: bad compile inputs, compile failures, driver failures; the cache's warning."""

from __future__ import annotations

import re

__all__ = ["CacheWarning", "CompileError", "CompileInputError", "CudaError", "RuntimeUnavailable"]


class RuntimeUnavailable(RuntimeError):
    """cuda-bindings, NVRTC or a GPU is missing."""


class CompileInputError(TypeError, ValueError):
    """An argument of ``compile`` that NVRTC would misread (a NUL byte, a string where a list belongs, bytes).

    Raised before anything reaches the compiler; the message says the rule, the value and the fix.
    """

    def __init__(self, what: str, value, fix: str):
        self.what, self.value, self.fix = what, value, fix
        super().__init__(f"{what}: got {_short(value)}. Fix: {fix}")


class CacheWarning(UserWarning):
    """The kernel disk cache cannot be used (no home directory, not writable, a file in its place): kernels are
    compiled without it. Issued once per cache directory and process."""


class CudaError(RuntimeError):
    """A CUDA driver call failed; names the call, its arguments and the driver's error."""

    def __init__(self, call: str, code: int, name: str = "", description: str = "", args: dict | None = None):
        self.call, self.code, self.name, self.description = call, int(code), name, description
        self.args_ = dict(args or {})
        shown = ", ".join(f"{k}={_short(v)}" for k, v in self.args_.items())
        msg = f"{call}({shown}) failed: {name or 'CUDA error'} ({code})"
        if description:
            msg += f": {description}"
        super().__init__(msg)


def _short(v, limit: int = 120) -> str:
    s = repr(v)
    return s if len(s) <= limit else s[: limit - 3] + "..."


_DIAG = re.compile(r"^(?P<file>[^\s()][^()]*)\((?P<line>\d+)\): "
                   r"(?P<kind>error|warning|catastrophic error)[^:]*: ?(?P<msg>.*)$")


class CompileError(RuntimeError):
    """Compilation failed. ``str()`` shows the compiler log with the offending source lines."""

    def __init__(self, name: str, log: str, source: str, options: list[str] | tuple[str, ...] = (),
                 compiler: str = "nvrtc", headers: dict[str, str] | None = None):
        self.name, self.log, self.source, self.options, self.compiler = name, log, source, list(options), compiler
        self.headers = dict(headers or {})
        self.diagnostics = [(m["file"], int(m["line"]), m["kind"], m["msg"])
                            for m in map(_DIAG.match, log.splitlines()) if m]
        super().__init__(self._format())

    def _lines_of(self, file: str) -> list[str] | None:
        base = file.replace("\\", "/")
        if base == self.name or base.endswith("/" + self.name) or self.name.endswith("/" + base):
            return self.source.splitlines()
        for hname, text in self.headers.items():
            if base.endswith(hname) or hname.endswith(base):
                return text.splitlines()
        return None

    def _format(self, context: int = 2) -> str:
        opts = " ".join(o for o in self.options if not o.startswith("--include-path"))
        out = [f"{self.compiler} failed to compile '{self.name}'" + (f" ({opts})" if opts else "")]
        shown = set()
        for file, line, kind, msg in self.diagnostics:
            if kind == "warning" or (file, line) in shown:
                continue
            shown.add((file, line))
            out.append(f"{file}({line}): {kind}: {msg}")
            lines = self._lines_of(file)
            if lines:
                lo, hi = max(1, line - context), min(len(lines), line + context)
                for n in range(lo, hi + 1):
                    out.append(f"  {'>' if n == line else ' '} {n:5d} | {lines[n - 1]}")
        out.append("--- full log ---")
        out.append(self.log.rstrip())
        return "\n".join(out)
