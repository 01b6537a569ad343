"""``symgen verify``: check a generated package on random states (paper, Section 5)."""
from __future__ import annotations

import numpy as np

TOL = 1e-9
from ._common import FUNCTION_INPUTS

FUNCTIONS = tuple(FUNCTION_INPUTS)


def _args(function, q, qd, qdd):
    state = {"q": q, "qd": qd, "qdd": qdd}
    return tuple(state[name] for name in FUNCTION_INPUTS[function])


def reference(robot, function, q, qd, qdd):
    """The numeric reference (symgen's own algorithms on floats) for a generated function."""
    import symgen

    return {"mass_matrix": lambda: symgen.mass_matrix(robot, q),
            "mass_matrix_dot": lambda: symgen.mass_matrix_dot(robot, q, qd),
            "coriolis_matrix": lambda: symgen.coriolis_matrix(robot, q, qd),
            "christoffel": lambda: symgen.christoffel(robot, q),
            "inverse_dynamics": lambda: symgen.inverse_dynamics(robot, q, qd, qdd)}[function]()


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
    from .oracle import PinOracle
    from .urdf import urdf_string

    try:
        model = pinocchio.buildModelFromXML(urdf_string(robot))
        return PinOracle(robot, model, pinocchio), f"Pinocchio {pinocchio.__version__}, on symgen's rewrite of the URDF"
    except Exception as exc:                    # urdfdom's and the joint matching's refusals alike
        return None, f"Pinocchio: skipped, {exc}".splitlines()[0]


def _pinocchio_values(oracle, functions, q, qd, qdd) -> dict:
    """Pinocchio's value of each generated function it has a counterpart for, at one state."""
    out = {}
    if "mass_matrix" in functions:
        out["mass_matrix"] = oracle.mass_matrix(q)
    if "coriolis_matrix" in functions or "mass_matrix_dot" in functions:
        C = oracle.coriolis(q, qd)
        out["coriolis_matrix"], out["mass_matrix_dot"] = C, C + C.T             # eq. (2)
    if "christoffel" in functions:
        out["christoffel"] = oracle.christoffel(q)
    if "inverse_dynamics" in functions:
        out["inverse_dynamics"] = oracle.inverse_dynamics(q, qd, qdd)
    return {f: v for f, v in out.items() if f in functions}


def verify_package(path, trials=20, seed=0, urdf=None, floating_base=False):
    """Return (report text, ok). Checks, per random state (q in [0, 2pi], qd in [0, 10]):
    Mdot = C + C^T, C = sum_k Gamma[:, :, k] qd_k, C qd + g = tau(q, qd, 0) - with g from tau(q, 0, 0),
    M symmetric, every backend equal to NumPy; when a URDF is given, the numeric reference and,
    if it is installed, Pinocchio (M, C, Gamma as C(q, e_k), tau)."""
    import symgen
    from .codegen.build import import_package

    pkg = import_package(path)
    n = pkg.nv
    robot = symgen.load_urdf(urdf, floating_base=floating_base) if urdf else None
    oracle, pin_note = _pinocchio(robot) if urdf else (None, None)
    rng = np.random.default_rng(seed)
    worst: dict[str, float] = {}

    def record(name, value):
        worst[name] = max(worst.get(name, 0.0), value)

    backends = {"numpy": pkg.numpy} | ({"c": pkg.c} if pkg.c is not None else {})
    functions = [f for f in FUNCTIONS if hasattr(pkg.numpy, f)]
    zero = np.zeros(n)
    for _ in range(trials):
        q, qd, qdd = rng.uniform(0, 2 * np.pi, n), rng.uniform(0, 10, n), rng.uniform(-10, 10, n)
        values = {b: {f: getattr(mod, f)(*_args(f, q, qd, qdd)) for f in functions} for b, mod in backends.items()}
        outside = {}                                # name -> {function: value}, each computed once
        if robot is not None:
            outside["reference"] = {f: reference(robot, f, q, qd, qdd) for f in functions}
        if oracle is not None:
            outside["Pinocchio"] = _pinocchio_values(oracle, functions, q, qd, qdd)
        for bname, mod in backends.items():
            got = values[bname]
            M, C = got.get("mass_matrix"), got.get("coriolis_matrix")
            if M is not None:
                record(f"{bname}: M symmetric", _rel(M, M.T))
            if C is not None and "mass_matrix_dot" in got:
                record(f"{bname}: Mdot = C + C^T", _rel(got["mass_matrix_dot"], C + C.T))
            if C is not None and "christoffel" in got:
                record(f"{bname}: C = Gamma qd", _rel(np.einsum("ijk,k->ij", got["christoffel"], qd), C))
            if C is not None and "inverse_dynamics" in got:
                g = mod.inverse_dynamics(q, zero, zero)
                record(f"{bname}: C qd = RNEA(q, qd, 0) - g", _rel(C @ qd, mod.inverse_dynamics(q, qd, zero) - g))
            theirs = ({"numpy": values["numpy"]} if bname != "numpy" else {}) | outside
            for other, their in theirs.items():
                for f, value in their.items():
                    record(f"{bname} vs {other}: {f}", _rel(got[f], value))
    ok = all(v <= TOL for v in worst.values())
    width = max(len(k) for k in worst)
    lines = [f"{pkg.__name__}: {n} joints, backends {', '.join(backends)}, {trials} random states (seed {seed})"]
    lines += [f"  {pin_note}"] if pin_note else []
    lines += [f"  {k:<{width}}  max rel. error {v:.2e}  {'ok' if v <= TOL else 'FAIL'}" for k, v in sorted(worst.items())]
    lines.append("all checks passed" if ok else f"FAILED: some errors exceed {TOL:g}")
    return "\n".join(lines), ok
