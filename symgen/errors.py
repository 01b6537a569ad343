"""One exception hierarchy for everything a user can get wrong.

Every message is one line that names the file, the element and the reason, so the CLI can print
it as it is (``symgen: <message>``) and exit with code 2. Warnings (:class:`SymgenWarning`, issued
with :func:`warnings.warn`) are one line of the same shape; the CLI prints them as
``symgen: warning: <message>``.
"""
from __future__ import annotations


def located(source: str | None, element: str | None, reason: str) -> str:
    """``source: element: reason`` (``<string>`` for a text without a file; no element if None)."""
    return ": ".join([source or "<string>", *([element] if element else []), reason])


class SymgenError(Exception):
    """Base class of every error symgen raises on bad input or a bad option."""


class URDFError(SymgenError):
    """The robot description cannot be read or is not a valid tree of rigid bodies."""

    def __init__(self, source: str | None, element: str | None, reason: str):
        self.source = source
        self.element = element
        self.reason = reason
        super().__init__(located(source, element, reason))


class ModelError(SymgenError):
    """A model is used in a way it does not support (wrong state size, unknown body ...)."""


class OptionError(SymgenError):
    """An option given to a command or function is not one symgen knows."""


class BuildError(SymgenError):
    """Code generation or compilation failed."""


class SymgenWarning(UserWarning):
    """Input symgen accepts but a user should know about (a tolerated inertia, a singular mass
    matrix ahead); the message is one line naming the file, element and reason."""
