"""CasADi's generated C as a rival in ``symgen bench`` (optional: ``pip install casadi``, the
``bench`` extra).

What a CasADi user writes for a robot: the recursive algorithms taped on ``casadi.SX`` symbols,
then ``casadi.CodeGenerator``. Here the tape runs symgen's own body-frame algorithms on an SX
backend (:class:`SXBackend`, a few lines: the algorithms only need ``bk.zeros``, ``bk.const``,
``bk.sin``/``bk.cos``, ... and array arithmetic), so the rival computes exactly what a plain
local-frame CRBA / RNEA computes, with CasADi's expression graph in place of our naming:

    M(q)            CRBA in body frames (:func:`symgen.algorithms.crba.crba`)
    tau(q, qd, qdd) RNEA in body frames, with the package's gravity
    g(q)            the same RNEA at qd = qdd = 0
    C(q, qd)        the Christoffel-consistent C by CasADi's AD of the taped M:
                    C_ij = sum_k Gamma_ijk qd_k, Gamma_ijk = 1/2 (dM_ij/dq_k + dM_ik/dq_j - dM_jk/dq_i),
                    formed as C = 1/2 (Mdot + J - J^T) with Mdot = (dM/dq) qd (forward mode,
                    ``jtimes``) and J = d(M qd)/dq (``jacobian``): the same sum without the n^3
                    tensor, the cheapest way to write it in CasADi.

Each function is built with CasADi's common-subexpression elimination (``cse``) when that gives
fewer instructions. Outputs are dense and row-major (CasADi stores column-major, so matrices are
taped transposed), written to the same buffer as ours, so a CasADi function is one more row of the
C loop driver (``templates/bench_driver.c.j2``), compiled with the same flags, timed in the same
process. Before anything is timed, the taped functions are checked against symgen's numeric
reference and, where installed, Pinocchio: :func:`prepare` refuses on a disagreement.
"""
from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

import numpy as np

from ..model import GRAVITY
from .harness import BenchError, cache_dir

#: the quantities CasADi's side tapes, and their arguments (symgen's registry names)
CASADI_QUANTITIES = {"M": ("q",), "C": ("q", "qd"), "tau": ("q", "qd", "qdd"), "g": ("q",)}
METHOD = "casadi_c"                 # the measurement's method name of CasADi's C in the C loop
CHECK_RTOL = 1e-9


def _casadi():
    try:
        import casadi
    except ImportError:
        raise BenchError("CasADi is not installed (pip install casadi, or the bench extra)") from None
    return casadi


class _X:
    """One ``casadi.SX`` scalar that NumPy treats as an opaque object (a bare SX has
    ``__array_ufunc__``, so ``array * sx`` would become one SX matrix instead of an object array).
    Multiplying by an exact 0 or 1 and adding 0 keep the plain number, as CasADi itself would."""

    __slots__ = ("x",)

    def __init__(self, x):
        self.x = x

    @staticmethod
    def _of(other):
        return other.x if isinstance(other, _X) else other

    def __add__(self, other):
        if not isinstance(other, _X) and other == 0:
            return self
        return _X(self.x + _X._of(other))

    __radd__ = __add__

    def __sub__(self, other):
        if not isinstance(other, _X) and other == 0:
            return self
        return _X(self.x - _X._of(other))

    def __rsub__(self, other):
        return _X(_X._of(other) - self.x) if isinstance(other, _X) or other != 0 else -self

    def __mul__(self, other):
        if not isinstance(other, _X):
            if other == 0:
                return 0.0
            if other == 1:
                return self
        return _X(self.x * _X._of(other))

    __rmul__ = __mul__

    def __truediv__(self, other):
        return _X(self.x / _X._of(other))

    def __rtruediv__(self, other):
        return _X(_X._of(other) / self.x)

    def __neg__(self):
        return _X(-self.x)

    def __pos__(self):
        return self


def _sx_of(e):
    return e.x if isinstance(e, _X) else e


class SXBackend:
    """Object arrays of CasADi SX scalars (wrapped, :class:`_X`) and plain floats for constants.
    ``bind`` is the identity: CasADi's graph shares nodes by itself, which is what a CasADi user
    gets."""

    name = "casadi"
    half = 0.5

    def __init__(self):
        self.ca = _casadi()

    def zeros(self, shape):
        out = np.empty(shape, dtype=object)
        out.fill(0.0)
        return out

    def const(self, value):
        return np.asarray(value, dtype=float).astype(object)

    def number(self, x):
        return float(x)

    def sin(self, x):
        return _X(self.ca.sin(_sx_of(x)))

    def cos(self, x):
        return _X(self.ca.cos(_sx_of(x)))

    def bind(self, value, name, body=None):
        return value

    def bind_always(self, value, name, body=None):
        return value

    def tick(self, done, total):
        pass


def _symbols(ca, name, n):
    x = ca.SX.sym(name, n)
    out = np.empty(n, dtype=object)
    for i in range(n):
        out[i] = _X(x[i])
    return x, out


def _sx(ca, array):
    """A dense SX matrix (or column) of an object array of SX scalars and floats."""
    a = np.asarray(array, dtype=object)
    if a.ndim == 1:
        a = a[:, None]
    out = ca.SX(*a.shape)
    for (i, j), e in np.ndenumerate(a):
        out[i, j] = _sx_of(e)
    return ca.densify(out)


def tape(robot, quantities=tuple(CASADI_QUANTITIES), gravity=GRAVITY, prefix: str = "casadi_",
         cse: str = "auto", pinocchio: dict | None = None) -> dict:
    """``{quantity: casadi.Function}`` of ``robot`` (a fixed-base symgen Robot), named
    ``prefix + quantity``. ``cse``: "auto" (the variant with fewer instructions), "on", "off".
    ``pinocchio``: Pinocchio's ``crba`` and ``rnea`` taped by casadi_kin_dyn
    (:func:`~.casadi_pinocchio.pinocchio_functions`), evaluated on the same symbols instead of
    symgen's algorithms (its gravity is Pinocchio's default)."""
    from ..algorithms.crba import crba
    from ..algorithms.rnea import rnea

    ca = _casadi()
    bk = SXBackend()
    n = robot.n
    q, qs = _symbols(ca, "q", n)
    qd, qds = _symbols(ca, "qd", n)
    qdd, qdds = _symbols(ca, "qdd", n)
    sym = {"q": q, "qd": qd, "qdd": qdd}
    exprs = {}
    zero = ca.SX.zeros(n)
    if "M" in quantities or "C" in quantities:
        M = pinocchio["crba"](q) if pinocchio else _sx(ca, crba(robot, qs, bk))
        exprs["M"] = M
        if "C" in quantities:
            Mdot = ca.reshape(ca.jtimes(ca.vec(M), q, qd), n, n)
            J = ca.jacobian(ca.mtimes(M, qd), q)
            exprs["C"] = 0.5 * (Mdot + J - J.T)
    if "tau" in quantities:
        exprs["tau"] = (pinocchio["rnea"](q, qd, qdd) if pinocchio
                        else _sx(ca, rnea(robot, qs, qds, qdds, bk, gravity=gravity)))
    if "g" in quantities:
        rest = np.zeros(n, dtype=object)
        exprs["g"] = (pinocchio["rnea"](q, zero, zero) if pinocchio
                      else _sx(ca, rnea(robot, qs, rest.copy(), rest.copy(), bk, gravity=gravity)))
    out = {}
    for qty in quantities:
        if qty not in CASADI_QUANTITIES:
            continue
        args = CASADI_QUANTITIES[qty]
        e = exprs[qty]
        e = e.T if e.size2() > 1 else e               # row-major in CasADi's column-major buffer
        variants = {"off": False, "on": True, "auto": None}[cse]
        make = [lambda c: ca.Function(prefix + qty, [sym[a] for a in args], [e], list(args), [qty],
                                      {"cse": c})]
        if variants is None:
            fs = [make[0](False), make[0](True)]
            out[qty] = min(fs, key=lambda f: op_counts(f)["total"])
        else:
            out[qty] = make[0](variants)
    return out


def op_counts(f) -> dict:
    """Operations of a CasADi SX function, counted as symgen counts its own (``ops`` of the
    manifest): adds and subtractions, multiplications and divisions (a square as one), sin/cos;
    negations apart (symgen does not count them); ``instructions``: CasADi's own count (with
    inputs, outputs, constants and assignments)."""
    ca = _casadi()
    kinds = {ca.OP_ADD: "add", ca.OP_SUB: "add", ca.OP_MUL: "mul", ca.OP_DIV: "mul", ca.OP_SQ: "mul",
             ca.OP_SIN: "trig", ca.OP_COS: "trig", ca.OP_NEG: "neg"}
    counts = {"add": 0, "mul": 0, "trig": 0, "neg": 0, "other": 0}
    ignore = {ca.OP_INPUT, ca.OP_OUTPUT, ca.OP_CONST, ca.OP_ASSIGN, ca.OP_PARAMETER}
    for k in range(f.n_instructions()):
        op = f.instruction_id(k)
        if op in ignore:
            continue
        counts[kinds.get(op, "other")] += 1
    counts["total"] = counts["add"] + counts["mul"] + counts["trig"]
    counts["instructions"] = f.n_instructions()
    return counts


def check(robot, functions: dict, gravity=GRAVITY, trials: int = 3, seed: int = 0,
          rtol: float = CHECK_RTOL) -> dict:
    """CasADi's functions against symgen's numeric reference (body frames, ``quantities.evaluate``)
    and Pinocchio (when installed) on random states: ``{"max_rel": {qty: error}, "pinocchio": note}``;
    BenchError if any is above ``rtol`` (relative to the largest entry)."""
    from .. import quantities as Q
    from ..verify import _pinocchio

    oracle, note = _pinocchio(robot, gravity=gravity)
    pin_calls = {"M": lambda s: oracle.mass_matrix(s["q"]), "C": lambda s: oracle.coriolis(s["q"], s["qd"]),
                 "tau": lambda s: oracle.inverse_dynamics(s["q"], s["qd"], s["qdd"]),
                 "g": lambda s: oracle.gravity(s["q"])}
    rng = np.random.default_rng(seed)
    errors = {}
    for qty, f in functions.items():
        worst = 0.0
        for _ in range(trials):
            state = Q.random_state(rng, robot.n, robot.n)
            got = np.asarray(f(*[state[a] for a in CASADI_QUANTITIES[qty]]), dtype=float)
            refs = [np.asarray(Q.evaluate(robot, qty, state, Q.SweepOptions(frame="body", gravity=tuple(gravity))))]
            if oracle is not None:
                refs.append(np.asarray(pin_calls[qty](state)))
            for ref in refs:
                ref = ref.reshape(-1)
                # row-major: a matrix was taped transposed, so CasADi's column-major buffer is row-major
                mine = got.T.reshape(-1) if got.ndim == 2 and got.shape[1] > 1 else got.reshape(-1)
                scale = max(1.0, float(np.max(np.abs(ref))))
                worst = max(worst, float(np.max(np.abs(mine - ref))) / scale)
        errors[qty] = worst
        if worst > rtol:
            raise BenchError(f"CasADi's {qty} disagrees with symgen's reference/Pinocchio by {worst:.3g} "
                             f"(relative; limit {rtol:g}): not timed")
    return {"max_rel": errors, "pinocchio": note if oracle is None else "checked against " + note}


def generate(functions: dict, name: str, out_dir) -> tuple[Path, Path]:
    """CasADi's C for ``functions`` (one file and its header, ``name.c``/``name.h``, in
    ``out_dir``) by ``casadi.CodeGenerator`` with its default options (double, no main)."""
    ca = _casadi()
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    gen = ca.CodeGenerator(f"{name}.c", {"with_header": True})
    for f in functions.values():
        gen.add(f)
    gen.generate(str(out_dir) + "/")
    return out_dir / f"{name}.c", out_dir / f"{name}.h"


def _safe(text: str) -> str:
    return re.sub(r"\W", "_", text)


#: whose algorithms a CasADi rival tapes -> (C loop row label, name prefix)
SOURCES = {"symgen": ("casadi", "casadi_"), "pinocchio": ("casadi_pin", "casadi_pin_")}


def prepare(urdf, manifest: dict, quantities, floating_base: bool | None = None, check_trials: int = 3,
            source: str = "symgen") -> dict:
    """Tape, check and generate CasADi's C for the wanted quantities of a package's robot:
    symgen's body-frame algorithms taped (``source`` "symgen") or Pinocchio's ("pinocchio", through
    casadi_kin_dyn in an environment of its own, :mod:`.casadi_pinocchio`: fixed bases, one
    coordinate per joint, Pinocchio's default gravity).
    Returns ``{"dir": folder, "name": C name stem, "functions": {qty: casadi.Function}, "ops":
    {qty: counts}, "check": ..., "tape_s": seconds, "work": {qty: (sz_arg, sz_res, sz_iw, sz_w)},
    "skipped": {qty: why}}``. The C lands in ``$SYMGEN_CACHE/casadi/<hash>/`` (content-addressed,
    so its objects are cached as the package's are)."""
    import time

    from .. import load_urdf
    from ..verify import manifest_gravity

    ca = _casadi()
    floating = bool(manifest.get("floating_base")) if floating_base is None else floating_base
    robot = load_urdf(urdf, floating_base=floating)
    if tuple(robot.joint_names) != tuple(manifest.get("joint_names", robot.joint_names)):
        raise BenchError(f"{urdf}: its joints are not the package's (order or names); not the same robot")
    gravity = manifest_gravity(manifest, urdf)
    wanted = [qty for qty in quantities if qty in CASADI_QUANTITIES]
    skipped = {qty: "no CasADi tape of this quantity (CasADi's side has M, C, tau, g)"
               for qty in quantities if qty not in CASADI_QUANTITIES}
    if manifest.get("options", {}).get("parametric"):
        raise BenchError("a --parametric package: CasADi's side folds the URDF's inertias; not comparable")
    label, stem_prefix = SOURCES[source]
    pinocchio = None
    t0 = time.perf_counter()
    if source == "pinocchio":
        from .casadi_pinocchio import pinocchio_functions

        if floating or tuple(gravity) != tuple(GRAVITY):
            raise BenchError("Pinocchio taped by casadi_kin_dyn: fixed bases and the default gravity only")
        pinocchio = pinocchio_functions(urdf, robot.joint_names)
    prefix = f"{stem_prefix}{_safe(manifest['name'])}_"
    functions = tape(robot, wanted, gravity=gravity, prefix=prefix, pinocchio=pinocchio)
    tape_s = time.perf_counter() - t0
    checked = check(robot, functions, gravity, trials=check_trials)
    stem = f"{prefix}rival"
    h = hashlib.sha256(json.dumps([ca.__version__, stem, [f.serialize() for f in functions.values()]]).encode())
    out_dir = cache_dir() / "casadi" / h.hexdigest()[:20]
    if not (out_dir / f"{stem}.c").exists():
        tmp = out_dir.with_name(out_dir.name + ".tmp")
        generate(functions, stem, tmp)
        tmp.replace(out_dir) if not out_dir.exists() else None
    work = {qty: (f.sz_arg(), f.sz_res(), f.sz_iw(), f.sz_w()) for qty, f in functions.items()}
    return {"dir": out_dir, "name": stem, "functions": functions, "ops": {q: op_counts(f) for q, f in functions.items()},
            "check": checked, "tape_s": round(tape_s, 2), "work": work, "skipped": skipped,
            "version": ca.__version__, "label": label, "source": source}


def driver_extra(prepared: dict, row_of: dict) -> dict:
    """What the C loop driver needs to time CasADi's functions beside ours: an include, static
    argument/result/work arrays, one runner per quantity (label ``"<qty>:casadi"``) calling
    ``f(arg, res, iw, w, 0)`` after pointing ``arg`` at the state and ``res`` at ``out``.
    ``row_of``: argument name -> the driver's expression of its input row."""
    work, label, v = prepared["work"], prepared.get("label", "casadi"), prepared["name"]
    sz = [max(w[k] for w in work.values()) for k in range(4)]
    decl = (f"static const casadi_real *{v}_arg[{max(sz[0], 1)}];\n"
            f"static casadi_real *{v}_res[{max(sz[1], 1)}];\n"
            f"static casadi_int {v}_iw[{max(sz[2], 1)}];\n"
            f"static casadi_real {v}_w[{max(sz[3], 1)}];")
    runners, out_size = [], 1
    for qty, f in prepared["functions"].items():
        size = int(f.nnz_out(0))
        out_size = max(out_size, size)
        sets = " ".join(f"{v}_arg[{k}] = {row_of[a]};" for k, a in enumerate(CASADI_QUANTITIES[qty]))
        call = f"{sets} {v}_res[0] = out; {f.name()}({v}_arg, {v}_res, {v}_iw, {v}_w, 0);"
        runners.append({"runner": f"{label}_{qty}", "call": call, "label": f"{qty}:{label}", "last": size - 1})
    return {"includes": [f"{prepared['name']}.h"], "declarations": decl, "runners": runners,
            "out_size": out_size, "include_dirs": [str(prepared["dir"])]}


def check_compiled(prepared: dict, flags: str, cc: str | None = None, trials: int = 2, seed: int = 1,
                   timeout: float | None = None, rtol: float = CHECK_RTOL) -> dict:
    """CasADi's generated C, compiled with ``flags`` (plus ``-fPIC -shared``) and loaded through
    ``casadi.external``, against the taped functions on random states: ``{qty: max relative
    error}``; BenchError above ``rtol``. (The C loop then times the same source, same flags.)"""
    import shlex
    import tempfile

    from .. import quantities as Q
    from .harness import find_cc, run_compiler

    ca = _casadi()
    cc = find_cc(cc)
    src = Path(prepared["dir"]) / f"{prepared['name']}.c"
    rng = np.random.default_rng(seed)
    errors = {}
    with tempfile.TemporaryDirectory(prefix="symgen-casadi-") as tmp:
        so = Path(tmp) / f"{prepared['name']}.so"
        run_compiler([cc, *shlex.split(flags), "-std=c99", "-fPIC", "-shared", str(src), "-o", str(so), "-lm"],
                     timeout, f"{src.name} ({flags}, shared)")
        for qty, f in prepared["functions"].items():
            ext = ca.external(f.name(), str(so))
            n = f.size1_in(0)
            worst = 0.0
            for _ in range(trials):
                state = Q.random_state(rng, n, n)
                args = [state[a] for a in CASADI_QUANTITIES[qty]]
                ref = np.asarray(f(*args), dtype=float)
                got = np.asarray(ext(*args), dtype=float)
                worst = max(worst, float(np.max(np.abs(got - ref))) / max(1.0, float(np.max(np.abs(ref)))))
            errors[qty] = worst
            if worst > rtol:
                raise BenchError(f"CasADi's compiled {qty} ({flags}) differs from its tape by {worst:.3g}: not timed")
    return errors
