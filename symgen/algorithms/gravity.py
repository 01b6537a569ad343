"""The generalized gravity vector g(q) = tau(q, 0, 0), the gravity term of eq. (1).

Body frames (the reference): RNEA with qd = qdd = 0, gravity as a fictitious base acceleration
a_0 = -a_grav (Featherstone, Table 5.1).

Ground coordinates (the paper's footnote 2, what the generated code runs): at rest every body
has the acceleration a_0, so the force on body i is I_i a_0 = [h_i x a_0; m_i a_0] with h_i = m_i c_i
its first moment about the base origin, and g_i = Phi_i . F_i with F_i the sum of those forces
over the subtree of i (composite forces, leaves first) — a 6-vector dot product per joint, no
inertia tensor, no transform. Pinocchio's computeGeneralizedGravity runs a full RNEA pass.
"""
from __future__ import annotations

from ..kinematics import base_acceleration, ground_frames
from ..model import GRAVITY
from ..spatial import inertia_times
from .rnea import rnea


def gravity(robot, q, bk, gravity=GRAVITY, offsets=False):
    """g(q) by RNEA at rest, in body frames (``offsets``: see :func:`.rnea.rnea`)."""
    zero = bk.zeros(robot.n)
    return rnea(robot, q, zero, zero, bk, gravity=gravity, offsets=offsets)


def gravity_ground(robot, q, bk, gravity=GRAVITY):
    """g(q) from composite gravity forces in ground coordinates."""
    n, parent = robot.n, robot.parent
    Phi, I = ground_frames(robot, q, bk)
    a0 = base_acceleration(robot, q, gravity, bk)                # a_0 = -a_grav
    F = [bk.bind(inertia_times(I[i], a0, bk), f"fg{i}", i) for i in range(n)]   # I_i a_0
    g = bk.zeros(n)
    for i in reversed(range(n)):                                 # composites, leaves first
        g[i] = Phi[i] @ F[i]
        p = parent[i]
        if p >= 0:
            F[p] = bk.bind(F[p] + F[i], f"Fg{p}", p)
    return g
