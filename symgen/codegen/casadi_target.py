"""The CasADi target (``--target casadi``): every function of the package as a CasADi external
function, ``NAME_casadi.c`` (template ``casadi_external.c.j2``), compiled with ``NAME.c`` into
``NAME_casadi.so``, which ``casadi.external("mass_matrix", "OUT/NAME/NAME_casadi.so")`` loads.

CasADi's external-function C API is the one its own code generator emits (``casadi.CodeGenerator``:
``f(arg, res, iw, w, mem)``, ``f_n_in``, ``f_sparsity_in`` ...). An external that also exports
``jac_f`` gives CasADi f's Jacobian (``External::has_jacobian``): inputs f's inputs then f's
outputs, outputs one block per (output, input), each numel(output) x numel(input). Those are
printed for inverse and forward dynamics from the package's analytical derivatives
(:data:`JACOBIANS`), so CasADi's AD through them is exact, not finite differences.
"""
from __future__ import annotations

#: f -> (its derivatives' function: d f/d q and d f/d v, the function giving d f/d its third input)
JACOBIANS = {
    "inverse_dynamics": ("inverse_dynamics_derivatives", "mass_matrix"),         # d tau/d a = M
    "forward_dynamics": ("forward_dynamics_derivatives", "mass_matrix_inverse"),  # d qdd/d tau = M^-1
}


def matrix_shape(shape: tuple) -> tuple[int, int]:
    """The CasADi matrix of an output of ``shape``: a vector a column, a matrix itself, (a, b, c) the
    (a*b) x c matrix of its row-major layout, a scalar 1 x 1."""
    if len(shape) == 0:
        return 1, 1
    if len(shape) == 1:
        return shape[0], 1
    rows = 1
    for d in shape[:-1]:
        rows *= d
    return rows, shape[-1]


def jacobian_functions(contexts: list, parametric: bool) -> list[tuple[str, str, str]]:
    """(f, its derivatives' function, the third input's) for each f of :data:`JACOBIANS` the
    package can differentiate: f and both functions built, and no ``params`` or ``f_ext`` input
    (``parametric``: a parametric or external-forces package gets none, its Jacobian would also
    need d f/d params or d f/d f_ext)."""
    names = {f["name"] for f in contexts}
    return [(f, d, t) for f, (d, t) in JACOBIANS.items()
            if not parametric and {f, d, t} <= names]


#: the configuration-space functions of NAME.c (a robot without loops): name, inputs, output, doc
LIE_FUNCTIONS = (("integrate", ("q", "v"), ("q_next", "nq"), "q (+) v: Pinocchio's integrate"),
                 ("difference", ("q0", "q1"), ("v", "nv"), "the v with integrate(q0, v) = q1: Pinocchio's difference"),
                 ("normalize", ("q",), ("q_unit", "nq"), "q with unit quaternions (and planar cos, sin)"),
                 ("neutral", (), ("q_neutral", "nq"), "the neutral configuration: Pinocchio's neutral"))


def lie_contexts(robot) -> list:
    """:data:`LIE_FUNCTIONS` as the contexts :func:`casadi_context` reads (no derivatives: CasADi
    differentiates them by finite differences only if asked, ``enable_fd``)."""
    size = {"q": robot.nq, "q0": robot.nq, "q1": robot.nq, "v": robot.n, "nq": robot.nq, "nv": robot.n}
    return [{"name": name, "doc": doc, "inputs": [{"name": i, "size": size[i]} for i in inputs],
             "outputs": [{"name": out, "shape": (size[dim],)}]} for name, inputs, (out, dim), doc in LIE_FUNCTIONS]


def casadi_context(robot, contexts: list, parametric: bool, lie: bool = False) -> dict:
    """What ``casadi_external.c.j2`` prints: the functions (inputs, outputs as CasADi matrices,
    their places in CasADi's work vector w), with ``lie`` :data:`LIE_FUNCTIONS` too, and the jac_
    functions, over shared sparsity patterns."""
    sparsities: dict[tuple, str] = {}

    def sp(rows, cols):
        return sparsities.setdefault((rows, cols), f"sp_{rows}x{cols}")

    functions = []
    for f in list(contexts) + (lie_contexts(robot) if lie else []):
        inputs = [{"name": i["name"], "size": i["size"], "sp": sp(i["size"], 1)} for i in f["inputs"]]
        outputs, offset = [], 0
        for o in f["outputs"]:
            rows, cols = matrix_shape(o["shape"])
            outputs.append({"name": o["name"], "rows": rows, "cols": cols, "offset": offset, "sp": sp(rows, cols)})
            offset += rows * cols
        functions.append({"name": f["name"], "doc": f["doc"], "inputs": inputs, "outputs": outputs,
                          "work": max(offset, 1)})
    by_name = {f["name"]: f for f in functions}
    n, nq = robot.n, robot.nq
    jacobians = []
    for of, derivatives, third in jacobian_functions(contexts, parametric):
        f = by_name[of]
        (out,) = f["outputs"]
        blocks = [{"name": f"jac_{out['name']}_{i['name']}", "rows": n, "cols": i["size"],
                   "sp": sp(n, i["size"])} for i in f["inputs"]]
        jacobians.append({"name": f"jac_{of}", "of": of, "derivatives": derivatives, "third": third,
                          "inputs": f["inputs"] + [{"name": f"out_{out['name']}", "sp": out["sp"]}],
                          "outputs": blocks, "work": 2 * n * n + n * nq + n * n})
    return {"functions": functions, "jacobians": jacobians,
            "sparsities": [{"name": s, "rows": r, "cols": c} for (r, c), s in sparsities.items()],
            "zero_size": max(i["size"] for f in functions for i in f["inputs"]),
            "floating_base": robot.floating_base}


def source_name(name: str) -> str:
    """The CasADi target's C file in the package."""
    return f"{name}_casadi.c"


def library_name(name: str) -> str:
    """The CasADi library's file name in the package."""
    return f"{name}_casadi.so"


def load_externals(path, manifest: dict, options: dict | None = None):
    """The package at ``path`` through its CasADi library: a namespace of its functions by name,
    each ``casadi.external(f, NAME_casadi.so, options)`` taking and returning NumPy arrays in the
    package's shapes (a pair for two outputs), for ``symgen verify`` and the tests."""
    import types
    from pathlib import Path

    import casadi
    import numpy as np

    library = str(Path(path) / library_name(manifest["name"]))

    def wrap(fname, shapes):
        f = casadi.external(fname, library, options or {})

        def call(*args):
            out = f.call([np.asarray(a, dtype=float).reshape(-1) for a in args])
            values = tuple(np.array(o).reshape(s) for o, s in zip(out, shapes))
            return values[0] if len(values) == 1 else values
        call.external = f
        return call

    shapes = {fname: [tuple(s) for _, s in info["outputs"]] for fname, info in manifest["functions"].items()}
    if manifest.get("casadi_lie"):             # integrate, difference, normalize, neutral
        shapes.update({name: [(manifest["nq"] if dim == "nq" else manifest["nv"],)]
                       for name, _, (_, dim), _ in LIE_FUNCTIONS})
    return types.SimpleNamespace(**{fname: wrap(fname, s) for fname, s in shapes.items()})


def jacobian_errors(externals, manifest: dict, c, state: dict) -> dict[str, float]:
    """``{jac_f: largest relative difference}`` between each jac_f of the library (called as
    CasADi's Jacobian of f) and the C binding ``c``'s derivatives at ``state`` (the registry's
    argument names): d/dv and the third block everywhere, d/dq on the joints' columns (a
    free-flyer's base columns are the chain rule of the tangent's, tested in
    tests/test_casadi_target.py)."""
    import numpy as np

    nq, nv = manifest["nq"], manifest["nv"]
    out = {}
    for of, derivatives, third in jacobian_functions(
            [{"name": f} for f in manifest["functions"]],
            bool(manifest["options"].get("parametric") or manifest["options"].get("external_forces"))):
        args = [state[a] for a in manifest["functions"][of]["inputs"]]
        jac = getattr(externals, of).external.jacobian()          # CasADi loads jac_<of> from the library
        blocks = [np.array(b) for b in jac.call([*args, getattr(c, of)(*args)])]
        d_q, d_v = getattr(c, derivatives)(*args)
        pairs = [(blocks[0][:, nq - nv + 6 if nq != nv else 0:], d_q[:, 6 if nq != nv else 0:]),
                 (blocks[1], d_v), (blocks[2], getattr(c, third)(args[0]))]
        out[f"jac_{of}"] = max(float(np.abs(a - b).max() / max(1.0, np.abs(b).max())) for a, b in pairs)
    return out
