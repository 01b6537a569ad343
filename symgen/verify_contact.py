"""``symgen verify``'s checks of a package's contact_dynamics and impulse_dynamics (the hand-written
solve over the run-time active contacts; the generated terms are registry quantities, checked with
the others): on a random active set per state (none and all among them), each backend against
Pinocchio's forwardDynamics / impulseDynamics (:mod:`symgen.oracle_contact`) within 100 eps
cond(KKT), the C against NumPy, and the impulse's defining property, the active contact points at
rest after it (restitution 0): Jc_a v+ = 0.
"""
from __future__ import annotations

import numpy as np

from . import oracle_contact as ocn


def active_set(rng, count: int, trial: int) -> np.ndarray:
    """Trial 0: none active, trial 1: all, then random 0/1."""
    if trial < 2:
        return np.full(count, trial, dtype=float)
    return rng.integers(0, 2, count).astype(float)


def kkt_tolerance(M, J, base: float = 1e-9) -> float:
    """100 eps cond([M J^T; J 0]), or ``base`` if larger."""
    m = len(J)
    K = np.block([[M, J.T], [J, np.zeros((m, m))]]) if m else M
    return max(base, 100 * np.finfo(float).eps * float(np.linalg.cond(K)))


def _rel(a, b):
    a, b = (np.concatenate([np.ravel(x) for x in y]) if isinstance(y, tuple) else np.ravel(y) for y in (a, b))
    return float(np.max(np.abs(a - b)) / max(1.0, np.max(np.abs(b)))) if b.size else 0.0


def check(pkg, backends: dict, oracle, state: dict, active, record) -> None:
    """Record ``check name -> (error, tolerance)`` through ``record(name, error, tol)``."""
    numpy = pkg.numpy
    if not (hasattr(numpy, "contact_dynamics") or hasattr(numpy, "impulse_dynamics")):
        return
    on = np.asarray(active, bool)
    q, v, tau = state["q"], state["qd"], state["tau"]
    forces = (state["f_ext"],) if getattr(pkg, "external_forces", False) else ()     # --external-forces
    J = ocn.contact_jacobian(oracle, q, on) if oracle is not None else None
    tol = kkt_tolerance(oracle.mass_matrix(q), J) if oracle is not None else 1e-9
    label = "random active sets, none and all among them"
    tau_f = tau + ocn.external_torque(oracle, q, *forces) if forces and oracle is not None else tau
    for name, expected in (("contact_dynamics", lambda: ocn.contact_dynamics(oracle, q, v, tau_f, on)),
                           ("impulse_dynamics", lambda: ocn.impulse_dynamics(oracle, q, v, on))):
        if not hasattr(numpy, name):
            continue
        args = (q, v, tau, active, *forces) if name == "contact_dynamics" else (q, v, active)
        try:
            got = {b: getattr(mod, name)(*args) for b, mod in backends.items() if hasattr(mod, name)}
        except numpy.SingularContactError:
            continue                                    # a dependent set: refused, as documented
        for b, (x, lam) in got.items():
            if b != "numpy":
                record(f"{b} vs numpy: {name}", _rel((x, lam), got["numpy"]), tol)
            if oracle is not None:
                ex, el = expected()
                record(f"{b} vs Pinocchio: {name} ({label})",
                       max(_rel(x, ex), _rel(_active_rows(pkg, lam, on), el)), tol)
            if name == "impulse_dynamics" and hasattr(numpy, "impulse_terms"):
                Jv = numpy.impulse_terms(q, x)[3]
                rows = _active_rows(pkg, Jv, on)
                record(f"{b}: impulse_dynamics leaves the active contacts at rest (Jc_a v+ = 0)",
                       float(np.max(np.abs(rows), initial=0.0)) / max(1.0, float(np.max(np.abs(v)))), tol)


def check_derivatives(pkg, backends: dict, oracle, state: dict, active, record) -> None:
    """contact_dynamics_derivatives on each backend against the NumPy one and Pinocchio's
    computeConstraintDynamicsDerivatives (a flat contact active: five-point differences of
    forwardDynamics, 1e-6, :mod:`symgen.oracle_contact_derivatives`)."""
    from . import oracle_contact_derivatives as ocd

    name = "contact_dynamics_derivatives"
    if not hasattr(pkg.numpy, name):
        return
    on = np.asarray(active, bool)
    q, v, tau = state["q"], state["qd"], state["tau"]
    forces = (state["f_ext"],) if getattr(pkg, "external_forces", False) else ()     # --external-forces
    try:
        got = {b: getattr(mod, name)(q, v, tau, active, *forces) for b, mod in backends.items() if hasattr(mod, name)}
    except pkg.numpy.SingularContactError:
        return
    flat = any(kind == "6d" for (_, kind), a in zip(pkg.contacts, on) if a)
    want, tol = None, 1e-9
    if oracle is not None:
        tau_f = tau + ocn.external_torque(oracle, q, *forces) if forces else tau
        want = (ocd.contact_dynamics_derivatives_fd if flat else ocd.contact_dynamics_derivatives)(oracle, q, v, tau_f, on)
        if forces:              # through tau + tau_ext(q): d/dq gains d/dtau d tau_ext/dq
            dext = ocn.external_torque_dq(oracle, q, *forces)
            want = (want[0] + want[2] @ dext, want[1], want[2], want[3] + want[5] @ dext, want[4], want[5])
        tol = 1e-6 if flat else max(1e-8, kkt_tolerance(oracle.mass_matrix(q), ocn.contact_jacobian(oracle, q, on)))
    rows = [r for c, a in zip(pkg.numpy._CONTACT_ROWS, on) if a for r in c]
    for b, outs in got.items():
        if b != "numpy":
            record(f"{b} vs numpy: {name}", _rel(outs, got["numpy"]), tol)
        if want is not None:
            mine = tuple(x[rows] if k >= 3 else x for k, x in enumerate(outs))
            record(f"{b} vs Pinocchio: {name} ({'differences of forwardDynamics' if flat else 'computeConstraintDynamicsDerivatives'}"
                   f", random active sets)", _rel(mine, want), tol)


def _active_rows(pkg, flat, on):
    """The entries of a flat (m,) contact-row vector on the active contacts' rows."""
    rows = pkg.numpy._CONTACT_ROWS
    return np.concatenate([np.ravel(flat)[list(r)] for r, a in zip(rows, on) if a] or [np.zeros(0)])
