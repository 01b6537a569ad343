"""xacro descriptions (``ROBOT.urdf.xacro``, the ROS form) expanded without ROS, through the
``xacro`` package on PyPI (``pip install 'symgen[xacro]'``).

``$(find PKG)`` and ``package://PKG/...`` (in ``<xacro:include filename>``) resolve from the
folders given (``--package-path DIR``, repeatable): DIR is the package itself when its name (the
``<name>`` of its package.xml, else the folder's name) is PKG, else DIR/PKG. ``--xacro-arg
name:=value`` sets ``<xacro:arg>``. What xacro refuses is one line naming the xacro file (the
innermost included file being read) and, when the XML parser gives it, the line.
"""
from __future__ import annotations

import contextlib
import io
import os
import re
from pathlib import Path

from ..errors import OptionError, URDFError


def is_xacro(path) -> bool:
    return str(path).endswith(".xacro")


def parse_args(items) -> dict:
    """``{name: value}`` of ``--xacro-arg name:=value`` items (an OptionError names a bad one)."""
    out = {}
    for item in items or ():
        name, sep, value = item.partition(":=")
        if not sep or not name.strip():
            raise OptionError(f"--xacro-arg {item!r}: expected name:=value")
        out[name.strip()] = value
    return out


def _package_name(folder: Path) -> str:
    manifest = folder / "package.xml"
    if manifest.is_file():
        found = re.search(r"<name>\s*([^<\s]+)\s*</name>", manifest.read_text(errors="replace"))
        if found:
            return found.group(1)
    return folder.name


def resolver(package_paths, source):
    """``find(pkg)``: the folder of package ``pkg`` among ``package_paths``."""
    folders = [Path(p).resolve() for p in package_paths or ()]
    for folder in folders:
        if not folder.is_dir():
            raise OptionError(f"--package-path {str(folder)!r}: not a folder")

    def find(pkg):
        for folder in folders:
            if _package_name(folder) == pkg:
                return str(folder)
            if (folder / pkg).is_dir():
                return str(folder / pkg)
        given = ", ".join(map(str, folders)) or "none given"
        raise URDFError(source, f"$(find {pkg})", f"package {pkg!r} is not in the --package-path folders ({given})")

    return find


def expand(path, args=None, package_paths=()) -> str:
    """The URDF text of the xacro file ``path`` with ``args`` (``{name: value}``)."""
    try:
        import xacro
        from xacro import substitution_args
    except ImportError:
        raise OptionError("reading xacro needs the xacro package: pip install 'symgen[xacro]'") from None
    source = str(path)
    if not Path(path).is_file():
        raise URDFError(source, None, "no such file")
    find = resolver(package_paths, source)
    plain = xacro.abs_filename_spec

    def filename_spec(spec):                      # package://PKG/rest in an include
        if spec.startswith("package://"):
            pkg, _, rest = spec[len("package://"):].partition("/")
            return os.path.join(find(pkg), rest)
        return plain(spec)

    saved = substitution_args._eval_find, xacro.abs_filename_spec
    substitution_args._eval_find, xacro.abs_filename_spec = find, filename_spec
    said = io.StringIO()
    try:
        with contextlib.redirect_stderr(said):    # xacro prints its locations; the error says them
            doc = xacro.process_file(source, mappings={k: str(v) for k, v in (args or {}).items()})
        return doc.toprettyxml(indent="  ")
    except URDFError:
        raise
    except Exception as exc:                      # XacroException, the XML parser's ExpatError, ...
        stack = [f for f in (getattr(xacro, "filestack", None) or []) if f]
        where = stack[-1] if stack else source
        line = getattr(exc, "lineno", None) or getattr(getattr(exc, "exc", None), "lineno", None)
        reason = " ".join(str(exc).split()) or type(exc).__name__
        located = f"line {line}: " if line else ""
        raise URDFError(str(where), None, f"xacro: {located}{reason}"
                        + (f" (included from {source})" if str(where) != source else "")) from None
    finally:
        substitution_args._eval_find, xacro.abs_filename_spec = saved


def load_xacro(path, args=None, package_paths=(), **kwargs):
    """The Robot of the xacro file ``path`` (its expansion read as URDF, named by the xacro file)."""
    from . import parse_urdf_string

    return parse_urdf_string(expand(path, args, package_paths), source=str(path), **kwargs)
