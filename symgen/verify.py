"""``symgen verify``: check a generated package on random states (paper, Section 5).

What is checked comes from the registry (:mod:`symgen.quantities`): every function the package
has, on every backend, against NumPy's; with a URDF, against the numeric reference (the same
algorithms run on numbers, body frame) and Pinocchio (each quantity's ``pinocchio`` counterpart);
and the identities below, each run when the package has the functions it needs.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

from . import quantities as Q

TOL = 1e-9


@dataclass(frozen=True)
class Identity:
    """A relation between generated functions that holds at every state: ``sides(f, state, call)``
    returns (left, right), where ``f`` maps a function name to its value at ``state`` and
    ``call(name, *args)`` evaluates it at other arguments."""
    name: str
    needs: tuple[str, ...]
    sides: Callable
    conditioned: bool = False                       # a solve with M: tolerance grows with cond(M)


def _rnea_minus_gravity(f, s, call):
    zero = np.zeros_like(s["qd"])
    return f["coriolis_matrix"] @ s["qd"], call("inverse_dynamics", s["q"], s["qd"], zero) - call(
        "inverse_dynamics", s["q"], zero, zero)


IDENTITIES = (
    Identity("M symmetric", ("mass_matrix",), lambda f, s, call: (f["mass_matrix"], f["mass_matrix"].T)),
    Identity("Mdot = C + C^T", ("mass_matrix_dot", "coriolis_matrix"),                         # eq. (2)
             lambda f, s, call: (f["mass_matrix_dot"], f["coriolis_matrix"] + f["coriolis_matrix"].T)),
    Identity("C = Gamma qd", ("christoffel", "coriolis_matrix"),                              # eq. (3)
             lambda f, s, call: (np.einsum("ijk,k->ij", f["christoffel"], s["qd"]), f["coriolis_matrix"])),
    Identity("C qd = RNEA(q, qd, 0) - g", ("coriolis_matrix", "inverse_dynamics"), _rnea_minus_gravity),
    Identity("g = RNEA(q, 0, 0)", ("gravity", "inverse_dynamics"),
             lambda f, s, call: (f["gravity"], call("inverse_dynamics", s["q"], 0 * s["qd"], 0 * s["qd"]))),
    Identity("slotine_li(q, qd, qd, qdd) = RNEA(q, qd, qdd)", ("slotine_li", "inverse_dynamics"),
             lambda f, s, call: (call("slotine_li", s["q"], s["qd"], s["qd"], s["qdd"]), f["inverse_dynamics"])),
    Identity("RNEA(q, qd, FD(q, qd, tau)) = tau", ("forward_dynamics", "inverse_dynamics"),
             lambda f, s, call: (call("inverse_dynamics", s["q"], s["qd"], f["forward_dynamics"]), s["tau"]), True),
    Identity("M Minv = 1", ("mass_matrix", "mass_matrix_inverse"),
             lambda f, s, call: (f["mass_matrix"] @ f["mass_matrix_inverse"], np.eye(len(s["q"]))), True),
)


def _rel(a, b):
    scale = max(1.0, float(np.max(np.abs(b))) if np.size(b) else 1.0)
    return float(np.max(np.abs(np.asarray(a) - np.asarray(b)))) / scale if np.size(b) else 0.0


def _pinocchio(robot):
    """(PinOracle or None, a note for the report). Pinocchio reads the robot symgen read, as
    symgen writes it back (after lumping and snapping, with a floating base's six joints as real
    joints), not the raw file: snapping moves values by up to 1e-9, this check's tolerance."""
    try:
        import pinocchio
    except ImportError:
        return None, "Pinocchio: not installed (pip install pin), skipped"
    from .pinocchio_oracle import PinOracle
    from .urdf import urdf_string

    try:
        model = pinocchio.buildModelFromXML(urdf_string(robot))
        return PinOracle(robot, model, pinocchio), f"Pinocchio {pinocchio.__version__}, on symgen's rewrite of the URDF"
    except Exception as exc:                    # urdfdom's and the joint matching's refusals alike
        return None, f"Pinocchio: skipped, {exc}".splitlines()[0]


class _Memo:
    """The oracle's methods, each computed once per state (Mdot and C both read Pinocchio's C)."""

    def __init__(self, oracle):
        self._oracle, self._cache = oracle, {}

    def __getattr__(self, method):
        def call(*args):
            key = (method,) + tuple(np.asarray(a).tobytes() for a in args)
            if key not in self._cache:
                self._cache[key] = getattr(self._oracle, method)(*args)
            return self._cache[key]
        return call


def verify_package(path, trials=20, seed=0, urdf=None, floating_base=False):
    """Return (report text, ok). Per random state (the registry's draws: q in [0, 2pi], qd in
    [0, 10], qdd in [-10, 10]): the identities, every backend equal to NumPy, and with a URDF the
    numeric reference and, if it is installed, Pinocchio."""
    import symgen
    from .codegen.package import import_package

    pkg = import_package(path)
    robot = symgen.load_urdf(urdf, floating_base=floating_base) if urdf else None
    oracle, pin_note = _pinocchio(robot) if urdf else (None, None)
    rng = np.random.default_rng(seed)
    worst: dict[str, float] = {}                    # check -> worst relative error
    ratio: dict[str, float] = {}                    # check -> worst error / its tolerance
    allowed: dict[str, float] = {}                  # check -> the tolerance at that worst ratio

    def record(name, value, tol=TOL):
        worst[name] = max(worst.get(name, 0.0), value)
        if value / tol >= ratio.get(name, 0.0):
            ratio[name], allowed[name] = value / tol, tol

    backends = {"numpy": pkg.numpy} | ({"c": pkg.c} if pkg.c is not None else {})
    present = [x for x in Q.QUANTITIES.values() if hasattr(pkg.numpy, x.function)]
    identities = [i for i in IDENTITIES if all(hasattr(pkg.numpy, f) for f in i.needs)]
    for _ in range(trials):
        state = Q.random_state(rng, pkg.nq, pkg.nv)
        M = (pkg.numpy.mass_matrix(state["q"]) if hasattr(pkg.numpy, "mass_matrix")
             else Q.evaluate(robot, "M", state) if robot is not None else None)
        tol = {x.function: Q.tolerance(x, M, TOL) for x in present}
        conditioned = max(tol.values(), default=TOL)
        values = {b: {x.function: getattr(mod, x.function)(*(state[a] for a in x.arguments)) for x in present}
                  for b, mod in backends.items()}
        outside = {}                                # name -> {function: value}, each computed once
        if robot is not None:
            outside["reference"] = {x.function: Q.evaluate(robot, x.key, state) for x in present}
        if oracle is not None:
            memo = _Memo(oracle)
            outside["Pinocchio"] = {x.function: x.pinocchio(memo, state) for x in present
                                    if x.pinocchio and not x.oracle_state}
            for x in present:                       # compared at a state of their own
                if x.pinocchio and x.oracle_state:
                    at = x.oracle_state(state)
                    for bname, mod in backends.items():
                        record(f"{bname} vs Pinocchio: {x.function} ({x.oracle_state.__doc__})",
                               _rel(getattr(mod, x.function)(*(at[a] for a in x.arguments)), x.pinocchio(memo, at)),
                               tol[x.function])
        for bname, mod in backends.items():
            got = values[bname]
            for identity in identities:
                record(f"{bname}: {identity.name}", _rel(*identity.sides(got, state, lambda f, *a: getattr(mod, f)(*a))),
                       conditioned if identity.conditioned else TOL)
            theirs = ({"numpy": values["numpy"]} if bname != "numpy" else {}) | outside
            for other, their in theirs.items():
                for f, value in their.items():
                    record(f"{bname} vs {other}: {f}", _rel(got[f], value), tol[f])
    ok = all(r <= 1.0 for r in ratio.values())
    width = max(len(k) for k in worst)
    lines = [f"{pkg.__name__}: {pkg.nv} joints, backends {', '.join(backends)}, {trials} random states (seed {seed})"]
    lines += [f"  {pin_note}"] if pin_note else []
    for k, v in sorted(worst.items()):
        note = "" if allowed[k] == TOL else f" (<= {allowed[k]:.1e}: 100 eps cond(M))"
        lines.append(f"  {k:<{width}}  max rel. error {v:.2e}  {'ok' if ratio[k] <= 1.0 else 'FAIL'}{note}")
    lines.append("all checks passed" if ok else f"FAILED: some errors exceed {TOL:g} (or 100 eps cond(M) for a solve with M)")
    return "\n".join(lines), ok
