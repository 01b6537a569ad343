"""The floating base's generalized speeds (``symgen build --base-velocity body|mixed|inertial``).

A free-flyer's six speeds are Pinocchio's by default (``body``): the base origin's linear velocity
and the base's angular velocity, both in the base frame, linear first. iDynTree, adam-robotics and
jaxsim default to MIXED (the base origin's velocity ṗ and the angular velocity, both in world
axes) and offer INERTIAL (the base's spatial velocity in the world frame at the world origin,
iDynTree's INERTIAL_FIXED_REPRESENTATION). With R the base's rotation (world <- base), p its
origin and [x] the cross-product matrix, the new speeds ν and the body speeds v are related by

    v = G(q) ν,   G = blockdiag(G_b, 1),
    MIXED:     G_b = [[Rᵀ, 0], [0, Rᵀ]],          G_b⁻¹ = [[R, 0], [0, R]]
    INERTIAL:  G_b = [[Rᵀ, -Rᵀ[p]], [0, Rᵀ]],     G_b⁻¹ = [[R, [p] R], [0, R]]

(ν_lin = ṗ for MIXED, ṗ + p × ω_world for INERTIAL; ν_ang = ω_world = R ω for both), and
Ġ follows from Ṙᵀ = -Rᵀ[ν_ang] and ṗ = ν_lin - p × ν_ang (INERTIAL; ṗ = ν_lin for MIXED).

Every quantity in the new speeds is the body one seen through this embedding (seed 002 Sec. V:
a change of generalized speeds v = G ν; seed 000 Sec. 3.3), the same rules as a loop's G(q)
(:mod:`symgen.closed`): M̄ = GᵀMG, C̄ = GᵀC(q, Gν)G + GᵀMĠ (Christoffel-consistent in ν:
Ṁ̄ = C̄ + C̄ᵀ), Ṁ̄ = GᵀṀG + ĠᵀMG + GᵀMĠ, Γ̄ = Γ contracted with G plus GᵀMĠ(e_k) in slice k,
τ̄ = Gᵀτ(q, Gν, Gν̇ + Ġν), ḡ = Gᵀg, Ȳ = GᵀY, J̄ = J G; forward dynamics keeps the tree's ABA:
ν̇ = G⁻¹(FD(q, Gν, G⁻ᵀτ̄) - Ġν), and M̄⁻¹ = G⁻¹M⁻¹G⁻ᵀ. G is the identity off the base's 6x6
block, so each product touches the base's rows or columns only (a few operations, not an n³
product). The same code runs on numbers and on symbols (``bk``).

The frame acceleration bias and J̇ (in every reference) add J Ġ ν and J Ġ (J in that reference),
the centroidal bias A_G Ġ ν, Cᵀν adds Ġᵀ M v (its regressor Ġᵀ Y_p, M v = Y_p θ). The operational-space quantities do not depend on
the choice of speeds, but for the dynamically consistent inverse: with J̄ = J G and M̄ = GᵀMG,
Λ = (J̄ M̄⁻¹ J̄ᵀ)⁻¹ = (J M⁻¹ Jᵀ)⁻¹, the bias Λ(J̄ M̄⁻¹ b̄ − J̄̇ν) = Λ(J M⁻¹ b − J̇ v), and
M̄⁻¹ J̄ᵀ Λ = G⁻¹ (M⁻¹ Jᵀ Λ), whose transpose maps τ̄ to the same force as the body one maps
τ = G⁻ᵀ τ̄: each is the body sweep's at v = Gν, the inverse's rows multiplied by G⁻¹.
The ID derivatives take the chain rule through G(q) and Ġ(q, ν) (the derivatives of G's base
block along the free-flyer's tangent, :func:`tangent_rates`; q moves along the new speeds'
tangent, body tangent G δν), the FD derivatives are -M̄⁻¹ times them at ν̇ = FD. What needs
whole_body_terms is M̄, C̄ν + ḡ, ḡ, J̄c, the drift with Jc Ġ ν, Ā_G and its drift, the CoM;
contact_terms and impulse_terms are the factors of M̄ with J̄c (:func:`_contact_terms`). What needs
more than these rules is not generated for a non-body package yet (not in :data:`SUPPORTED`;
asked for by name it is a one-line error): contact_partials (the contact dynamics' derivatives)
and, on a free-flyer with dampers of its own, the FD derivatives with --passive.
"""
from __future__ import annotations

from dataclasses import replace

import numpy as np

from .backend import is_zero
from .errors import OptionError

#: the choices of ``--base-velocity`` (body: Pinocchio's free-flyer speeds, the default)
CHOICES = ("body", "mixed", "inertial")

#: the quantity keys a package in the new speeds has (the rest: not generated in them yet)
SUPPORTED = frozenset({
    "M", "Mdot", "C", "Gamma", "tau", "g", "tau_sl", "Y", "qdd", "Minv", "MCg", "oMf", "J", "tau_p",
    "com", "Jcom", "Ag", "Ig", "hg", "vf", "Yts", "p", "CTv", "T", "V", "Y_p", "Y_g", "Y_T", "Y_V",
    "Y_Vdot", "J_local", "J_world", "vf_local", "vf_world", "af", "dJ", "dhg", "dtau", "dqdd",
    "af_local", "af_world", "dJ_local", "dJ_world", "Lambda", "Jbar", "mu_p", "f_tau",
    "dvf", "daf", "dvf_local", "daf_local", "dvf_world", "daf_world", "Y_c", "whole_body_terms",
    "contact_terms", "impulse_terms"})


def unsupported(keys) -> frozenset:
    """The keys of ``keys`` not generated in MIXED or INERTIAL speeds yet."""
    return frozenset(k for k in keys if k not in SUPPORTED)


def build_notes(source, robot, choice: str, wanted, default: bool, function_of) -> list[str]:
    """``symgen build --base-velocity CHOICE``: a one-line OptionError on a robot without a floating
    base; else the note naming the functions (``function_of(key)``) a default build leaves out in
    these speeds."""
    if not robot.floating_base:
        raise OptionError(f"{source}: --base-velocity {choice} needs a floating base, and robot {robot.name!r} "
                          f"has none (add --floating-base)")
    left = unsupported(wanted) if default else ()
    return [f"symgen: note: --base-velocity {choice}: not generated in these speeds yet: "
            f"{', '.join(function_of(k) for k in wanted if k in left)}"] if left else []


def check_choice(value: str) -> str:
    if value not in CHOICES:
        raise OptionError(f"--base-velocity: {value!r} is not one of {', '.join(CHOICES)}")
    return value


# ---------------------------------------------------------------- the base block of G, G⁻¹, Ġ

def _placement(robot, q, bk):
    from .kinematics import base_placement

    R, p = base_placement(robot, q, bk)
    return R, p


def embedding(robot, q, kind: str, bk):
    """(G_b, G_b⁻¹): the base's 6x6 blocks of G and G⁻¹ at q (module docstring)."""
    from .spatial import skew

    R, p = _placement(robot, q, bk)
    Gb, Gi = bk.zeros((6, 6)), bk.zeros((6, 6))
    Gb[:3, :3] = Gb[3:, 3:] = R.T
    Gi[:3, :3] = Gi[3:, 3:] = R
    if kind == "inertial":
        P = skew(p, bk)
        Gb[:3, 3:] = bk.bind(-(R.T @ P), "Gbp")
        Gi[:3, 3:] = bk.bind(P @ R, "Gip")
    return Gb, Gi


def embedding_rate(robot, q, nu, kind: str, bk):
    """Ġ_b at (q, ν): the base block of Ġ (linear in ν)."""
    from .spatial import cross, skew

    R, p = _placement(robot, q, bk)
    lin, ang = nu[:3], nu[3:6]
    Rd = bk.bind(-(R.T @ skew(ang, bk)), "Rdt")          # d/dt Rᵀ = -Rᵀ [ω_world]
    Gd = bk.zeros((6, 6))
    Gd[:3, :3] = Gd[3:, 3:] = Rd
    if kind == "inertial":
        pd = lin - cross(p, ang, bk)                      # ṗ = ν_lin - p × ν_ang
        Gd[:3, 3:] = bk.bind(-(Rd @ skew(p, bk)) - R.T @ skew(pd, bk), "Gdp")
    return Gd


def tangent_rates(robot, q, nu, k: int, kind: str, bk):
    """(D_k G_b, D_k Ġ_b(ν)): the derivatives of the base blocks of G and Ġ along the body
    tangent e_k of the free-flyer (k < 6; Pinocchio's q ⊕ ε e_k: R ← R exp(ε [δω]), p ← p + ε R δp),
    from D Rᵀ = -[δω] Rᵀ, D p = R δp and, with INERTIAL, D ṗ = -(R δp) × ν_ang."""
    from .spatial import skew

    R, p = _placement(robot, q, bk)
    ang = nu[3:6]
    e = np.zeros(3)
    e[k % 3] = 1.0
    E = skew(e, bk)
    dG, dGd = bk.zeros((6, 6)), bk.zeros((6, 6))
    if k >= 3:                                            # a turn: Rᵀ and Ṙᵀ = -Rᵀ [ν_ang] change
        dRt = -(E @ R.T)
        dRd = E @ R.T @ skew(ang, bk)
        dG[:3, :3] = dG[3:, 3:] = dRt
        dGd[:3, :3] = dGd[3:, 3:] = dRd
    if kind == "inertial":
        from .spatial import cross

        Rd = -(R.T @ skew(ang, bk))
        pd = nu[:3] - cross(p, ang, bk)
        if k >= 3:                                        # -Rᵀ[p] and -Ṙᵀ[p] - Rᵀ[ṗ], p and ṗ fixed
            dG[:3, 3:] = -(dRt @ skew(p, bk))
            dGd[:3, 3:] = -(dRd @ skew(p, bk)) - dRt @ skew(pd, bk)
        else:                                             # a shift: D p = R e, D ṗ = -(R e) × ν_ang
            dp = R[:, k]
            dG[:3, 3:] = -(R.T @ skew(dp, bk))
            dGd[:3, 3:] = -(Rd @ skew(dp, bk)) + R.T @ skew(cross(dp, ang, bk), bk)
    return dG, dGd


def _left(B, x):
    """blockdiag(B, 1) x along x's first axis (B 6x6)."""
    out = np.array(x, dtype=x.dtype, copy=True)
    head = x[:6].reshape(6, -1)
    out[:6] = (B @ head).reshape(x[:6].shape)
    return out


def _right(X, B):
    """X blockdiag(B, 1) along X's last axis."""
    out = np.array(X, dtype=X.dtype, copy=True)
    out[..., :6] = np.matmul(X[..., :6], B)
    return out


def speeds_to_body(Gb, x):
    """G x: body speeds from the new ones (also G ν̇ and the like)."""
    return _left(Gb, x)


def forces_to_new(Gb, x):
    """Gᵀ x along x's first axis."""
    return _left(Gb.T, x)


def _matrix(Gb, X, bk, name, symmetric=False):
    """Gᵀ X G, Gᵀ X named before G multiplies it (each of its entries is read by six), but for a
    symmetric X (M, Mdot: their printed triangle needs fewer of those entries unnamed; solo12 in
    MIXED speeds M 1,771 operations against 1,909 named, Mdot 8,821 against 9,053)."""
    GtX = _left(Gb.T, X)
    return _right(GtX if symmetric else bk.bind(GtX, name), Gb)


def _base_columns(X, Bd, bk):
    """X Ġ (Ġ zero off its 6x6 base block Bd): X's base columns times Bd, 0 elsewhere."""
    out = bk.zeros(X.shape)
    out[..., :6] = np.matmul(X[..., :6], Bd)
    return out


# ---------------------------------------------------------------- the registry's runner

def run_rebased(sweep, robot, args: dict, bk, opts, rules: dict, run_full, outputs: dict) -> dict:
    """``sweep`` in the speeds ``opts.base_velocity`` of the free-flyer ``robot``: the body sweep
    run at (q, Gν, Gν̇ + Ġν, G⁻ᵀτ̄) and its outputs mapped by each output's rule (``rules``:
    ``{output name: rule}``; ``outputs``: per quantity key of the sweep, its output names).
    ``run_full(sweep or its name, robot, args, bk, opts)``: the registry's run, in body speeds."""
    kind = opts.base_velocity
    body = replace(opts, base_velocity="body")
    mine = [k for k in outputs if k not in SUPPORTED]
    if mine and len(mine) == len(outputs):
        raise OptionError(f"--base-velocity {kind}: {', '.join(mine)} not generated in these speeds yet "
                          f"(robot {robot.name!r}; docs/guide/building.md)")
    left_out = {name for k in mine for name in outputs[k]}
    q = args["q"]
    Gb, Gi = embedding(robot, q, kind, bk)
    nu = args.get("qd")
    Gd = embedding_rate(robot, q, nu, kind, bk) if nu is not None else None
    fa = dict(args)
    for name in ("qd", "qd_r"):
        if name in args:
            fa[name] = bk.bind(speeds_to_body(Gb, args[name]), f"Gb{name}")
    if "qdd" in args:
        fa["qdd"] = bk.bind(speeds_to_body(Gb, args["qdd"]) + _pad(Gd @ nu[:6], len(nu), bk), "Gbqdd")
    if "qdd_r" in args:
        fa["qdd_r"] = bk.bind(speeds_to_body(Gb, args["qdd_r"]) + _pad(Gd @ args["qd_r"][:6], len(nu), bk), "Gbqdd_r")
    if "tau" in args:                                     # τ = G⁻ᵀ τ̄: the body forces dual to Gν
        fa["tau"] = bk.bind(_left(Gi.T, args["tau"]), "Gbtau")
    if sweep.name in ("forward_dynamics", "mass_matrix_inverse"):
        values = run_full(sweep, robot, fa, bk, body)
        if sweep.name == "forward_dynamics":              # ν̇ = G⁻¹(v̇ - Ġν)
            a = values["qdd"] - _pad(Gd @ nu[:6], len(nu), bk)
            return {"qdd": _left(Gi, a)}
        return {"Minv": _right(_left(Gi, values["Minv"]), Gi.T)}
    if sweep.name == "id_derivatives":
        return _id_derivatives(sweep, robot, args, fa, Gb, Gd, kind, bk, body, run_full)
    if sweep.name == "fd_derivatives":
        return _fd_derivatives(robot, args, fa, Gb, Gi, Gd, kind, bk, body, run_full)
    if sweep.name in ("frame_velocity_derivatives", "frame_acceleration_derivatives"):
        return _frame_derivatives(sweep, robot, args, fa, Gb, Gd, kind, bk, body, run_full)
    if sweep.name in ("contact_terms", "impulse_terms"):
        return _contact_terms(sweep, robot, args, fa, Gb, Gd, bk, body)
    if "solve" in rules.values():
        raise OptionError(f"--base-velocity {kind}: sweep {sweep.name!r} is not generated in these speeds yet")
    values = run_full(sweep, robot, fa, bk, body)
    out, M = {}, None
    for name, value in values.items():
        if name in left_out:
            continue
        rule = rules.get(name, "none")
        if rule == "none":
            out[name] = value
            if name in ("af", "af_local", "af_world"):     # at nu_dot = 0 the body speeds move: v_dot = Gdot nu
                J = _jacobian(robot, fa, bk, body, run_full, name[2:])
                out[name] = value + np.matmul(J[..., :6], Gd @ nu[:6])
            elif name == "Jbar":                          # M̄⁻¹ J̄ᵀ Λ = G⁻¹ M⁻¹ Jᵀ Λ (Λ, μ + p, F: invariant)
                out[name] = bk.zeros(value.shape)
                for f in range(value.shape[0]):
                    out[name][f] = _left(Gi, value[f])
            elif name == "dhg":                           # h_G = A_G v: its rate adds A_G Gdot nu
                Ag = values["Ag"] if "Ag" in values else _centroidal_map(robot, fa, bk, body, run_full)
                out[name] = value + Ag[:, :6] @ (Gd @ nu[:6])
            elif name == "dJv":                           # the contacts' drift, as af's: + Jc Gdot nu
                out[name] = value + np.matmul(values["Jc"][..., :6], Gd @ nu[:6])
        elif rule in ("vector", "rows"):
            out[name] = forces_to_new(Gb, value)
            if name == "CTv":                             # C̄ᵀν = Gᵀ Cᵀ v + Ġᵀ M v, M v = p
                out[name] = out[name] + _pad(Gd.T @ values["p"][:6], len(nu), bk)
            elif name == "nle":                           # C̄ν + ḡ = Gᵀ(C v + g) + Gᵀ M Ġ ν
                out[name] = out[name] + forces_to_new(Gb, _mass(values, robot, fa, bk, body) @ _pad(Gd @ nu[:6], len(nu), bk))
            elif name == "Y_c":                           # its regressor: Gᵀ Y_c + Ġᵀ Y_p (M v = Y_p θ)
                Yp = run_full("momentum_regressor", robot, {"q": fa["q"], "qd": fa["qd"]}, bk, body)["Y_p"]
                rows = bk.zeros(value.shape)
                rows[:6] = Gd.T @ Yp[:6]
                out[name] = out[name] + rows
        elif rule == "columns":
            out[name] = _right(value, Gb)
            if name in ("dJ", "dJ_local", "dJ_world"):     # d/dt (J G) = J_dot G + J Gdot
                out[name] = out[name] + _base_columns(_jacobian(robot, fa, bk, body, run_full, name[2:]), Gd, bk)
        elif rule == "matrix":
            out[name] = _matrix(Gb, value, bk, f"GT{name}", symmetric=name in ("M", "Mdot"))
            if name in ("C", "Mdot"):
                M = M if M is not None else _mass(values, robot, fa, bk, body)
                MGd = forces_to_new(Gb, _base_columns(M, Gd, bk))
                out[name] = out[name] + (MGd if name == "C" else MGd + MGd.T)
        elif rule == "christoffel":
            out[name] = _christoffel(value, Gb, robot, q, kind, fa, bk, body)
        else:
            raise OptionError(f"--base-velocity {kind}: output {name!r} of sweep {sweep.name!r} has no rule")
    return out


def _jacobian(robot, fa, bk, opts, run_full, suffix=""):
    """The body speeds' frame Jacobians at q: LOCAL_WORLD_ALIGNED from the frames sweep (suffix
    ""), "_local" or "_world" from the frame references sweep."""
    if not suffix:
        return run_full("frames", robot, {"q": fa["q"]}, bk, opts)["J"]
    return run_full("frame_references", robot, {"q": fa["q"]}, bk, opts)[f"J{suffix}"]


def _centroidal_map(robot, fa, bk, opts, run_full):
    """The body speeds' A_G at q, from the centroidal sweep."""
    args = {"q": fa["q"], **({"params": fa["params"]} if "params" in fa else {})}
    return run_full("centroidal", robot, args, bk, opts)["Ag"]


def _contact_terms(sweep, robot, args, fa, Gb, Gd, bk, opts):
    """contact_terms / impulse_terms from the new speeds' own M̄ = GᵀMG (it keeps the tree's
    sparsity: G changes the base's rows and columns only, ancestors of every joint), contact rows
    J̄c = Jc G with their drift γ + Jc Ġν, and τ̄ − b̄, b̄ = Gᵀ(b + MĠν): the package's run-time solves
    then give ν̇ (and the same λ) as they are."""
    from .algorithms.contact import contact_rows, factored_terms
    from .algorithms.rnea import rnea
    from .quantities.contact import contacts_of

    q, nu, n = args["q"], args["qd"], len(args["qd"])
    frames, kinds = zip(*contacts_of(robot, opts))
    M = _mass({}, robot, fa, bk, opts)
    Gdnu = _pad(Gd @ nu[:6], n, bk)

    def rows():
        Jc, gamma = contact_rows(robot, q, fa["qd"], frames, kinds, bk)
        return _right(Jc, Gb), gamma + Jc @ Gdnu

    def rhs():
        b = rnea(robot, q, fa["qd"], bk.zeros(n), bk, gravity=opts.gravity, f_ext=fa.get("f_ext"))
        return args["tau"] - forces_to_new(Gb, b + M @ Gdnu)
    return factored_terms(_matrix(Gb, M, bk, "GTMc", symmetric=True), rows, robot.parent, bk, qd=nu,
                          rhs=None if sweep.name == "impulse_terms" else rhs)


def _tangent_terms(robot, q, nu, nud, Gd, kind, bk, tau=None):
    """(V, A, W, T): the derivatives of the body speeds Gν and accelerations Gν̇ + Ġν along the
    body tangent e_k of the base (columns k < 6, :func:`tangent_rates`; A None without ν̇),
    W = ∂(Ġ(ν)ν)/∂ν = Ġ(e_k)ν + Ġ(ν)e_k and, given ``tau``, T = D_k Gᵀ τ (else None). Each named
    before it is multiplied in: every entry of a mapped derivative reads them (unnamed, arm4's
    inertial ID derivatives had 161k operations)."""
    V, A, W, T = (bk.zeros((6, 6)) for _ in range(4))
    for k in range(6):
        dG, dGd = tangent_rates(robot, q, nu, k, kind, bk)
        V[:, k] = dG @ nu[:6]
        if nud is not None:
            A[:, k] = dG @ nud[:6] + dGd @ nu[:6]
        if tau is not None:
            T[:, k] = dG.T @ tau[:6]
        e = np.zeros(6)
        e[k] = 1.0
        W[:, k] = embedding_rate(robot, q, e, kind, bk) @ nu[:6]
    return (bk.bind(V, "dGnu"), bk.bind(A, "dGnud") if nud is not None else None,
            bk.bind(W + Gd, "dGdnu"), bk.bind(T, "dGtau") if tau is not None else None)


def _frame_derivatives(sweep, robot, args, fa, Gb, Gd, kind, bk, body, run_full):
    """The frame velocity (and spatial acceleration) derivatives in the new speeds, in every
    reference: v̄(q, ν) = v(q, Gν), ā(q, ν, ν̇) = a(q, Gν, Gν̇ + Ġν), so ∂v̄/∂ν = ∂v/∂v_b G,
    ∂ā/∂ν̇ = ∂a/∂a_b G, ∂ā/∂ν = ∂a/∂v_b G + ∂a/∂a_b W and, q moved along the new speeds' tangent
    (body tangent G δν), ∂v̄/∂q = (∂v/∂q + ∂v/∂v_b V) G, ∂ā/∂q = (∂a/∂q + ∂a/∂v_b V + ∂a/∂a_b A) G
    (:func:`_tangent_terms`). In the acceleration sweep ∂v/∂v_b = ∂a/∂a_b (the frame's Jacobian)."""
    values = run_full(sweep, robot, fa, bk, body)
    V, A, W, _ = _tangent_terms(robot, args["q"], args["qd"], args.get("qdd"), Gd, kind, bk)
    out = {}
    for name, value in values.items():
        suffix = next((x for x in ("_local", "_world") if name.endswith(x)), "")
        base = name[:len(name) - len(suffix)]
        jac = values[f"dv_dqd{suffix}"] if f"dv_dqd{suffix}" in values else values[f"da_dqdd{suffix}"]
        if base in ("dv_dqd", "da_dqdd"):
            out[name] = _right(value, Gb)
        elif base == "dv_dq":                         # (the sum named: G's columns read it six times)
            out[name] = _right(bk.bind(value + _base_columns(jac, V, bk), f"{name}_b"), Gb)
        elif base == "da_dq":
            out[name] = _right(bk.bind(value + _base_columns(values[f"da_dqd{suffix}"], V, bk)
                                       + _base_columns(jac, A, bk), f"{name}_b"), Gb)
        elif base == "da_dqd":
            out[name] = _right(value, Gb) + _base_columns(jac, W, bk)
        else:
            raise OptionError(f"--base-velocity {kind}: output {name!r} of sweep {sweep.name!r} has no rule")
    return out


def _id_derivatives(sweep, robot, args, fa, Gb, Gd, kind, bk, body, run_full, values=None):
    """(∂τ̄/∂q, ∂τ̄/∂ν) of τ̄ = Gᵀ τ(q, Gν, Gν̇ + Ġν), q moved along the new speeds' tangent:
    X G with X = Gᵀ(∂τ/∂q + ∂τ/∂v V + M A) + T, V, A and T the derivatives of Gν, Gν̇ + Ġν and Gᵀ
    along the body tangent (:func:`tangent_rates`, base columns only), and Gᵀ(∂τ/∂v G + M W),
    W = ∂(Ġ(ν)ν)/∂ν."""
    q, nu, nud = args["q"], args["qd"], args["qdd"]
    values = values or run_full(sweep, robot, fa, bk, body)
    dq, dv = values["dtau_dq"], values["dtau_dqd"]
    tau = run_full("rnea", robot, {k: fa[k] for k in ("q", "qd", "qdd", "f_ext", "params") if k in fa},
                   bk, body)["tau"]
    M = _mass({}, robot, fa, bk, body)
    V, A, W, T = _tangent_terms(robot, q, nu, nud, Gd, kind, bk, tau)
    X = dq + _base_columns(dv, V, bk) + _base_columns(M, A, bk)
    X = bk.bind(forces_to_new(Gb, X), "GTX")
    X[:6, :6] = X[:6, :6] + T
    return {"dtau_dq": bk.bind(_right(X, Gb), "dtaubar_dq"),
            "dtau_dqd": bk.bind(forces_to_new(Gb, _right(dv, Gb) + _base_columns(M, W, bk)), "dtaubar_dnu")}


def _fd_derivatives(robot, args, fa, Gb, Gi, Gd, kind, bk, body, run_full):
    """(∂ν̇/∂q, ∂ν̇/∂ν) = -M̄⁻¹ (∂τ̄/∂q, ∂τ̄/∂ν) at ν̇ = FD(q, ν, τ̄) (FD inverts ID in any speeds);
    with --passive, of τ̄ − τ̄_p: τ̄_p = Gᵀτ_p(q, Gν) is τ_p when the base has no damper (G is the
    identity on the joints, τ_p reads no base coordinate), so its Jacobians are the joints' constant
    diagonals as in body speeds (a damped free-flyer: :func:`passive_base`, left out)."""
    if passive_base(robot, body.passive):
        raise OptionError(f"--base-velocity {kind}: forward_dynamics_derivatives with a damped free-flyer is not "
                          f"generated in these speeds yet")
    n = len(args["qd"])
    fd = run_full("forward_dynamics", robot, fa, bk, body)
    nud = bk.bind(_left(Gi, fd["qdd"] - _pad(Gd @ args["qd"][:6], n, bk)), "nudot")
    at = {**args, "qdd": nud}
    at.pop("tau", None)
    fa2 = {k: v for k, v in fa.items() if k != "tau"}
    fa2["qdd"] = bk.bind(speeds_to_body(Gb, nud) + _pad(Gd @ args["qd"][:6], n, bk), "Gbnudot")
    d = _id_derivatives("id_derivatives", robot, at, fa2, Gb, Gd, kind, bk, body, run_full)
    from .algorithms.passive import add_passive_jacobians

    d["dtau_dq"], d["dtau_dqd"] = add_passive_jacobians(robot, d["dtau_dq"], d["dtau_dqd"], body.passive)
    Minv = run_full("mass_matrix_inverse", robot, {"q": fa["q"], **({"params": fa["params"]} if "params" in fa
                                                                          else {})}, bk, body)["Minv"]
    Minv = bk.bind(_right(_left(Gi, Minv), Gi.T), "Mbarinv")
    return {"dqdd_dq": -(Minv @ d["dtau_dq"]), "dqdd_dqd": -(Minv @ d["dtau_dqd"])}


def passive_base(robot, passive: bool) -> bool:
    """Whether a build with ``passive`` has a damper on the free-flyer's own speeds (its passive
    force then depends on the choice of speeds: not generated in MIXED/INERTIAL yet)."""
    return bool(passive and robot.has_passive and any(robot.damping_vector[:6]))


def _pad(x6, n, bk):
    out = bk.zeros(n)
    out[:6] = x6
    return out


def _mass(values, robot, fa, bk, opts):
    """The body speeds' M: the sweep's own when it yields one, else CRBA's."""
    if "M" in values:
        return values["M"]
    from .algorithms.crba import crba, crba_ground
    from .kinematics import with_parameters

    tree = with_parameters(robot, fa.get("params"))
    return (crba_ground if opts.frame == "ground" else crba)(tree, fa["q"], bk)


def _christoffel(Gamma, Gb, robot, q, kind, fa, bk, opts):
    """Γ̄[:, :, k] = Gᵀ (Σ_c Γ[:, :, c] G[c, k]) G + Gᵀ M Ġ(e_k)."""
    n = Gamma.shape[0]
    M = _mass({}, robot, fa, bk, opts)
    out = bk.zeros((n, n, n))
    for k in range(n):
        if k < 6:
            Gk = bk.zeros((n, n))
            for c in range(6):
                if not is_zero(Gb[c, k]):
                    Gk = Gk + Gamma[:, :, c] * Gb[c, k]
            Gk = bk.bind(Gk, f"GammaG{k}")
            e = np.zeros(6)
            e[k] = 1.0
            Gd = embedding_rate(robot, q, bk.const(e) if bk.name != "numeric" else e, kind, bk)
            out[:, :, k] = _matrix(Gb, Gk, bk, f"GTGammaG{k}") + forces_to_new(Gb, _base_columns(M, Gd, bk))
        else:
            out[:, :, k] = _matrix(Gb, Gamma[:, :, k], bk, f"GTGamma{k}")
    return out
