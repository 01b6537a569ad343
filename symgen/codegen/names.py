"""Names from a URDF never reach generated code unchecked: identifiers are rebuilt from safe
characters, text goes only into escaped string literals or escaped comments."""
from __future__ import annotations

import keyword
import re

_C_KEYWORDS = frozenset("""auto break case char const continue default do double else enum extern
float for goto if inline int long register restrict return short signed sizeof static struct switch
typedef union unsigned void volatile while _Bool _Complex _Imaginary main""".split())


def identifier(name: str) -> str:
    """A lowercase identifier valid in C and Python and safe as a file name: runs of other
    characters become '_', a leading digit or a keyword gets an 'r_' prefix."""
    ident = re.sub(r"[^0-9a-zA-Z]+", "_", name).strip("_").lower() or "robot"
    if ident[0].isdigit() or keyword.iskeyword(ident) or ident in _C_KEYWORDS:
        ident = f"r_{ident}"
    return ident


def comment_text(text: str) -> str:
    """Text safe inside a one-line Python '#' comment and a C '/* */' comment."""
    escaped = text.encode("unicode_escape").decode("ascii")
    return escaped.replace("*/", "* /").replace("/*", "/ *")


def py_literal(text: str) -> str:
    """A Python string literal of ``text`` (ASCII only, every special character escaped)."""
    return ascii(text)


def c_literal(text: str) -> str:
    """A C string literal of ``text``'s UTF-8 bytes: letters, digits, space and '_' as they are,
    every other byte as a 3-digit octal escape (no trigraph or quote can survive)."""
    out = []
    for b in text.encode("utf-8"):
        ch = chr(b)
        out.append(ch if (ch.isascii() and (ch.isalnum() or ch in " _")) else f"\\{b:03o}")
    return '"' + "".join(out) + '"'
