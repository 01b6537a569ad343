"""The strict Jinja environment over the top-level ``templates/`` folder. Templates lay out
lines; they do no math."""
from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path

import jinja2

from ..errors import BuildError


def templates_dir() -> Path:
    here = Path(__file__).resolve().parent.parent        # the symgen package
    for candidate in (here / "templates", here.parent / "templates"):   # wheel, then checkout
        if (candidate / "numpy_module.py.j2").is_file():
            return candidate
    raise BuildError(f"{here}: symgen's templates folder is missing (broken installation)")


_TRIG = re.compile(r"\b(sin|cos)\(")
_NAME = re.compile(r"(?<![\w.])[A-Za-z_]")          # an identifier, not a number's exponent


def lane_expr(c: str) -> str:
    """A printed C expression on doubles as the same expression on ``lanes_t`` (several states
    at once, GCC's vector extension): sin and cos lane by lane, a constant splatted to every lane
    (arithmetic mixes vectors and scalars as it is)."""
    c = _TRIG.sub(r"lanes_\1(", c)
    return c if _NAME.search(c) else f"lanes_splat({c})"


@lru_cache(maxsize=1)
def environment() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(templates_dir())),
        undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True,
        keep_trailing_newline=True, autoescape=False,
    )
    return env


def render(template: str, context: dict) -> str:
    return environment().get_template(template).render(**context)
