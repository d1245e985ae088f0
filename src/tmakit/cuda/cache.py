"""Content-keyed disk cache of compiled cubins, and :func:`compile` (the cached JIT entry point).

Key = source + contents of the headers it includes from the package / user include dirs + options (include paths
dropped) + target + compiler version; no absolute paths. Entries are written to a temp file and ``os.replace``-d into
place under an ``fcntl`` lock, so concurrent processes neither corrupt nor duplicate them. ``TMAKIT_CACHE_DIR``
(default ``~/.cache/tmakit``) moves the cache; ``TMAKIT_CACHE=0`` turns the disk cache off.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import struct
import tempfile
import threading
from pathlib import Path

from . import nvrtc as _jit
from .nvrtc import DEFAULT_ARCH, PACKAGE_INCLUDE, Compiled

try:
    import fcntl
except ImportError:  # pragma: no cover - non-POSIX
    fcntl = None

__all__ = ["cache_dir", "cache_key", "compile", "compile_file", "clear_memory_cache", "stats"]

_FORMAT = 1
_MAGIC = b"TMAKITCUBIN\x01"
_HDR = struct.Struct("<QQ16s")  # meta length, cubin length, blake2b-128 of meta + cubin
_INCLUDE = re.compile(r'^[ \t]*#[ \t]*include[ \t]*[<"]([^">]+)[">]', re.M)

stats = {"compiles": 0, "disk_hits": 0, "memory_hits": 0}
_memory: dict[str, Compiled] = {}
_header_memo: dict[str, tuple] = {}
_key_memo: dict[tuple, tuple] = {}
_lock = threading.Lock()


def cache_dir() -> Path:
    """The cache directory: ``$TMAKIT_CACHE_DIR`` or ``~/.cache/tmakit``."""
    d = os.environ.get("TMAKIT_CACHE_DIR")
    if d:
        return Path(d)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "tmakit"


def clear_memory_cache() -> None:
    """Forget in-process entries and key memos (the disk cache stays)."""
    _memory.clear()
    _key_memo.clear()


def _header(path: str) -> tuple[str, str, tuple[str, ...], tuple[int, int]]:
    """(sha256, text, includes, (mtime, size)) of a header, memoised on (mtime, size)."""
    st = os.stat(path)
    sig = (st.st_mtime_ns, st.st_size)
    m = _header_memo.get(path)
    if m and m[3] == sig:
        return m
    with open(path, encoding="utf-8") as f:
        text = f.read()
    m = (hashlib.sha256(text.encode()).hexdigest(), text, tuple(_INCLUDE.findall(text)), sig)
    _header_memo[path] = m
    return m


def _scan_headers(source: str, roots: list[str], base: str | None):
    """Headers reachable from ``source`` under ``roots``.

    Returns ({name: sha}, {name: text}, any include unresolved, [(path, (mtime, size))] to revalidate a memo).
    """
    found: dict[str, str] = {}
    texts: dict[str, str] = {}
    deps: list[tuple[str, tuple[int, int]]] = []
    unresolved = False
    todo = [(tuple(_INCLUDE.findall(source)), base)]
    while todo:
        incs, here = todo.pop()
        for inc in incs:
            if inc in found:
                continue
            for root in ([here] if here else []) + roots:
                p = os.path.join(root, inc)
                if os.path.isfile(p):
                    digest, htext, sub, sig = _header(p)
                    found[inc], texts[inc] = digest, htext
                    deps.append((p, sig))
                    todo.append((sub, os.path.dirname(p)))
                    break
            else:
                unresolved = True
    return found, texts, unresolved, deps


def _system_headers_id() -> str:
    """Version of the CUDA runtime headers (only matters when a source includes headers outside our roots)."""
    try:
        from importlib.metadata import PackageNotFoundError, version

        for dist in ("nvidia-cuda-runtime", "nvidia-cuda-runtime-cu13", "nvidia-cuda-runtime-cu12"):
            try:
                return f"{dist}-{version(dist)}"
            except PackageNotFoundError:
                continue
    except ImportError:  # pragma: no cover
        pass
    return "|".join(_jit._wheel_include_dirs())  # CUDA_HOME headers: best effort


def cache_key(source: str, name: str, options: list[str], name_expressions=(), include_dirs=(),
              base: Path | None = None) -> tuple[str, dict[str, str]]:
    """(hex key, {header name: text}) for a compile; the texts feed error messages.

    Memoised per process on the arguments; the memo is revalidated by stat-ing the headers it read.
    """
    memo_key = (source, name, tuple(options), tuple(name_expressions), tuple(map(str, include_dirs)), str(base))
    m = _key_memo.get(memo_key)
    if m is not None and all(_stat_sig(p) == sig for p, sig in m[2]):
        return m[0], m[1]
    roots = [str(d) for d in include_dirs] + [str(PACKAGE_INCLUDE)]
    headers, texts, unresolved, deps = _scan_headers(source, roots, str(base) if base else None)
    material = {
        "format": _FORMAT,
        "compiler": _jit.compiler_id(),
        "name": Path(name).name,
        "source": hashlib.sha256(source.encode()).hexdigest(),
        "options": [o for o in options if not o.startswith(("--include-path=", "-I"))],
        "headers": sorted(headers.items()),
        "names": list(name_expressions),
        "system": _system_headers_id() if unresolved else "",
    }
    blob = json.dumps(material, sort_keys=True).encode()
    key = hashlib.sha256(blob).hexdigest()[:40]
    if len(_key_memo) > 1024:
        _key_memo.clear()
    _key_memo[memo_key] = (key, texts, deps)
    return key, texts


def _stat_sig(path: str):
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_mtime_ns, st.st_size)


def _entry_path(key: str) -> Path:
    return cache_dir() / f"v{_FORMAT}" / f"{key}.cubin"


def _read_entry(path: Path) -> Compiled | None:
    try:
        data = path.read_bytes()
    except OSError:
        return None
    n = len(_MAGIC)
    if len(data) < n + _HDR.size or data[:n] != _MAGIC:
        return None
    mlen, clen, digest = _HDR.unpack_from(data, n)
    body = data[n + _HDR.size:]
    if len(body) != mlen + clen or hashlib.blake2b(body, digest_size=16).digest() != digest:
        return None
    meta = json.loads(body[:mlen])
    return Compiled(cubin=body[mlen:], lowered=meta.get("lowered", {}), log=meta.get("log", ""),
                    compiler=meta.get("compiler", ""), key=path.stem, cached=True)


def _write_entry(path: Path, c: Compiled) -> None:
    meta = json.dumps({"lowered": c.lowered, "log": c.log, "compiler": c.compiler}).encode()
    body = meta + c.cubin
    blob = _MAGIC + _HDR.pack(len(meta), len(c.cubin), hashlib.blake2b(body, digest_size=16).digest()) + body
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-", suffix=".part")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(blob)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


class _FileLock:
    """Exclusive ``fcntl.flock`` on ``<entry>.lock`` (no-op where fcntl is missing)."""

    def __init__(self, path: Path):
        self.path = path.with_suffix(".lock")

    def __enter__(self):
        self.fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        if fcntl is not None:
            fcntl.flock(self.fd, fcntl.LOCK_EX)
        return self

    def __exit__(self, *exc):
        if fcntl is not None:
            fcntl.flock(self.fd, fcntl.LOCK_UN)
        os.close(self.fd)


def compile(source: str, name: str = "kernel.cu", *, options=(), arch: str = DEFAULT_ARCH, include_dirs=(),
            name_expressions=(), debug: bool | None = None, cache: bool = True, base_dir=None) -> Compiled:
    """Compile CUDA C++ to a cubin (NVRTC; nvcc with ``TMAKIT_NVCC=1``), through the memory and disk caches.

    ``options`` are extra compiler flags (``-DNAME=1`` ...); ``name_expressions`` are C++ names (e.g. template
    instantiations) whose lowered symbols you need; ``debug`` adds ``-DTMAKIT_DEBUG=1`` (default: ``$TMAKIT_DEBUG``).
    Raises :class:`tmakit.cuda.CompileError` with the log and the offending source lines.
    """
    opts = _jit.default_options(arch, debug) + list(options)
    base = Path(base_dir) if base_dir else None
    key, headers = cache_key(source, name, opts, name_expressions, include_dirs, base)
    hit = _memory.get(key)
    if hit is not None:
        stats["memory_hits"] += 1
        return hit
    use_disk = cache and os.environ.get("TMAKIT_CACHE", "1") not in ("0", "")
    path = _entry_path(key)
    if use_disk:
        got = _read_entry(path)
        if got is None:
            path.parent.mkdir(parents=True, exist_ok=True)
            with _FileLock(path):
                got = _read_entry(path)  # another process may have finished while we waited
                if got is None:
                    got = _compile_now(source, name, opts, name_expressions, include_dirs, base, headers)
                    got.key = key
                    _write_entry(path, got)
                else:
                    stats["disk_hits"] += 1
        else:
            stats["disk_hits"] += 1
    else:
        got = _compile_now(source, name, opts, name_expressions, include_dirs, base, headers)
        got.key = key
    with _lock:
        _memory[key] = got
    return got


def _compile_now(source, name, opts, name_expressions, include_dirs, base, headers) -> Compiled:
    extra = ([base] if base else []) + list(include_dirs)
    full = opts + [f"--include-path={d}" for d in _jit.include_dirs(extra)]
    stats["compiles"] += 1
    fn = _jit.nvcc_compile if _jit.use_nvcc() else _jit.nvrtc_compile
    return fn(source, name, full, name_expressions, headers=headers)


def compile_file(path, **kw) -> Compiled:
    """:func:`compile` a ``.cu`` file; quoted includes also resolve next to it."""
    p = Path(path)
    kw.setdefault("base_dir", p.parent)
    return compile(p.read_text(), p.name, **kw)
