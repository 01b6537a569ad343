"""The package side of a build: write the files atomically, compile the binding (:mod:`.compile`),
import it.

Output is written to a temporary folder beside the target and moved into place only when
complete, so a failed or interrupted build never leaves a half-written package and never
clobbers a good one.

Concurrent builds into one output folder OUT:

- each build holds an ``flock`` on its own lock file ``OUT/.NAME.lock-TOKEN`` for as long as its
  ``.NAME.tmp-TOKEN`` (and, where the system cannot swap two folders, ``.NAME.old-TOKEN``)
  exist. The kernel releases the lock when the process ends, however it ends and in whatever
  PID namespace it runs, so a later build removes another's folders only when their lock is
  free — or, without a lock file (a filesystem without locks), when they are older than
  :data:`STALE_AGE`;
- the final step — is OUT/NAME still what it was when the build started? then move the new
  package in — runs under an ``flock`` on OUT itself, so two builds' final steps never
  interleave; the move never replaces a package without ``--force`` (``renameat2`` with
  RENAME_NOREPLACE) and, with it, swaps the two folders in one step (RENAME_EXCHANGE). The
  build that finds OUT/NAME changed since it started (another build got there first) stops
  with a one-line error and leaves that package in place.
"""
from __future__ import annotations

import contextlib
import ctypes
import errno
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

from ..errors import BuildError

try:
    import fcntl
except ImportError:                             # no flock here: stale folders go by age alone
    fcntl = None

#: a temporary folder without a lock file is another build's only when younger than this (s)
STALE_AGE = 24 * 3600
_KINDS = ("tmp", "old", "lock", "new")           # .NAME.<kind>-TOKEN, see the module docstring


# ------------------------------------------------------------------------------ renames and locks

def _renameat2_function():
    try:
        function = ctypes.CDLL(None, use_errno=True).renameat2
    except (AttributeError, OSError):
        return None
    function.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
    return function


_RENAMEAT2 = _renameat2_function()            # Linux, glibc >= 2.28; None elsewhere
_AT_FDCWD, _RENAME_NOREPLACE, _RENAME_EXCHANGE = -100, 1, 2


def _renameat2(src: Path, dst: Path, flags: int) -> bool:
    """rename(2) with ``flags``; False when this system or filesystem does not have it."""
    if _RENAMEAT2 is None:
        return False
    if _RENAMEAT2(_AT_FDCWD, os.fsencode(src), _AT_FDCWD, os.fsencode(dst), flags) == 0:
        return True
    code = ctypes.get_errno()
    if code in (errno.EINVAL, errno.ENOSYS, errno.ENOTSUP):
        return False
    raise OSError(code, os.strerror(code), str(dst))


def _move_new(src: Path, dst: Path) -> None:
    """Move ``src`` to ``dst``, which must not exist (a folder there, even empty, is kept)."""
    if not _renameat2(src, dst, _RENAME_NOREPLACE):
        if os.path.lexists(dst):
            raise FileExistsError(errno.EEXIST, os.strerror(errno.EEXIST), str(dst))
        os.rename(src, dst)


def _remove(path: Path) -> None:
    """Remove a folder, a file or a symlink (never what a symlink points to); quietly."""
    if path.is_symlink() or (os.path.lexists(path) and not path.is_dir()):
        with contextlib.suppress(OSError):
            path.unlink()
    else:
        shutil.rmtree(path, ignore_errors=True)


def _try_lock(fd: int, blocking: bool = False) -> bool | None:
    """flock ``fd``: True when locked, False when another process holds it, None when this
    filesystem has no locks."""
    if fcntl is None:
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | (0 if blocking else fcntl.LOCK_NB))
        return True
    except BlockingIOError:
        return False
    except OSError:
        return None


@contextlib.contextmanager
def _locked(folder: Path):
    """Hold an flock on ``folder`` itself (no file left behind) while the body runs."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        fd = None
    try:
        if fd is not None:
            _try_lock(fd, blocking=True)
        yield
    finally:
        if fd is not None:
            os.close(fd)


def _identity(path: Path):
    """What stands at ``path`` (device and inode; a symlink itself, not its target), or None."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return None
    except OSError as exc:
        if exc.errno == errno.ENOTDIR:
            return None
        raise BuildError(f"{path}: {exc.strerror or exc}") from exc
    return (st.st_dev, st.st_ino)


def _age(paths) -> float:
    newest = 0.0
    for p in paths:
        with contextlib.suppress(OSError):
            newest = max(newest, os.lstat(p).st_mtime)
    return time.time() - newest


def _remove_stale(out_dir: Path, name: str) -> None:
    """Remove the temporary folders that earlier builds of ``name`` left (a SIGKILLed build
    cannot clean up after itself): those whose lock file is free, and those without a lock file
    that are older than STALE_AGE. A previous package that a killed build had moved aside is
    put back first."""
    prefix = f".{name}."
    found: dict[str, dict[str, Path]] = {}
    for p in out_dir.glob(f".{name}.*-*"):
        kind, _, token = p.name[len(prefix):].partition("-")
        if kind in _KINDS and token:
            found.setdefault(token, {})[kind] = p
    for token, parts in found.items():
        fd, lock = None, parts.get("lock")
        try:
            if lock is not None:
                try:
                    fd = os.open(lock, os.O_RDONLY)
                except OSError:
                    continue                            # another user's build: not ours to judge
                held = _try_lock(fd)
                if held is False:
                    continue                            # a live build, wherever it runs
                if held is None and _age(parts.values()) < STALE_AGE:
                    continue
            elif _age(parts.values()) < STALE_AGE:
                continue                                # being set up, or a build without locks
            old = parts.get("old")
            if old is not None and (old / name).is_dir() and _identity(out_dir / name) is None:
                with contextlib.suppress(OSError):
                    _move_new(old / name, out_dir / name)   # killed between its two renames: put it back
            for kind in ("tmp", "old", "new", "lock"):
                if kind in parts:
                    _remove(parts[kind])
        finally:
            if fd is not None:
                os.close(fd)


def _claim(out_dir: Path, name: str) -> tuple[int, str]:
    """A new lock file ``.NAME.lock-TOKEN``, locked before it appears under that name (so no
    other build ever sees it free while this one lives); (its descriptor, TOKEN)."""
    fd, path = tempfile.mkstemp(prefix=f".{name}.new-", dir=out_dir)
    try:
        _try_lock(fd, blocking=True)
        token = Path(path).name[len(f".{name}.new-"):]
        os.rename(path, out_dir / f".{name}.lock-{token}")
    except BaseException:
        os.close(fd)
        with contextlib.suppress(OSError):
            os.unlink(path)
        raise
    return fd, token


# ------------------------------------------------------------------------------ the package

def prepare_output(out_dir, name: str, force: bool = False):
    """Check that ``out_dir/name`` can be written (before a build's symbolic work, so a name
    clash is reported at once) and remove stale temporary folders. Returns what stands at
    ``out_dir/name`` now, which :func:`write_package` replaces only if it is still there."""
    out_dir = Path(out_dir)
    target = out_dir / name
    kind = _identity(out_dir)                       # also reports a path the system refuses (too long)
    if kind is None or not out_dir.is_dir():
        if kind is not None:
            raise BuildError(f"{out_dir}: output folder is not a folder")
        if _identity(out_dir.parent) is None or not out_dir.parent.is_dir():
            raise BuildError(f"{out_dir}: output folder does not exist, nor does its parent {out_dir.parent}")
        if not os.access(out_dir.parent, os.W_OK):
            raise BuildError(f"{out_dir}: cannot create the output folder: {out_dir.parent} is not writable")
        return None
    if not os.access(out_dir, os.W_OK):
        raise BuildError(f"{out_dir}: output folder is not writable")
    _remove_stale(out_dir, name)                # may put back a package a killed build moved aside
    current = _identity(target)
    if current is not None and not force:
        raise BuildError(f"{target}: already exists; pass --force to replace it")
    return current


_UNCHECKED = object()


def write_package(files: dict, out_dir: Path, name: str, force: bool = False, compile_hook=None,
                  expected=_UNCHECKED) -> Path:
    """Write ``files`` into ``out_dir/name`` atomically: into a temporary folder beside it, then
    moved into place. Whatever interrupts it (an error, Ctrl-C, SIGTERM, SIGHUP), ``out_dir/name``
    is afterwards either the previous package or the complete new one, and no temporary is left.
    ``expected`` is what :func:`prepare_output` found at ``out_dir/name`` when the build started
    (checked here when not given): anything else there now is another build's, kept."""
    out_dir = Path(out_dir)
    target = out_dir / name
    if expected is _UNCHECKED:
        expected = prepare_output(out_dir, name, force)
    try:
        out_dir.mkdir(exist_ok=True)                # one level, like `symgen build --out generated`
    except OSError as exc:
        raise BuildError(f"{out_dir}: cannot create the output folder: {exc.strerror or exc}") from exc
    fd = tmp = old = None
    try:
        fd, token = _claim(out_dir, name)
        tmp = out_dir / f".{name}.tmp-{token}"
        tmp.mkdir()                                 # mode 0777 minus the umask, like any folder the user makes
        for fname, text in sorted(files.items()):
            (tmp / fname).write_text(text, encoding="utf-8")
        if compile_hook is not None:
            compile_hook(tmp)
        with _locked(out_dir):
            now = _identity(target)
            if now != expected:
                if expected is None:
                    raise BuildError(f"{target}: already exists (another build wrote it while this one ran); "
                                     f"kept it; pass --force to replace it")
                raise BuildError(f"{target}: another build replaced it while this one ran; kept that one "
                                 f"(run again to replace it)")
            if now is None:
                _move_new(tmp, target)
            elif not _renameat2(tmp, target, _RENAME_EXCHANGE):
                old = out_dir / f".{name}.old-{token}"
                old.mkdir()
                os.replace(target, old / name)
                os.rename(tmp, target)
                _remove(old)
                old = None
            # after the swap, tmp holds the previous package (removed below), or nothing
    except BaseException as exc:
        if old is not None and _identity(target) is None and os.path.lexists(old / name):
            os.replace(old / name, target)              # put the previous package back
        if isinstance(exc, FileExistsError) and exc.filename == str(target):   # a build that takes no lock
            raise BuildError(f"{target}: already exists (another build wrote it while this one ran); kept it") from exc
        if isinstance(exc, OSError):
            raise BuildError(f"{out_dir}: cannot write the package: {exc.strerror or exc}") from exc
        raise
    finally:
        for path in (tmp, old):
            if path is not None:
                _remove(path)
        if fd is not None:
            with contextlib.suppress(OSError):
                os.unlink(out_dir / f".{name}.lock-{token}")
            os.close(fd)
    return target


def import_package(path):
    """Import a generated package from its folder (for tests and ``symgen verify``). Its compiled
    binding has a module name of its own per C source (the manifest's ``c_extension``), so a
    package rebuilt in this process loads its new binding, never the one already loaded."""
    import importlib.util

    path = Path(path).resolve()
    for key in [k for k in sys.modules if k == path.name or k.startswith(path.name + ".")]:
        del sys.modules[key]                    # a package of the same name imported before
    spec = importlib.util.spec_from_file_location(path.name, path / "__init__.py",
                                                  submodule_search_locations=[str(path)])
    module = importlib.util.module_from_spec(spec)
    sys.modules[path.name] = module
    spec.loader.exec_module(module)
    return module


def jax_module_of(folder, own: bool = False):
    """The JAX module of another package folder (``NAME_jax.py``, which imports jax only), loaded
    under a name of its own so that it sits beside the package under test in one process; ``own``:
    without its XLA library (``_OWN_CODE`` set on the module before it runs), so its own jax code
    runs on a CPU too."""
    import importlib.util

    folder = Path(folder).resolve()
    spec = importlib.util.spec_from_file_location(f"_compare_{folder.name}_jax{'_own' if own else ''}",
                                                  folder / f"{folder.name}_jax.py")
    module = importlib.util.module_from_spec(spec)
    module._OWN_CODE = own
    spec.loader.exec_module(module)
    return module
