"""One exception hierarchy for everything a user can get wrong.

Every message is one line that names the file, the element and the reason, so the CLI can print
it as it is (``symgen: <message>``) and exit with code 2.
"""
from __future__ import annotations


class SymgenError(Exception):
    """Base class of every error symgen raises on bad input or a bad option."""


class URDFError(SymgenError):
    """The robot description cannot be read or is not a valid tree of rigid bodies."""

    def __init__(self, source: str | None, element: str | None, reason: str):
        self.source = source
        self.element = element
        self.reason = reason
        where = source or "<string>"
        parts = [where]
        if element:
            parts.append(element)
        super().__init__(": ".join(parts + [reason]))


class ModelError(SymgenError):
    """A model is used in a way it does not support (wrong state size, unknown body ...)."""


class OptionError(SymgenError):
    """An option given to a command or function is not one symgen knows."""


class BuildError(SymgenError):
    """Code generation or compilation failed."""
