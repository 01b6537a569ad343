"""The package side of a build: write the files atomically, compile the binding, import it.

Output is written to a temporary folder beside the target and moved into place only when
complete, so a failed or interrupted build never leaves a half-written package and never
clobbers a good one.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile
from pathlib import Path

from ..errors import BuildError


def compile_extension(folder: Path, name: str, cc: str | None = None, opt: str = "-O2") -> Path:
    """Compile NAME.c and its CPython binding into one extension module inside ``folder``."""
    cc = cc or os.environ.get("CC") or "cc"
    if shutil.which(cc) is None:
        raise BuildError(f"C compiler {cc!r} not found (set CC, or build with --no-compile)")
    ext = f"_{name}_ext"
    target = folder / f"{ext}{sysconfig.get_config_var('EXT_SUFFIX') or '.so'}"
    cmd = [cc, opt, "-fPIC", "-shared", "-std=c99", f"-I{sysconfig.get_paths()['include']}",
           str(folder / f"{name}.c"), str(folder / f"{ext}.c"), "-o", str(target), "-lm"]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        first = (proc.stderr.strip().splitlines() or ["(no output)"])[0]
        raise BuildError(f"{folder / (name + '.c')}: compilation failed: {first}")
    return target


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _remove_stale(out_dir: Path, name: str) -> None:
    """Remove the temporary folders of earlier builds of ``name`` whose process is gone (a
    SIGKILLed build cannot clean up after itself). Their names carry the builder's pid."""
    for p in out_dir.glob(f".{name}.*-*"):
        kind, _, rest = p.name[len(name) + 2:].partition("-")
        pid = rest.split("-")[0]
        if kind in ("tmp", "old") and pid.isdigit() and int(pid) != os.getpid() and not _alive(int(pid)):
            if kind == "old" and (p / name).is_dir() and not (out_dir / name).exists():
                os.replace(p / name, out_dir / name)    # killed between its two renames: put it back
            shutil.rmtree(p, ignore_errors=True)


def write_package(files: dict, out_dir: Path, name: str, force: bool = False, compile_hook=None) -> Path:
    """Write ``files`` into ``out_dir/name`` atomically: into a temporary folder beside it, then
    renamed into place. Whatever interrupts it (an error, Ctrl-C, SIGTERM), ``out_dir/name`` is
    afterwards either the previous package or the complete new one, and no temporary is left."""
    out_dir = Path(out_dir)
    target = out_dir / name
    if not out_dir.is_dir():
        if out_dir.exists() or not out_dir.parent.is_dir():
            what = "is not a folder" if out_dir.exists() else f"does not exist, nor does its parent {out_dir.parent}"
            raise BuildError(f"{out_dir}: output folder {what}")
        try:
            out_dir.mkdir()                       # one level, like `symgen build --out generated`
        except OSError as exc:
            raise BuildError(f"{out_dir}: cannot create the output folder: {exc.strerror or exc}") from exc
    if not os.access(out_dir, os.W_OK):
        raise BuildError(f"{out_dir}: output folder is not writable")
    _remove_stale(out_dir, name)                # may put back a package a killed build moved aside
    if target.exists() and not force:
        raise BuildError(f"{target}: already exists; pass --force to replace it")
    tag = f"{os.getpid()}-"
    tmp = old = None
    try:
        tmp = Path(tempfile.mkdtemp(prefix=f".{name}.tmp-{tag}", dir=out_dir))
        for fname, text in sorted(files.items()):
            (tmp / fname).write_text(text, encoding="utf-8")
        if compile_hook is not None:
            compile_hook(tmp)
        if target.exists():
            old = Path(tempfile.mkdtemp(prefix=f".{name}.old-{tag}", dir=out_dir))
            os.replace(target, old / name)
        os.replace(tmp, target)
        tmp = None
    except BaseException as exc:
        if old is not None and not target.exists() and (old / name).exists():
            os.replace(old / name, target)                  # put the previous package back
        if tmp is not None:
            shutil.rmtree(tmp, ignore_errors=True)
        if old is not None:
            shutil.rmtree(old, ignore_errors=True)
        if isinstance(exc, OSError):
            raise BuildError(f"{out_dir}: cannot write the package: {exc.strerror or exc}") from exc
        raise
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)
    return target


def import_package(path):
    """Import a generated package from its folder (for tests and ``symgen verify``)."""
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
