"""The JAX module's CPU path: XLA FFI handlers (``templates/xla_ffi.c.j2``) that run the package's
compiled C batches as custom calls, so a jitted, vmapped JAX function of the package costs what the
C batch costs.

``symgen build --target jax`` writes ``NAME_xla.c`` and, when the C is compiled and the building
Python has jaxlib (its FFI C header, ``jax.ffi.include_dir()``), links it with ``NAME.c`` into
``_NAME_xla_HASH.so``. ``NAME_jax.py`` registers the handlers when it finds that library (on a CPU, for
float64) and otherwise runs its own jax.numpy code, which is also what gradients, float32 and
other devices use.
"""
from __future__ import annotations

#: a handler passes at most this many buffers (inputs and outputs; the C's ``xla_job.ptrs``)
MAX_BUFFERS = 16


def source_name(name: str) -> str:
    """The FFI handlers' C file in the package."""
    return f"{name}_xla.c"


def library_name(ext_name: str) -> str:
    """The FFI handlers' library in the package (NAME.c linked in), named like the C binding
    ``ext_name`` (``_NAME_ext_HASH``): a package rebuilt in a running Python loads its new library
    (dlopen keeps the first file of a given path)."""
    return ext_name.replace("_ext_", "_xla_", 1) + ".so"


def include_dir() -> str | None:
    """The folder holding ``xla/ffi/api/c_api.h`` of the jaxlib this Python has, else None."""
    try:
        import jax.ffi
        return jax.ffi.include_dir()
    except Exception:                    # no jax, or a jax without jax.ffi: the module keeps its own code
        return None


def xla_functions(functions: list) -> list:
    """The functions that get a handler: every function of the JAX module whose buffers fit."""
    return [f for f in functions if len(f["params"]) + len(f["outputs"]) <= MAX_BUFFERS]
