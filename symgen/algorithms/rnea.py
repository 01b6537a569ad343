"""Recursive Newton-Euler algorithm: tau = M(q) qdd + C(q, qd) qd + g(q).

Featherstone, Rigid Body Dynamics Algorithms, Table 5.1, in body frames, with gravity as a
fictitious base acceleration a_0 = -a_grav. With qdd = 0 and no gravity it returns C(q, qd) qd,
the paper's first check of Algorithm 1 (Section 5). A free-flyer's six bodies add no velocity
product: their columns turn with the base, so sum_k (v_base x Phi_k) qd_k = v_base x v_base = 0.

Two versions, line for line:

    rnea        body frames and 6x6 transforms (:func:`~symgen.kinematics.body_frames`), as printed
    rnea_local  body frames turned so that each joint axis is z, motions and forces as two
                3-vectors, inertias as their 10 numbers (:func:`~symgen.kinematics.local_frames`,
                Pinocchio's local convention): each transform is a rotation about z by q_i, a
                constant rotation and a constant shift
"""
from __future__ import annotations

import numpy as np

from ..kinematics import body_frames, body_inertia, inertia_apply, local_frames, plus_armature, rate_velocity, root_gravity
from ..model import GRAVITY
from ..spatial import crf, crm, cross
from .external_forces import body_forces, external_torques, minus_force


def rnea(robot, q, qd, qdd, bk, gravity=GRAVITY, offsets=False, f_ext=None):
    """Joint forces tau. ``gravity`` is the linear gravity acceleration in root coordinates.
    ``offsets``: move motions and forces across revolute joints by rotation and offset
    (:func:`_motion_down`, :func:`_force_up`) instead of the 6x6 product. ``f_ext``: external
    forces on the bodies (:mod:`.external_forces`), taken from each body's force."""
    down = _motion_down if offsets else (lambda robot, Xup, i, m, bk: Xup[i] @ m)
    up = _force_up if offsets else (lambda robot, Xup, i, f, bk: Xup[i].T @ f)
    n = robot.n
    Xup, Phi = body_frames(robot, q, bk)
    a_grav = bk.zeros(6)
    a_grav[3:] = root_gravity(robot, q, gravity, bk)
    v, a, f = [None] * n, [None] * n, [None] * n
    fe = body_forces(robot, f_ext, bk)
    for i in range(n):                                   # forward pass: v_i, a_i, f_i
        p = robot.parent[i]
        vJ = Phi[i] * qd[i]
        if p < 0:
            v[i] = vJ
            a[i] = Xup[i] @ (-a_grav) + Phi[i] * qdd[i]
        else:
            v[i] = bk.bind(down(robot, Xup, i, v[p], bk) + vJ, f"v{i}", i)
            w = rate_velocity(robot, v, Phi, qd, i, bk)         # v_i, or the joint's child velocity
            a[i] = down(robot, Xup, i, a[p], bk) + Phi[i] * qdd[i] + (0 if robot.at_rest_above(i) else crm(w, bk) @ vJ)
        v[i] = bk.bind(v[i], f"v{i}", i)
        a[i] = bk.bind(a[i], f"a{i}", i)
        I = body_inertia(robot, i, bk)
        f[i] = bk.bind(minus_force(I @ a[i] + crf(v[i], bk) @ bk.bind(I @ v[i], f"h{i}", i), fe[i]), f"f{i}", i)
    tau = bk.zeros(n)
    for i in reversed(range(n)):                         # backward pass: tau_i = Phi_i^T f_i
        tau[i] = plus_armature(robot, i, Phi[i] @ f[i], qdd[i])       # + armature_i qdd_i
        p = robot.parent[i]
        if p >= 0:
            f[p] = bk.bind(f[p] + up(robot, Xup, i, f[i], bk), f"f{p}", p)
    return tau


def _offset(robot, i):
    """r of a revolute joint's iXp = plux(E, r) (the constant offset of Xtree), or None where the
    joint moves the origin or the transform is constant."""
    if robot.bodies[i].joint_type not in ("revolute", "continuous") or robot.is_free(i) or robot.in_group(i):
        return None
    return np.array(robot.bodies[i].translation)        # Xtree = plux(E, r), r the joint's origin


def _motion_down(robot, Xup, i, m, bk, name=None):
    """iXp m, the parent's motion in body i's frame: [E w; E (v - r x w)] (see :func:`_force_up`;
    ``v - r x w`` named ``name`` when given)."""
    r = _offset(robot, i)
    if r is None:
        return Xup[i] @ m
    E = Xup[i][:3, :3]
    out = bk.zeros(6)
    out[:3] = E @ m[:3]
    lower = m[3:] - cross(bk.const(r), m[:3], bk)
    out[3:] = E @ (lower if name is None else bk.bind(lower, name, i))
    return out


def _force_up(robot, Xup, i, f, bk):
    """iXp^T f, body i's force in its parent's frame. For a revolute joint iXp = plux(E, r) with
    r the constant offset of the joint: [E^T n + r x (E^T fl); E^T fl], the rotated force named
    first, where the product of the matrices spreads each constant of r over the trig terms of E
    (the humanoid's tau: 4,220 operations -> see docs/RESULTS.md in the git history)."""
    r = _offset(robot, i)
    if r is None:
        return Xup[i].T @ f
    r, E = bk.const(r), Xup[i][:3, :3]
    g = bk.bind(E.T @ f[3:], f"fr{i}", i)
    out = bk.zeros(6)
    out[:3] = E.T @ f[:3] + cross(r, g, bk)
    out[3:] = g
    return out


def rnea_local(robot, q, qd, qdd, bk, gravity=GRAVITY, f_ext=None):
    """Joint forces tau, in turned body frames (see the module docstring); ``f_ext``: minus the
    joint forces of external forces (:func:`~.external_forces.external_torques`)."""
    n = robot.n
    L = local_frames(robot, q, bk)
    g = root_gravity(robot, q, gravity, bk)
    w, v, aw, av, fn, ff = ([None] * n for _ in range(6))
    for i in range(n):                                   # forward pass: v_i, a_i, f_i
        p = robot.parent[i]
        Sw, Sv = L[i].S
        if p < 0:
            w[i], v[i] = bk.zeros(3), bk.zeros(3)
            aw[i], av[i] = L[i].motion_down(bk.zeros(3), -g)
        else:
            w[i], v[i] = L[i].motion_down(w[p], v[p])
            aw[i], av[i] = L[i].motion_down(aw[p], av[p])
        w[i], v[i] = w[i] + Sw * qd[i], v[i] + Sv * qd[i]
        aw[i], av[i] = aw[i] + Sw * qdd[i], av[i] + Sv * qdd[i]
        if p >= 0 and not robot.is_free(i):             # v_i x vJ
            aw[i] = aw[i] + cross(w[i], Sw * qd[i], bk)
            av[i] = av[i] + cross(v[i], Sw * qd[i], bk) + cross(w[i], Sv * qd[i], bk)
        w[i], v[i] = bk.bind(w[i], f"w{i}", i), bk.bind(v[i], f"v{i}", i)
        aw[i], av[i] = bk.bind(aw[i], f"aw{i}", i), bk.bind(av[i], f"av{i}", i)
        m, h, I = L[i].inertia(body_inertia(robot, i, bk))
        kw, kv = inertia_apply(m, h, I, w[i], v[i], bk)                # momentum I v
        kw, kv = bk.bind(kw, f"kw{i}", i), bk.bind(kv, f"kv{i}", i)
        Iaw, Iav = inertia_apply(m, h, I, aw[i], av[i], bk)            # I a + v x* (I v)
        fn[i] = bk.bind(Iaw + cross(w[i], kw, bk) + cross(v[i], kv, bk), f"fn{i}", i)
        ff[i] = bk.bind(Iav + cross(w[i], kv, bk), f"ff{i}", i)
    tau = bk.zeros(n)
    for i in reversed(range(n)):                         # backward pass: tau_i = Phi_i^T f_i
        tau[i] = plus_armature(robot, i, L[i].S[0] @ fn[i] + L[i].S[1] @ ff[i], qdd[i])   # + armature_i qdd_i
        p = robot.parent[i]
        if p >= 0:
            n_up, f_up = L[i].force_up(fn[i], ff[i], f"fu{i}", i)
            fn[p] = bk.bind(fn[p] + n_up, f"fn{p}", p)
            ff[p] = bk.bind(ff[p] + f_up, f"ff{p}", p)
    return tau if f_ext is None else tau - external_torques(robot, q, f_ext, bk)
