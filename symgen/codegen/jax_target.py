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
  columns, as in the NumPy module: XLA runs it as vector operations across the columns;
- the functions batches call most (a Quantity's ``jax_fused``: M, ID, the frame Jacobians), when
  at most :data:`FUSE_MAX_OPS` operations and without a column loop, are *fused*: XLA's
  instruction fusion on, and every temp read more than once divided by a runtime 1.0 (``_one``,
  an argument of the compiled function, so no pass folds it). XLA's CPU fusion copies cheap
  producers (sin and cos among them) into every consumer, recursively: over unrolled code that is
  what made compiles superlinear and batches slower; a division is one of the operations it will
  not copy, so each shared temp is computed once, in its own kernel, and the single-use trees
  between them fuse into it (panda's inverse_dynamics: 1,284 kernels -> 174). x / 1.0 is x in
  IEEE arithmetic. In a fused function of few output entries (ID: *chained*), each such temp and
  each output entry also adds ``0.0*`` the one before it, a chain of reads through all the
  kernels, so that XLA's runtime finds its kernels sequential (each reads its predecessor's
  result) and runs them one after another in the calling thread, not as a graph handed to its
  thread pool (``+ 0.0*p`` is exact for finite p; a temp that is inf or nan makes the ones after
  it nan); and their batch of more than two ``CHUNK`` states runs as a loop over chunks of that
  many (on a CPU), so each kernel's arrays stay in the core's cache. The fused functions' sin
  and cos are the module's ``_sin`` and ``_cos`` (float64:
  polynomials XLA fuses and vectorizes; its own are a libm call an element). The others keep
  fusion off: a fused function's batch compiles in about 2-2.5x the time, which all of a
  package's functions together cannot afford (issue #26's 30 s for panda).
"""
from __future__ import annotations

#: a jax_fused function with more operations (``program.count_ops``' total) than this is not fused:
#: its batch compiles in about 1 ms of CPU an operation fused, 0.4 unfused (panda, jax 0.10.2);
#: solo12's inverse dynamics has 2,253 (docs/RESULTS.md in the git history, "JAX: fused M, ID and J")
FUSE_MAX_OPS = 3000

#: the chained functions' batches run this many states at a time on a CPU (the module's ``CHUNK``;
#: M and J chunked were as fast or slower: docs/RESULTS.md in the git history, "JAX: ID chained and chunked")
JAX_CHUNK = 256

#: a fused function is chained when it has at most this many output entries that are not numbers:
#: each chained entry is a kernel of its own (unchained they fuse into the output's one), so M and
#: J (45 and 100+ entries for panda) were slower chained, ID (9, solo12 18) much faster
CHAIN_MAX_OUTPUTS = 32


def _dense(output: dict) -> list[str]:
    """The Python text of every entry of an output, row-major, ``0.0`` where the entry is zero."""
    values = ["0.0"] * output["size"]
    for k, text in zip(output["index"], output["py_values"]):
        values[k] = text
    return values


def _number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def jax_context(ctx: dict, ops: dict | None = None, handled: list | tuple = ()) -> dict:
    """The package's template context with, per function, each output's dense entries
    (``jax_values``), whether it is fused (``fused``; then each line's ``keep``: read by more
    than one expression, ``readers``), from the functions' operation counts ``ops`` (``{name:
    counts}``; none: nothing fused), and whether NAME_xla.c has its handler (``xla``: the names
    in ``handled``)."""
    functions = []
    for f in ctx["functions"]:
        outputs = [{**o, "jax_values": _dense(o)} for o in f["outputs"]]
        total = (ops or {}).get(f["name"], {}).get("total")
        fused = f["jax_fused"] and total is not None and total <= FUSE_MAX_OPS and not f["py_loops"]
        # fused: a temp read by two or more expressions is computed once (``/ _one``), each after
        # the one before it (``+ 0.0*previous``), and so is every output entry that is not a number
        entries = sum(not _number(text) for o in outputs for text in o["jax_values"])
        chained = fused and entries <= CHAIN_MAX_OUTPUTS
        lines, previous, out_lines = [], None, []
        for line in f["lines"]:
            keep = fused and line["readers"] > 1
            lines.append({**line, "keep": keep, "after": previous if keep and chained else None})
            previous = line["temp"] if keep else previous
        if chained:
            for o in outputs:
                values = []
                for text in o["jax_values"]:
                    if not _number(text):
                        name = f"_o{len(out_lines)}"
                        out_lines.append({"temp": name, "py": text, "after": previous})
                        previous, text = name, name
                    values.append(text)
                o["jax_values"] = values
        functions.append({**f, "outputs": outputs, "fused": fused, "chained": chained, "lines": lines,
                          "out_lines": out_lines, "xla": f["name"] in handled})
    return {**ctx, "functions": functions, "fuse_max_ops": FUSE_MAX_OPS, "jax_chunk": JAX_CHUNK}
