"""The strict Jinja environment over the top-level ``templates/`` folder. Templates lay out
lines; they do no math."""
from __future__ import annotations

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


@lru_cache(maxsize=1)
def environment() -> jinja2.Environment:
    return jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(templates_dir())),
        undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True,
        keep_trailing_newline=True, autoescape=False,
    )


def render(template: str, context: dict) -> str:
    return environment().get_template(template).render(**context)
