"""The build cache: what an identical input gave before, kept on disk by content.

Two kinds of entries, each a file named by the sha256 of everything its content depends on:

- ``sweeps/``: the printed result of one sweep (its Functions' printed context and op counts),
  keyed by symgen's own source files and version, SymPy's, NumPy's and Python's versions, the
  sweep and its quantities, the options a sweep sees (frame, Gamma's method, frames, gravity,
  contacts, parametric, CSE) and the robot's content as the sweep sees it: every field of the
  model, its inertias left out for the sweeps that do not depend on them (``Sweep.inertial``
  false: frame kinematics, the regressors), so a rebuild after an inertia change reruns only the
  sweeps that read the inertias;
- ``objects/``: a compiled object file, keyed by the compile unit's text, the package's headers,
  the compiler's identity (its ``-v`` report: version, target, what ``-march=native`` means on
  this CPU), the flags and the environment variables the compiler reads; each entry also lists
  the system headers the unit included (path, size, modification time), and is used only while
  they are unchanged.

The folder: ``$SYMGEN_BUILD_CACHE`` if set (``off`` or ``0``: no cache), else
``$SYMGEN_CACHE/build``, else ``~/.cache/symgen/build`` (``symgen cache info``, ``symgen cache
clear``). An entry is written to a temporary file beside its place and renamed into it, so builds
that run side by side never read half an entry; each entry carries the sha256 of its bytes, and
one that does not match, or that another user owns, is not used. The folder is kept under
``$SYMGEN_BUILD_CACHE_MAX`` (bytes, or with a K, M or G suffix; default 2G): after a build that
wrote to it, the entries used least recently go first.
"""
from __future__ import annotations

import contextlib
import dataclasses
import enum
import functools
import hashlib
import json
import os
import sys
import tempfile
import time
import types
from pathlib import Path

import numpy as np

MAGIC = b"SYMGEN-CACHE-1 "
KINDS = ("sweeps", "objects")
DEFAULT_MAX = 2 << 30
#: a temporary file older than this (s) is a killed build's, removed by eviction
STALE_TMP = 3600


def folder() -> Path | None:
    """The build cache's folder, or None when it is turned off (``SYMGEN_BUILD_CACHE=off``)."""
    own = os.environ.get("SYMGEN_BUILD_CACHE")
    if own is not None and own.strip().lower() in ("off", "0", "no", "false", "none"):
        return None
    if own:
        return Path(own).expanduser()
    root = os.environ.get("SYMGEN_CACHE")
    return (Path(root).expanduser() if root else Path.home() / ".cache" / "symgen") / "build"


def max_bytes() -> int:
    text = os.environ.get("SYMGEN_BUILD_CACHE_MAX", "").strip().upper()
    if not text:
        return DEFAULT_MAX
    scale = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}.get(text[-1], 1)
    try:
        return int(float(text.rstrip("KMGB") or "0") * scale)
    except ValueError:
        return DEFAULT_MAX


class Cache:
    """The entries under ``root`` (:func:`folder`); ``hits`` and ``misses`` count lookups per kind."""

    def __init__(self, root):
        self.root = Path(root)
        self.hits = {k: 0 for k in KINDS}
        self.misses = {k: 0 for k in KINDS}
        self.wrote = 0

    def _path(self, kind: str, key: str) -> Path:
        return self.root / kind / key[:2] / key

    def get(self, kind: str, key: str) -> tuple[dict, bytes] | None:
        """(meta, payload) of an entry, or None; a hit marks it used now (for eviction)."""
        path = self._path(kind, key)
        try:
            with open(path, "rb") as f:
                if hasattr(os, "getuid") and os.fstat(f.fileno()).st_uid != os.getuid():
                    raise OSError("another user's entry")
                data = f.read()
            head, _, rest = data.partition(b"\n")
            if not head.startswith(MAGIC):
                raise ValueError("not an entry")
            digest, size = head[len(MAGIC):].split(b" ")
            if hashlib.sha256(rest).hexdigest().encode() != digest:
                raise ValueError("damaged entry")
            meta, payload = json.loads(rest[:int(size)]), rest[int(size):]
        except (OSError, ValueError):
            self.misses[kind] += 1
            return None
        with contextlib.suppress(OSError):
            os.utime(path)
        self.hits[kind] += 1
        return meta, payload

    def put(self, kind: str, key: str, payload: bytes, meta: dict | None = None) -> None:
        """Write an entry atomically (a temporary file renamed into place); quietly nothing when
        the folder cannot be written."""
        path = self._path(kind, key)
        text = json.dumps(meta or {}, sort_keys=True).encode()
        rest = text + payload
        data = MAGIC + hashlib.sha256(rest).hexdigest().encode() + b" " + str(len(text)).encode() + b"\n" + rest
        tmp = None
        try:
            path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            fd, tmp = tempfile.mkstemp(prefix=".tmp-", dir=path.parent)
            with os.fdopen(fd, "wb") as f:
                f.write(data)
            os.replace(tmp, path)
            tmp = None
            self.wrote += len(data)
        except OSError:
            pass
        finally:
            if tmp is not None:
                with contextlib.suppress(OSError):
                    os.unlink(tmp)

    def summary(self) -> dict:
        out = {"folder": str(self.root)}
        for kind in KINDS:
            looked = self.hits[kind] + self.misses[kind]
            if looked:
                out[kind] = f"{self.hits[kind]}/{looked} hit"
        return out

    def evict(self, limit: int | None = None) -> int:
        """Remove the entries used least recently until the folder holds at most ``limit``
        bytes (default :func:`max_bytes`), and stale temporary files; the bytes removed."""
        return evict(self.root, max_bytes() if limit is None else limit)


def entries(root) -> list:
    """[(last use, size, path)] of every entry under ``root``; stale temporaries removed."""
    found, now = [], time.time()
    for kind in KINDS:
        base = Path(root) / kind
        if not base.is_dir():
            continue
        for sub in base.iterdir():
            if not sub.is_dir():
                continue
            for entry in os.scandir(sub):
                try:
                    st = entry.stat(follow_symlinks=False)
                except OSError:
                    continue
                if entry.name.startswith(".tmp-"):
                    if now - st.st_mtime > STALE_TMP:
                        with contextlib.suppress(OSError):
                            os.unlink(entry.path)
                    continue
                found.append((st.st_mtime, st.st_size, entry.path))
    return found


def evict(root, limit: int) -> int:
    found = sorted(entries(root))
    total, removed = sum(size for _, size, _ in found), 0
    for _, size, path in found:
        if total <= limit:
            break
        with contextlib.suppress(OSError):
            os.unlink(path)
            total -= size
            removed += size
    return removed


def clear(root) -> tuple[int, int]:
    """Remove every entry under ``root`` (the build cache only); (entries, bytes) removed."""
    count = size = 0
    for _, s, path in entries(root):
        with contextlib.suppress(OSError):
            os.unlink(path)
            count, size = count + 1, size + s
    for kind in KINDS:
        base = Path(root) / kind
        if base.is_dir():
            for sub in base.iterdir():
                with contextlib.suppress(OSError):
                    sub.rmdir()                 # empty ones only (a build may be writing)
    return count, size


# ------------------------------------------------------------------------------------ the keys

class Uncacheable(Exception):
    """An input whose content cannot be read off reliably: that build does not use the cache."""


def digest(obj, skip: tuple = ()) -> str:
    """The sha256 of an object's content, walked field by field (dataclasses, tuples, lists,
    dicts, sets in a sorted order, NumPy arrays by dtype, shape and bytes, floats exactly);
    instances of the classes in ``skip`` count as their class name only. Uncacheable for what
    it cannot read (an object without fields whose repr names its address)."""
    h = hashlib.sha256()
    _walk(obj, h.update, skip, {})
    return h.hexdigest()


def _walk(obj, out, skip, seen) -> None:
    t = type(obj)
    if obj is None or t in (bool, int, str):
        out(f"{t.__name__}:{obj!r};".encode())
        return
    if t is float:
        out(f"f:{obj.hex()};".encode())
        return
    if t is bytes:
        out(b"b:%d:" % len(obj) + obj)
        return
    if isinstance(obj, np.generic):
        out(f"np:{obj.dtype.str}:".encode() + obj.tobytes())
        return
    if id(obj) in seen:                         # a cycle or a shared part: its first place
        out(f"@{seen[id(obj)]};".encode())
        return
    seen[id(obj)] = len(seen)
    out(f"<{t.__module__}.{t.__qualname__}".encode())
    if skip and isinstance(obj, skip):
        pass
    elif isinstance(obj, np.ndarray):
        if obj.dtype == object:
            out(f"O{obj.shape}".encode())
            for x in obj.flat:
                _walk(x, out, skip, seen)
        else:
            out(f"{obj.dtype.str}{obj.shape}".encode() + np.ascontiguousarray(obj).tobytes())
    elif isinstance(obj, enum.Enum):
        out(repr(obj.value).encode())
    elif isinstance(obj, (tuple, list)):
        for x in obj:
            _walk(x, out, skip, seen)
    elif isinstance(obj, dict):
        for k, v in sorted(obj.items(), key=lambda kv: digest(kv[0])):
            _walk(k, out, skip, seen)
            _walk(v, out, skip, seen)
    elif isinstance(obj, (set, frozenset)):
        for d in sorted(digest(x, skip) for x in obj):
            out(d.encode())
    elif isinstance(obj, (types.FunctionType, types.BuiltinFunctionType, type, functools.partial)):
        if isinstance(obj, functools.partial):
            _walk((obj.func, obj.args, obj.keywords), out, skip, seen)
        else:
            out(f"{getattr(obj, '__module__', '')}.{getattr(obj, '__qualname__', '')}".encode())
            cells = getattr(obj, "__closure__", None) or ()
            _walk(tuple(c.cell_contents for c in cells), out, skip, seen)
            _walk(getattr(obj, "__defaults__", None), out, skip, seen)
    elif dataclasses.is_dataclass(obj):
        for f in dataclasses.fields(obj):
            out(f.name.encode())
            _walk(getattr(obj, f.name), out, skip, seen)
        _walk_extra(obj, {f.name for f in dataclasses.fields(obj)}, out, skip, seen)
    elif hasattr(obj, "__dict__") or hasattr(t, "__slots__"):
        _walk_extra(obj, set(), out, skip, seen)
    else:
        text = repr(obj)
        if " at 0x" in text:
            raise Uncacheable(f"{t.__qualname__} has no readable content")
        out(text.encode())
    out(b">")


def _walk_extra(obj, done, out, skip, seen) -> None:
    """The attributes of ``obj`` besides ``done``: its __dict__ (what a cached_property
    computed left out: derived, and there or not by chance) and its slots."""
    t = type(obj)
    names = [n for n in getattr(obj, "__dict__", {}) if n not in done
             and not isinstance(getattr(t, n, None), functools.cached_property)]
    names += [n for k in t.__mro__ for n in getattr(k, "__slots__", ()) if n not in done and n != "__dict__"
              and n != "__weakref__" and hasattr(obj, n)]
    for n in sorted(set(names)):
        out(n.encode())
        _walk(getattr(obj, n), out, skip, seen)


@functools.lru_cache(maxsize=None)
def source_digest() -> str:
    """The sha256 of symgen's own files (its code and templates): the cache is keyed by the code
    that wrote an entry, not only by its version number."""
    import symgen

    from .render import templates_dir

    h = hashlib.sha256()
    roots = [Path(symgen.__file__).resolve().parent, templates_dir().resolve()]
    for root, pattern in zip(roots, ("*.py", "*")):
        for path in sorted(root.rglob(pattern)):
            if path.is_file() and "__pycache__" not in path.parts:
                h.update(str(path.relative_to(root.parent)).encode() + b"\0")
                h.update(hashlib.sha256(path.read_bytes()).digest())
    return h.hexdigest()


def versions() -> str:
    import sympy

    import symgen

    return f"symgen {symgen.__version__} {source_digest()}; sympy {sympy.__version__}; numpy {np.__version__}; " \
           f"python {sys.version.split()[0]}"


def sweep_key(robot, opts, keys) -> str:
    """The key of one sweep's printed result (the module docstring)."""
    from .. import quantities as Q
    from ..model import Inertia

    sweep = Q.SWEEPS[Q.QUANTITIES[keys[0]].sweep]
    skip = () if sweep.inertial else (Inertia,)
    parts = ["sweep", versions(), sweep.name, tuple(keys), digest(opts.sweep), bool(opts.cse), digest(robot, skip)]
    parts += [opts.scalar] if opts.scalar != "double" else []     # (a double sweep keeps its key of before)
    return hashlib.sha256(repr(parts).encode()).hexdigest()


def info_text() -> str:
    """``symgen cache info``: where the build cache is, its entries and their size."""
    root = folder()
    if root is None:
        return "build cache: off (SYMGEN_BUILD_CACHE)"
    found = entries(root)
    size = sum(s for _, s, _ in found)
    return (f"build cache: {root}: {len(found)} entries, {size / 1e6:.1f} MB (at most {max_bytes() / 1e6:.0f} MB, "
            f"SYMGEN_BUILD_CACHE_MAX)")


def clear_text() -> str:
    """``symgen cache clear``: every entry removed, and what that freed."""
    root = folder()
    if root is None:
        return "build cache: off (SYMGEN_BUILD_CACHE); nothing to clear"
    count, size = clear(root)
    return f"build cache: removed {count} entries, {size / 1e6:.1f} MB from {root}"
