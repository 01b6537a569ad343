"""Names from a URDF never reach generated code unchecked: identifiers are rebuilt from safe
characters, text goes only into escaped string literals or escaped comments.

- :func:`identifier` (the package name, file names, the C prefix) keeps ``[0-9a-z_]`` only, is at
  most 64 characters (a longer one keeps its first characters and a hash of the whole name, so a
  file name never exceeds the file system's limit) and never shadows a keyword or a module that
  ``import NAME`` could mean instead (the standard library, numpy): those get an ``r_`` prefix.
- :func:`py_literal` and :func:`c_literal` keep only letters, digits, space, ``_``, ``-`` and ``.``
  as they are; every other character is an escape. So a literal holds no quote, backslash or
  newline of the input and stays inert inside a docstring, a comment or code.
- :func:`comment_text` is ASCII with escapes, no ``*/`` or ``/*``, and no PEP 263 coding cookie
  (``coding: utf-7`` in the first two lines of a Python file would change how it is decoded).
"""
from __future__ import annotations

import hashlib
import keyword
import re
import sys

_C_KEYWORDS = frozenset("""auto break case char const continue default do double else enum extern
float for goto if inline int long register restrict return short signed sizeof static struct switch
typedef union unsigned void volatile while _Bool _Complex _Imaginary main""".split())
# ``import NAME`` must find the generated package, and the package's own ``import numpy`` and
# ``from math import ...`` must find those modules, not the package
_SHADOWED_MODULES = frozenset(sys.stdlib_module_names) | {"numpy", "sympy", "symgen", "jinja2", "click"}
_MAX_IDENTIFIER = 64
_PLAIN = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 _-.")
_CODING_COOKIE = re.compile(r"coding(?=[:=])")


def identifier(name: str) -> str:
    """A lowercase identifier valid in C and Python and safe as a file name: runs of other
    characters become '_'; too long a name is cut and given a hash of the whole; a leading digit,
    a keyword or the name of a module it would shadow gets an 'r_' prefix."""
    ident = re.sub(r"[^0-9a-zA-Z]+", "_", name).strip("_").lower() or "robot"
    if len(ident) > _MAX_IDENTIFIER:
        digest = hashlib.sha256(name.encode("utf-8", "surrogatepass")).hexdigest()[:8]
        ident = f"{ident[:_MAX_IDENTIFIER - 9].rstrip('_')}_{digest}"
    if (ident[0].isdigit() or keyword.iskeyword(ident) or ident in _C_KEYWORDS
            or ident in _SHADOWED_MODULES):
        ident = f"r_{ident}"
    return ident


def check_package_name(name) -> None:
    """``--name``: the package is called as asked or not built (an OptionError naming what it would become)."""
    from ..errors import OptionError

    if name is not None and identifier(name) != name:
        raise OptionError(f"--name {name!r}: not a package name as given (it would become {identifier(name)!r}); "
                          f"use lowercase letters, digits and single underscores, not starting with a digit, "
                          f"nor a Python or C keyword or a module's name")


def comment_text(text: str) -> str:
    """Text safe inside a one-line Python '#' comment and a C '/* */' comment."""
    escaped = text.encode("unicode_escape").decode("ascii")
    escaped = escaped.replace("*/", "* /").replace("/*", "/ *")
    return _CODING_COOKIE.sub("coding ", escaped)


def py_literal(text: str) -> str:
    """A Python string literal of ``text``: ``'...'`` holding plain characters as they are and
    every other one as a ``\\x``/``\\u``/``\\U`` escape, so it cannot end a docstring around it."""
    out = []
    for ch in text:
        code = ord(ch)
        if ch in _PLAIN:
            out.append(ch)
        elif code < 0x100:
            out.append(f"\\x{code:02x}")
        elif code < 0x10000:
            out.append(f"\\u{code:04x}")
        else:
            out.append(f"\\U{code:08x}")
    return "'" + "".join(out) + "'"


def c_literal(text: str) -> str:
    """A C string literal of ``text``'s UTF-8 bytes: plain characters as they are, every other
    byte as a 3-digit octal escape (no trigraph, quote or backslash can survive). A NUL ends the
    string for C; a lone surrogate (only possible from a Robot built in Python) is written as its
    ``\\udXXX`` text."""
    out = []
    for b in text.encode("utf-8", "backslashreplace"):
        ch = chr(b)
        out.append(ch if ch in _PLAIN and ch not in "-." else f"\\{b:03o}")
    return '"' + "".join(out) + '"'
