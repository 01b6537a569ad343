"""The JAX target: what ``templates/jax_module.py.j2`` prints for each Function.

The JAX module reads the very lines the NumPy module prints (:class:`~.printers.PyPrinter`: bare
``sin``/``cos``, products for small powers, ``1.0/x``), which are jax.numpy code once ``sin`` and
``cos`` are ``jax.numpy``'s; so the target needs no printer of its own, only a layout of its own:

- a function computes one state over scalars (the NumPy module's lines); a batch, given as a
  leading axis or by the caller's ``jax.vmap``, maps it with ``jax.vmap``, so no Python loop runs
  over states and XLA sees each temp once, as a vector operation over the batch;
- each output is assembled functionally, one ``jnp.stack`` of its entries in row-major order (the
  zeros as ``0.0``), then reshaped: no ``.at[].set`` scatter, no in-place write;
- a column loop (:class:`~.program.Loop`) becomes a nested function over row arrays of the loop's
  columns, as in the NumPy module: XLA runs it as vector operations across the columns.
"""
from __future__ import annotations


def _dense(output: dict) -> list[str]:
    """The Python text of every entry of an output, row-major, ``0.0`` where the entry is zero."""
    values = ["0.0"] * output["size"]
    for k, text in zip(output["index"], output["py_values"]):
        values[k] = text
    return values


def jax_context(ctx: dict) -> dict:
    """The package's template context with, per function, each output's dense entries
    (``jax_values``): the JAX module's only addition to what the NumPy module prints."""
    functions = [{**f, "outputs": [{**o, "jax_values": _dense(o)} for o in f["outputs"]]} for f in ctx["functions"]]
    return {**ctx, "functions": functions}
