"""Content-keyed disk cache of compiled cubins, and :func:`compile` (the cached JIT entry point).

Key = source + options (include paths dropped) + target + compiler + toolchain wheel versions + the contents of the
headers a static scan of ``#include "..."`` / ``<...>`` finds (no absolute paths). The key is a fast first cut; what
makes a hit sound is each entry's *dependency manifest*: every header the compiler actually opened (NVRTC's time
trace, nvcc's ``-MD``; computed includes, ``-I`` / ``--pre-include`` options included) with its sha256. A lookup
re-hashes them (memoised on mtime and size) and recompiles on any difference, or when a file now exists that would
shadow one of them on the include path. Entries are written to a temp file and ``os.replace``-d into place under an
``fcntl`` lock, so concurrent processes neither corrupt nor duplicate them; files and directories get the usual
``0o666`` / ``0o777`` modes less the umask. ``TMAKIT_CACHE_DIR`` (default ``~/.cache/tmakit``) moves the cache,
``TMAKIT_CACHE=0`` turns the disk cache off; a cache that cannot be used gives one :class:`CacheWarning` and
kernels are compiled without it.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import re
import struct
import threading
import uuid
import warnings
from pathlib import Path

from . import nvrtc as _jit
from .errors import CacheWarning
from .nvrtc import DEFAULT_ARCH, PACKAGE_INCLUDE, Compiled

try:
    import fcntl
except ImportError:  # pragma: no cover - non-POSIX
    fcntl = None

__all__ = ["CacheWarning", "cache_dir", "cache_key", "compile", "compile_file", "clear_memory_cache", "stats"]

_FORMAT = 2
_MAGIC = b"TMAKITCUBIN\x02"
_HDR = struct.Struct("<QQ16s")  # meta length, cubin length, blake2b-128 of meta + cubin
_INCLUDE = re.compile(r'^[ \t]*#[ \t]*include[ \t]*[<"]([^">]+)[">]', re.M)
_INCLUDE_OPTS = ("--include-path=", "-I")
_PRE_INCLUDE_OPTS = ("--pre-include=", "-include=")

stats = {"compiles": 0, "disk_hits": 0, "memory_hits": 0, "stale": 0}
_memory: dict[str, Compiled] = {}
_header_memo: dict[str, tuple] = {}
_key_memo: dict[tuple, tuple] = {}
_warned: set[str] = set()
_lock = threading.Lock()


def cache_dir() -> Path | None:
    """The cache directory: ``$TMAKIT_CACHE_DIR``, ``$XDG_CACHE_HOME/tmakit`` or ``~/.cache/tmakit``; ``None`` when
    there is no home directory to put it in (the disk cache is then off)."""
    d = os.environ.get("TMAKIT_CACHE_DIR")
    if d:
        return Path(d)
    base = os.environ.get("XDG_CACHE_HOME")
    if not base:
        try:
            home = os.path.expanduser("~")
        except (RuntimeError, KeyError):  # pragma: no cover - no HOME and no passwd entry
            return None
        if home.startswith("~") or not os.path.isabs(home):  # expanduser gives up and returns "~" unchanged
            return None
        base = os.path.join(home, ".cache")
    return Path(base) / "tmakit"


def clear_memory_cache() -> None:
    """Forget in-process entries and key memos (the disk cache stays)."""
    _memory.clear()
    _key_memo.clear()


def _warn_unusable(where, err: BaseException | str) -> None:
    """One :class:`CacheWarning` per cache directory and process."""
    where = str(where)
    if where in _warned:
        return
    _warned.add(where)
    why = err if isinstance(err, str) else f"{type(err).__name__}: {err}"
    warnings.warn(f"tmakit's kernel cache {where} cannot be used ({why}); compiling without the disk cache. "
                  "Fix: set TMAKIT_CACHE_DIR to a writable directory (or TMAKIT_CACHE=0 to turn the disk cache off)",
                  CacheWarning, stacklevel=4)


# ------------------------------------------------------------------------------------------------ hashing files
def _stat_sig(path: str):
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_mtime_ns, st.st_size, st.st_ino)


def _header(path: str) -> tuple[str, str, tuple[str, ...], tuple]:
    """(sha256, text, includes, stat signature) of a header, memoised on the stat signature."""
    sig = _stat_sig(path)
    m = _header_memo.get(path)
    if m and m[3] == sig:
        return m
    with open(path, "rb") as f:
        data = f.read()
    text = data.decode("utf-8", errors="replace")
    m = (hashlib.sha256(data).hexdigest(), text, tuple(_INCLUDE.findall(text)), sig)
    _header_memo[path] = m
    return m


def _file_sha(path: str) -> str | None:
    try:
        return _header(path)[0]
    except OSError:
        return None


def _scan_headers(includes, roots: list[str], base: str | None):
    """Headers a static scan reaches from ``includes`` under ``roots``.

    Returns ({name: sha}, {name: text}, any include unresolved, [(path, stat signature)] to revalidate a memo).
    """
    found: dict[str, str] = {}
    texts: dict[str, str] = {}
    deps: list[tuple[str, tuple]] = []
    unresolved = False
    todo = [(tuple(includes), base)]
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


@functools.lru_cache(maxsize=None)
def _toolchain_id() -> str:
    """Versions of the compiler and CUDA header wheels (headers under their dirs are not hashed one by one)."""
    ids = []
    try:
        from importlib.metadata import PackageNotFoundError, version

        for dist in ("nvidia-cuda-nvrtc", "nvidia-cuda-runtime", "nvidia-cuda-cccl"):
            for suffix in ("", "-cu13", "-cu12"):
                try:
                    ids.append(f"{dist}{suffix}-{version(dist + suffix)}")
                except PackageNotFoundError:
                    continue
    except ImportError:  # pragma: no cover
        pass
    return "|".join(ids) + "|" + "|".join(_jit._wheel_include_dirs())  # CUDA_HOME headers: their path


def _split_options(options) -> tuple[list[str], list[str], list[str]]:
    """(options for the key, include dirs named in them, pre-included headers named in them)."""
    keyed, dirs, pre = [], [], []
    for o in options:
        if o.startswith(_INCLUDE_OPTS):
            dirs.append(o.split("=", 1)[1] if o.startswith("--") else o[2:])
            continue
        if o.startswith(_PRE_INCLUDE_OPTS):
            pre.append(o.split("=", 1)[1])
        keyed.append(o)
    return keyed, dirs, pre


def cache_key(source: str, name: str, options: list[str], name_expressions=(), include_dirs=(),
              base: Path | None = None) -> tuple[str, dict[str, str]]:
    """(hex key, {header name: text}) for a compile; the texts feed error messages.

    Memoised per process on the arguments; the memo is revalidated by stat-ing the headers it read.
    """
    memo_key = (source, name, tuple(options), tuple(name_expressions), tuple(map(str, include_dirs)), str(base))
    m = _key_memo.get(memo_key)
    if m is not None and all(_stat_sig(p) == sig for p, sig in m[2]):
        return m[0], m[1]
    keyed, opt_dirs, pre = _split_options(options)
    roots = [str(d) for d in include_dirs] + opt_dirs + [str(PACKAGE_INCLUDE)]
    headers, texts, _, deps = _scan_headers(pre + _INCLUDE.findall(source), roots, str(base) if base else None)
    material = {
        "format": _FORMAT,
        "compiler": _jit.compiler_id(),
        "toolchain": _toolchain_id(),
        "name": Path(name).name,
        "source": hashlib.sha256(source.encode()).hexdigest(),
        "options": keyed,
        "headers": sorted(headers.items()),
        "names": list(name_expressions),
    }
    blob = json.dumps(material, sort_keys=True).encode()
    key = hashlib.sha256(blob).hexdigest()[:40]
    if len(_key_memo) > 1024:
        _key_memo.clear()
    _key_memo[memo_key] = (key, texts, deps)
    return key, texts


# ------------------------------------------------------------------------------------------------ manifests
def _search_roots(options, include_dirs, base) -> list[str]:
    """The include search path in the compiler's order: ``-I`` options, then what :func:`_compile_now` adds."""
    extra = _split_options(options)[1] + ([str(base)] if base else []) + [str(d) for d in include_dirs]
    return [os.path.abspath(d) for d in _jit.include_dirs(extra)]


_PKG = "<tmakit>/"  # the package's include dir, wherever this install put it (venvs may share one cache)


def _stored(path: str) -> str:
    pkg = str(PACKAGE_INCLUDE) + os.sep
    return _PKG + path[len(pkg):] if path.startswith(pkg) else path


def _resolved(path: str) -> str:
    return os.path.join(str(PACKAGE_INCLUDE), path[len(_PKG):]) if path.startswith(_PKG) else path


def _manifest(c: Compiled, roots: list[str]) -> None:
    """Fill ``c.deps`` (header -> sha256) and ``c.absent`` (paths that would shadow one) from ``c.headers_read``.

    Headers under the CUDA wheels' dirs are left out: the key carries those wheels' versions.
    """
    system = tuple(os.path.abspath(d) + os.sep for d in _jit._wheel_include_dirs())
    deps, absent = {}, []
    for p in c.headers_read or ():
        if p.startswith(system):
            continue
        sha = _file_sha(p)
        if sha is None:
            continue
        deps[_stored(p)] = sha
        for i, r in enumerate(roots):
            if p.startswith(r + os.sep):
                rel = p[len(r) + 1:]
                absent += [q for q in (os.path.join(e, rel) for e in roots[:i]) if not os.path.exists(q)]
                break
    c.deps, c.absent = deps, tuple(dict.fromkeys(absent))


def _fresh(c: Compiled) -> bool:
    """Every header the compile read still has its content, and nothing new shadows one."""
    if any(_file_sha(_resolved(p)) != sha for p, sha in c.deps.items()) or any(os.path.exists(p) for p in c.absent):
        stats["stale"] += 1
        return False
    return True


# ------------------------------------------------------------------------------------------------ entries
def _entry_path(key: str) -> Path | None:
    d = cache_dir()
    return None if d is None else d / f"v{_FORMAT}" / f"{key}.cubin"


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
    try:
        meta = json.loads(body[:mlen])
    except ValueError:
        return None
    return Compiled(cubin=body[mlen:], lowered=meta.get("lowered", {}), log=meta.get("log", ""),
                    compiler=meta.get("compiler", ""), key=path.stem, cached=True,
                    deps=dict(meta.get("deps", {})), absent=tuple(meta.get("absent", ())))


def _write_entry(path: Path, c: Compiled) -> None:
    """Write ``path`` atomically. The temp file is created with mode 0o666 less the umask, like any file the user
    writes (``tempfile.mkstemp`` would make it 0o600 and unreadable to the group sharing the cache)."""
    meta = json.dumps({"lowered": c.lowered, "log": c.log, "compiler": c.compiler, "deps": c.deps,
                       "absent": list(c.absent)}).encode()
    body = meta + c.cubin
    blob = _MAGIC + _HDR.pack(len(meta), len(c.cubin), hashlib.blake2b(body, digest_size=16).digest()) + body
    tmp = path.parent / f".tmp-{os.getpid()}-{uuid.uuid4().hex}.part"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
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
    """Exclusive ``fcntl.flock`` on ``<entry>.lock`` (no-op where fcntl is missing). Opening it creates the entry's
    directory; either may raise ``OSError`` (the caller then compiles without the cache)."""

    def __init__(self, path: Path):
        self.path = path.with_suffix(".lock")
        self.path.parent.mkdir(parents=True, exist_ok=True)  # 0o777 less the umask
        try:
            self.fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o666)
        except PermissionError:  # another user's lock file: flock works on a read-only descriptor too
            self.fd = os.open(self.path, os.O_RDONLY)

    def __enter__(self):
        if fcntl is not None:
            fcntl.flock(self.fd, fcntl.LOCK_EX)
        return self

    def __exit__(self, *exc):
        if fcntl is not None:
            fcntl.flock(self.fd, fcntl.LOCK_UN)
        os.close(self.fd)


def _read_fresh(path: Path) -> Compiled | None:
    got = _read_entry(path)
    if got is not None and _fresh(got):
        stats["disk_hits"] += 1
        return got
    return None


def _through_disk(key: str, build) -> Compiled:
    """The entry for ``key`` if it is on disk and fresh, else ``build()`` written there; never raises for a cache
    that cannot be used (warns once and builds)."""
    path = _entry_path(key)
    if path is None:
        _warn_unusable("(no home directory)", "neither TMAKIT_CACHE_DIR, XDG_CACHE_HOME nor HOME locates it")
        return build()
    got = _read_fresh(path)
    if got is not None:
        return got
    try:
        lock = _FileLock(path)
    except OSError as e:
        _warn_unusable(path.parent.parent, e)
        return build()
    with lock:
        got = _read_fresh(path)  # another process may have finished while we waited
        if got is not None:
            return got
        got = build()
        if got.headers_read is None:
            _warn_unusable(path.parent.parent, "the compiler did not report which headers it read")
            return got
        try:
            _write_entry(path, got)
        except OSError as e:
            _warn_unusable(path.parent.parent, e)
    return got


def compile(source: str, name: str = "kernel.cu", *, options=(), arch: str = DEFAULT_ARCH, include_dirs=(),
            name_expressions=(), debug: bool | None = None, cache: bool = True, base_dir=None) -> Compiled:
    """Compile CUDA C++ to a cubin (NVRTC; nvcc with ``TMAKIT_NVCC=1``), through the memory and disk caches.

    ``options`` are extra compiler flags, a list (``["-DNAME=1"]``); ``name_expressions`` are C++ names (e.g.
    template instantiations) whose lowered symbols you need; ``debug`` adds ``-DTMAKIT_DEBUG=1`` (default:
    ``$TMAKIT_DEBUG``); ``cache=False`` compiles afresh, reading and writing neither cache. Raises
    :class:`tmakit.cuda.CompileInputError` for arguments NVRTC would misread and :class:`tmakit.cuda.CompileError`
    with the log and the offending source lines.
    """
    options, include_dirs, name_expressions = _jit.check_inputs(source, name, options, include_dirs,
                                                                name_expressions)
    opts = _jit.default_options(arch, debug) + options
    base = Path(base_dir) if base_dir else None
    key, headers = cache_key(source, name, opts, name_expressions, include_dirs, base)
    roots = _search_roots(opts, include_dirs, base)

    def build() -> Compiled:
        c = _compile_now(source, name, opts, name_expressions, include_dirs, base, headers)
        c.key = key
        _manifest(c, roots)
        return c

    if not cache:
        return build()
    hit = _memory.get(key)
    if hit is not None and _fresh(hit):
        stats["memory_hits"] += 1
        return hit
    use_disk = os.environ.get("TMAKIT_CACHE", "1") not in ("0", "")
    got = _through_disk(key, build) if use_disk else build()
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
