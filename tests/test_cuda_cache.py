"""The JIT disk cache: content keys without absolute paths, concurrent processes, corruption, warm lookups."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

pytest.importorskip("cuda.bindings.nvrtc")

from tmakit.cuda import cache  # noqa: E402
from tmakit.cuda.nvrtc import PACKAGE_INCLUDE, default_options  # noqa: E402

SRC = '#include <tmakit/mbarrier.cuh>\nextern "C" __global__ void k(unsigned* p) { p[0] = tmakit::smem_u32(p); }\n'

WORKER = r"""
import json, sys, time
from tmakit.cuda import cache
src, start = sys.argv[1], float(sys.argv[2])
while time.time() < start:
    time.sleep(0.001)
c = cache.compile(src, "race.cu")
print(json.dumps({"compiles": cache.stats["compiles"], "disk_hits": cache.stats["disk_hits"],
                  "key": c.key, "size": len(c.cubin), "head": c.cubin[:4].hex()}))
"""


@pytest.fixture()
def cache_dir(tmp_path, monkeypatch):
    d = tmp_path / "cache"
    monkeypatch.setenv("TMAKIT_CACHE_DIR", str(d))
    monkeypatch.delenv("TMAKIT_CACHE", raising=False)
    cache.clear_memory_cache()
    yield d
    cache.clear_memory_cache()


def _entries(d):
    return sorted(p for p in d.rglob("*.cubin"))


def test_cache_dir_env(cache_dir):
    assert cache.cache_dir() == cache_dir
    c = cache.compile(SRC, "k.cu")
    assert _entries(cache_dir) == [cache_dir / f"v{cache._FORMAT}" / f"{c.key}.cubin"]


def test_two_processes_one_entry(cache_dir):
    src = SRC + f"// unique {uuid.uuid4()}\n"
    start = time.time() + 1.0
    env = dict(os.environ, TMAKIT_CACHE_DIR=str(cache_dir))
    procs = [subprocess.Popen([sys.executable, "-c", WORKER, src, str(start)], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True, env=env) for _ in range(2)]
    outs = []
    for p in procs:
        out, err = p.communicate(timeout=120)
        assert p.returncode == 0, err
        outs.append(json.loads(out.strip().splitlines()[-1]))
    assert outs[0]["key"] == outs[1]["key"]
    assert sum(o["compiles"] for o in outs) == 1  # one compiled, the other waited on the lock and read it
    assert sum(o["disk_hits"] for o in outs) == 1
    assert outs[0]["size"] == outs[1]["size"] and outs[0]["head"] == "7f454c46"
    entries = _entries(cache_dir)
    assert len(entries) == 1
    assert not list(cache_dir.rglob("*.part"))  # no temp files left behind
    assert cache._read_entry(entries[0]) is not None  # valid (checksummed) entry


def test_corrupt_entry_is_recompiled(cache_dir):
    c = cache.compile(SRC, "k.cu")
    path = _entries(cache_dir)[0]
    data = bytearray(path.read_bytes())
    data[-10] ^= 0xFF
    path.write_bytes(bytes(data))
    assert cache._read_entry(path) is None
    cache.clear_memory_cache()
    before = cache.stats["compiles"]
    c2 = cache.compile(SRC, "k.cu")
    assert cache.stats["compiles"] == before + 1
    assert c2.cubin == c.cubin and cache._read_entry(path) is not None


def test_key_has_no_absolute_paths(tmp_path):
    a, b = tmp_path / "a" / "include", tmp_path / "elsewhere" / "b"
    shutil.copytree(PACKAGE_INCLUDE, a)
    shutil.copytree(PACKAGE_INCLUDE, b)
    opts = default_options()
    k1, _ = cache.cache_key(SRC, "k.cu", opts + [f"--include-path={a}"], include_dirs=[a])
    k2, _ = cache.cache_key(SRC, "k.cu", opts + [f"--include-path={b}"], include_dirs=[b])
    assert k1 == k2
    # ... but the contents of included headers are part of it
    hdr = b / "tmakit" / "types.cuh"
    hdr.write_text(hdr.read_text() + "\n// changed\n")
    k3, _ = cache.cache_key(SRC, "k.cu", opts, include_dirs=[b])
    assert k3 != k1


def test_key_depends_on_options_and_source():
    opts = default_options()
    k0, _ = cache.cache_key(SRC, "k.cu", opts)
    assert cache.cache_key(SRC, "k.cu", opts + ["-DX=1"])[0] != k0
    assert cache.cache_key(SRC + "\n", "k.cu", opts)[0] != k0
    assert cache.cache_key(SRC, "k.cu", default_options(debug=True))[0] != k0
    assert cache.cache_key(SRC, "k.cu", default_options("sm_100a"))[0] != k0


def test_warm_lookup_is_fast(cache_dir):
    seeds = (PACKAGE_INCLUDE.parent / "kernels" / "seeds.cu")
    t0 = time.perf_counter()
    cache.compile_file(seeds)
    cold = time.perf_counter() - t0
    cache.clear_memory_cache()
    times = []
    for _ in range(20):
        cache.clear_memory_cache()
        t0 = time.perf_counter()
        c = cache.compile_file(seeds)
        times.append(time.perf_counter() - t0)
        assert c.cached
    warm = sorted(times)[len(times) // 2]
    assert cold < 20.0  # generous for CI; docs/RUNTIME.md records the measured numbers
    assert warm < 0.02, warm


# ------------------------------------------------------------------------------------------------ stale headers
DEP_WORKER = r"""
import hashlib, json, sys
from tmakit.cuda import cache
out = []
for job in json.loads(sys.argv[1]):
    c = cache.compile(job["src"], "dep.cu", options=job["options"], include_dirs=job["include_dirs"])
    out.append(hashlib.sha256(c.cubin).hexdigest())
print(json.dumps({"shas": out, "compiles": cache.stats["compiles"], "disk_hits": cache.stats["disk_hits"]}))
"""

USES_VAL = 'extern "C" __global__ void k(int* p) { p[0] = VAL; }\n'


def _dep_jobs(tmp_path):
    """One compile per way a header reaches NVRTC; each job's header defines VAL."""
    jobs = []
    for i, (src, how) in enumerate([
        ('#include "v.cuh"\n', "include_dirs"),                      # the one way the old key covered
        ('#include "v.cuh"\n', "-I"),
        ('#include <v.cuh>\n', "--include-path="),
        ('#define HDR "v.cuh"\n#include HDR\n', "include_dirs"),     # a computed include
        ("", "--pre-include="),
    ]):
        inc = tmp_path / f"inc{i}"
        inc.mkdir()
        (inc / "v.cuh").write_text("#pragma once\n#define VAL 3\n")
        opts = {"include_dirs": [], "-I": [f"-I{inc}"], "--include-path=": [f"--include-path={inc}"],
                "--pre-include=": [f"-I{inc}", "--pre-include=v.cuh"]}[how]
        jobs.append({"src": src + f"// job {i}\n" + USES_VAL, "options": opts,
                     "include_dirs": [str(inc)] if how == "include_dirs" else [], "header": str(inc / "v.cuh")})
    return jobs


def _run_worker(jobs, cache_dir):
    env = dict(os.environ, TMAKIT_CACHE_DIR=str(cache_dir))
    r = subprocess.run([sys.executable, "-c", DEP_WORKER, json.dumps(jobs)], capture_output=True, text=True,
                       env=env, timeout=300)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout.strip().splitlines()[-1])


def test_header_edit_between_processes_recompiles(cache_dir, tmp_path):
    """Edit a header between two processes: the second compiles again and gets the new cubin, however the header
    was reached (include_dirs, -I, --include-path=, a computed #include, --pre-include)."""
    jobs = _dep_jobs(tmp_path)
    first = _run_worker(jobs, cache_dir)
    assert first["compiles"] == len(jobs)
    again = _run_worker(jobs, cache_dir)
    assert again["compiles"] == 0 and again["shas"] == first["shas"]  # unchanged headers: all disk hits
    for job in jobs:
        Path(job["header"]).write_text("#pragma once\n#define VAL 123456\n")
    second = _run_worker(jobs, cache_dir)
    assert second["compiles"] == len(jobs)
    for job, old, new in zip(jobs, first["shas"], second["shas"]):
        fresh = cache.compile(job["src"], "dep.cu", options=job["options"], include_dirs=job["include_dirs"],
                              cache=False)
        assert new != old and new == hashlib.sha256(fresh.cubin).hexdigest(), job


def test_header_edit_in_process_recompiles(cache_dir, tmp_path):
    inc = tmp_path / "inc"
    inc.mkdir()
    hdr = inc / "v.cuh"
    hdr.write_text("#define VAL 3\n")
    src = '#define HDR "v.cuh"\n#include HDR\n' + USES_VAL
    a = cache.compile(src, "dep.cu", include_dirs=[inc])
    assert cache.compile(src, "dep.cu", include_dirs=[inc]) is a
    hdr.write_text("#define VAL 1234567\n")  # a different size: the memo's stat signature changes
    b = cache.compile(src, "dep.cu", include_dirs=[inc])
    assert b.cubin != a.cubin and not b.cached


def test_a_new_header_that_shadows_recompiles(cache_dir, tmp_path):
    """A header created earlier on the include path than the one compiled against makes the entry stale."""
    first, second = tmp_path / "first", tmp_path / "second"
    first.mkdir()
    second.mkdir()
    (second / "v.cuh").write_text("#define VAL 3\n")
    src = '#include "v.cuh"\n' + USES_VAL
    a = cache.compile(src, "dep.cu", include_dirs=[first, second])
    (first / "v.cuh").write_text("#define VAL 77\n")
    b = cache.compile(src, "dep.cu", include_dirs=[first, second])
    assert b.cubin != a.cubin


def test_cache_false_compiles_afresh(cache_dir):
    a = cache.compile(SRC, "k.cu")
    before = cache.stats["compiles"]
    b = cache.compile(SRC, "k.cu", cache=False)
    assert cache.stats["compiles"] == before + 1 and b is not a and not b.cached


def test_entry_records_the_headers_nvrtc_read(cache_dir):
    c = cache.compile(SRC, "k.cu")
    assert "<tmakit>/tmakit/mbarrier.cuh" in c.deps  # package headers: relative to wherever tmakit is installed
    assert cache._read_entry(_entries(cache_dir)[0]).deps == c.deps


# ------------------------------------------------------------------------------------------------ unusable caches
@pytest.fixture()
def fresh_warnings(monkeypatch):
    monkeypatch.setattr(cache, "_warned", set(), raising=False)
    cache.clear_memory_cache()
    yield
    cache.clear_memory_cache()


def _compile_twice_warns_once(recwarn):
    a = cache.compile(SRC + "// one\n", "k.cu")
    b = cache.compile(SRC + "// two\n", "k.cu")
    assert a.cubin[:4] == b.cubin[:4] == b"\x7fELF"
    warned = [w for w in recwarn.list if issubclass(w.category, cache.CacheWarning)]
    assert len(warned) == 1, [str(w.message) for w in recwarn.list]
    assert "TMAKIT_CACHE_DIR" in str(warned[0].message)
    return warned[0]


def test_a_file_where_the_cache_dir_should_be(tmp_path, monkeypatch, fresh_warnings, recwarn):
    (tmp_path / "file").write_text("not a directory")
    monkeypatch.setenv("TMAKIT_CACHE_DIR", str(tmp_path / "file"))
    _compile_twice_warns_once(recwarn)


def test_a_file_where_the_version_dir_should_be(tmp_path, monkeypatch, fresh_warnings, recwarn):
    (tmp_path / "c").mkdir()
    (tmp_path / "c" / f"v{cache._FORMAT}").write_text("")
    monkeypatch.setenv("TMAKIT_CACHE_DIR", str(tmp_path / "c"))
    _compile_twice_warns_once(recwarn)


def test_a_directory_where_the_entry_should_be(cache_dir, fresh_warnings, recwarn):
    c = cache.compile(SRC, "k.cu")
    entry = _entries(cache_dir)[0]
    entry.unlink()
    entry.mkdir()
    cache.clear_memory_cache()
    again = cache.compile(SRC, "k.cu")
    assert again.cubin == c.cubin
    assert [w for w in recwarn.list if issubclass(w.category, cache.CacheWarning)]


def test_unwritable_cache_dir(cache_dir, monkeypatch, fresh_warnings, recwarn):
    """Another user's cache or a read-only one: the lock or the entry cannot be created (simulated: tests may run
    as root, for whom chmod protects nothing)."""
    def refuse(path):
        raise PermissionError(13, "Permission denied", str(path))

    monkeypatch.setattr(cache, "_FileLock", refuse)
    _compile_twice_warns_once(recwarn)


@pytest.mark.skipif(os.name != "posix" or os.geteuid() == 0, reason="root writes through chmod 0o555")
def test_read_only_cache_dir(cache_dir, fresh_warnings, recwarn):
    cache_dir.mkdir()
    cache_dir.chmod(0o555)
    try:
        _compile_twice_warns_once(recwarn)
    finally:
        cache_dir.chmod(0o755)


def test_no_home_directory(tmp_path, monkeypatch, fresh_warnings, recwarn):
    """Without HOME (and no passwd entry) expanduser returns "~" unchanged: nothing may be written to ./~ ."""
    for var in ("TMAKIT_CACHE_DIR", "XDG_CACHE_HOME", "HOME"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setattr(os.path, "expanduser", lambda p: p)
    monkeypatch.chdir(tmp_path)
    assert cache.cache_dir() is None
    _compile_twice_warns_once(recwarn)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.skipif(os.name != "posix", reason="POSIX modes")
@pytest.mark.parametrize("umask", [0o002, 0o022])
def test_entries_follow_the_umask(cache_dir, umask):
    """Entries are group-readable (0o666 / 0o777 less the umask), not mkstemp's private 0o600."""
    old = os.umask(umask)
    try:
        c = cache.compile(SRC + f"// umask {umask}\n", "k.cu")
    finally:
        os.umask(old)
    entry = cache_dir / f"v{cache._FORMAT}" / f"{c.key}.cubin"
    assert entry.stat().st_mode & 0o777 == 0o666 & ~umask
    assert entry.parent.stat().st_mode & 0o777 == 0o777 & ~umask
