"""Spatial (6D) algebra in Featherstone / spatial_v2 conventions, angular part first.

Every function works on NumPy arrays of float64 or of SymPy objects (``dtype=object``): they use
only ``+``, ``*``, ``@``, ``.T`` and indexing, so one implementation serves numbers and symbols.
Functions that build a new array take the backend ``bk`` (numbers by default).

    skew(p)      3x3, skew(p) @ x == p x x
    cross(a, b)  a x b of 3-vectors
    crm(v)       (v x)  motion cross product  [[S(w), 0], [S(vl), S(w)]]
    crf(v)       (v x*) force cross product   -crm(v).T
    icrf(f)      (f x*) with icrf(f) @ v == crf(v) @ f
    plux(E, r)   Pluecker motion transform [[E, 0], [-E S(r), E]] (parent -> child coordinates)
    mcI(m, c, I) spatial inertia about the body origin from mass, CoM and inertia about the CoM
    factor_B(v, I)  body-level Coriolis factorization B(v, I) of the paper's eq. (10)
    cross_motion(u, x), cross_force(x, f), inertia_times(I, x), inertia_rate(u, I)
                 the same products on the structure of their operands (ground-frame algorithms)
"""
from __future__ import annotations

import math

import numpy as np

from .backend import NUMERIC


def skew(p, bk=NUMERIC):
    S = bk.zeros((3, 3))
    S[0, 1], S[0, 2] = -p[2], p[1]
    S[1, 0], S[1, 2] = p[2], -p[0]
    S[2, 0], S[2, 1] = -p[1], p[0]
    return S


def cross(a, b, bk=NUMERIC):
    """a x b of 3-vectors."""
    out = bk.zeros(3)
    out[0] = a[1] * b[2] - a[2] * b[1]
    out[1] = a[2] * b[0] - a[0] * b[2]
    out[2] = a[0] * b[1] - a[1] * b[0]
    return out


def rotate_symmetric(R, A, bk, name, body=None):
    """R A R^T for a symmetric 3x3 A, computed on the upper triangle and mirrored, so that a
    symbolic run names each distinct entry once.

    A constant A (a body's inertia about its CoM, folded into the code) is split at build time
    as A = lam 1 + sum_k u_k u_k^T (lam its smallest eigenvalue, u_k the other eigenvectors
    scaled by sqrt(eigenvalue - lam): two rank-one terms at most), so R A R^T = lam 1 +
    sum_k (R u_k)(R u_k)^T: 2 matrix-vector products and 6 entries of 3 or 4 operations (51 in
    all) instead of R A (45) and 6 dot products (30)."""
    split = _constant_split(A)
    if split is not None:
        lam, us = split
        r = [bk.bind(R @ bk.const(u), f"{name}u{k}", body) for k, u in enumerate(us)]
        out = bk.zeros((3, 3))
        for a in range(3):
            for b in range(a, 3):
                e = sum((x[a] * x[b] for x in r), bk.number(lam) if a == b else bk.number(0.0))
                out[a, b] = out[b, a] = e
        return bk.bind(out, name, body)
    RA = bk.bind(R @ A, name + "R", body)
    out = bk.zeros((3, 3))
    for a in range(3):
        for b in range(a, 3):
            out[a, b] = out[b, a] = RA[a] @ R[b]
    return bk.bind(out, name, body)


def _constant_split(A):
    """(lam, [u_k]) with A = lam 1 + sum_k u_k u_k^T for a symmetric 3x3 A of numbers (SymPy
    numbers or floats), or None when an entry is a symbol. A diagonal A splits exactly (u_k
    along the axes); otherwise by its eigen-decomposition (exact to rounding)."""
    try:
        M = np.array([[float(A[a, b]) for b in range(3)] for a in range(3)])
    except TypeError:
        return None
    if not np.any(M - np.diag(np.diag(M))):
        lam, k0 = min((M[k, k], k) for k in range(3))
        us = []
        for k in range(3):
            if k != k0 and M[k, k] != lam:
                u = np.zeros(3)
                u[k] = math.sqrt(M[k, k] - lam)
                us.append(u)
        return lam, us
    w, V = np.linalg.eigh((M + M.T) / 2)
    lam = w[0]
    return lam, [V[:, k] * math.sqrt(w[k] - lam) for k in (1, 2) if w[k] > lam]


def crm(v, bk=NUMERIC):
    """Motion cross product matrix (v x) of v = [w; vl]."""
    X = bk.zeros((6, 6))
    Sw = skew(v[:3], bk)
    X[:3, :3] = Sw
    X[3:, 3:] = Sw
    X[3:, :3] = skew(v[3:], bk)
    return X


def crf(v, bk=NUMERIC):
    """Force cross product matrix (v x*) = -crm(v)^T."""
    return -crm(v, bk).T


def icrf(f, bk=NUMERIC):
    """(f x*) of a force f = [n; fl], defined by icrf(f) @ v == crf(v) @ f (paper, Sec. 2)."""
    X = bk.zeros((6, 6))
    Sn = skew(f[:3], bk)
    Sf = skew(f[3:], bk)
    X[:3, :3] = -Sn
    X[:3, 3:] = -Sf
    X[3:, :3] = -Sf
    return X


def factor_B(v, I, bk=NUMERIC):
    """Body-level factorization of the paper's eq. (10):

        B(v, I) = 1/2 [ (v x*) I + (I v) x* - I (v x) ]

    It satisfies B(v, I) v = (v x*) I v and B + B^T = (v x*) I - I (v x).
    """
    return (crf(v, bk) @ I + icrf(I @ v, bk) - I @ crm(v, bk)) * bk.half


# ------------------------------------------------ structured products (ground-frame algorithms)
# A spatial inertia about a point is [[A, S(h)], [S(h)^T, m 1]] (A symmetric: 10 numbers) and
# its rate along a motion u, (u x*) I - I (u x), has the same form with m = 0 (9 numbers). The
# functions below read only those numbers, so a product costs 24 multiplications, not 36.

def cross_motion(u, x, bk=NUMERIC):
    """(u x) x = crm(u) @ x for motion vectors u = [w; v], x = [a; b]: [w x a; w x b + v x a]."""
    w, v, a, b = u[:3], u[3:], x[:3], x[3:]
    out = bk.zeros(6)
    out[:3] = cross(w, a, bk)
    out[3:] = cross(w, b, bk) + cross(v, a, bk)
    return out


def cross_force(x, f, bk=NUMERIC):
    """(x x*) f = crf(x) @ f = icrf(f) @ x for a motion x = [a; b], a force f = [n; fl]."""
    a, b, n, fl = x[:3], x[3:], f[:3], f[3:]
    out = bk.zeros(6)
    out[:3] = cross(a, n, bk) + cross(b, fl, bk)
    out[3:] = cross(a, fl, bk)
    return out


def inertia_parts(I):
    """(A, h, m) of a spatial inertia (or of its rate, m = 0) stored as a 6x6 array."""
    return I[:3, :3], [I[2, 4], I[0, 5], I[1, 3]], I[3, 3]


def inertia_form(m, h, A, bk=NUMERIC):
    """The 6x6 spatial inertia [[A, S(h)], [S(h)^T, m 1]] of its 10 numbers (or, m = 0, an inertia
    rate's 9): the inverse of :func:`inertia_parts`."""
    out = bk.zeros((6, 6))
    out[:3, :3] = A
    Sh = skew(h, bk)
    out[:3, 3:], out[3:, :3] = Sh, Sh.T
    for a in range(3):
        out[3 + a, 3 + a] = m
    return out


def inertia_times(I, x, bk=NUMERIC):
    """I @ x for a spatial inertia (or inertia rate) I: [A a + h x b; m b - h x a]."""
    A, h, m = inertia_parts(I)
    a, b = x[:3], x[3:]
    out = bk.zeros(6)
    out[:3] = A @ a + cross(h, b, bk)
    out[3:] = (b * m if m != 0 else bk.zeros(3)) - cross(h, a, bk)
    return out


def inertia_rate(u, I, bk=NUMERIC, name=None, body=None):
    """(u x*) I - I (u x) for a spatial inertia I and a motion u = [w; v], as a 6x6 array of the
    inertia form: h' = w x h + m v, A' = S(w) A - A S(w) - S(v) S(h) - S(h) S(v) (symmetric).

    S(v) S(h) + S(h) S(v) = v h^T + h v^T - 2 (v . h) 1, so an off-diagonal entry of A' is
    (S(w) A)_rc + (S(w) A)_cr - v_r h_c - h_r v_c and a diagonal one 2 [(S(w) A)_rr + v_k h_k
    + v_l h_l] (k, l the other two axes). Given ``name``, a symbolic run names S(w) A, the
    products v_k h_k and the bracket of each diagonal entry, so that the 2 multiplies a name
    (SymPy would spread it over the sum) and each product is computed once."""
    A, h, m = inertia_parts(I)
    w, v = u[:3], u[3:]
    hd = cross(w, h, bk) + (v * m if m != 0 else bk.zeros(3))
    SwA = skew(w, bk) @ A
    vh = [v[k] * h[k] for k in range(3)]
    if name is not None:
        SwA = bk.bind(SwA, f"{name}w", body)
        vh = [bk.bind(x, f"{name}vh{k}", body) for k, x in enumerate(vh)]
    out = bk.zeros((6, 6))
    for r in range(3):
        k, l = [x for x in range(3) if x != r]
        d = SwA[r, r] + vh[k] + vh[l]
        out[r, r] = (d if name is None else bk.bind(d, f"{name}d{r}", body)) * 2
        for c in range(r + 1, 3):
            out[r, c] = out[c, r] = SwA[r, c] + SwA[c, r] - v[r] * h[c] - h[r] * v[c]
    Shd = skew(hd, bk)
    out[:3, 3:] = Shd
    out[3:, :3] = Shd.T
    return out


def congruence(X, A, bk, name, body=None):
    """X^T A X (an inertia-like quantity moved from X's target frame to its source frame), with
    A X named first so that a symbolic run does not expand the product twice."""
    return X.T @ bk.bind(A @ X, name, body)


def plux(E, r, bk=NUMERIC):
    """Pluecker transform of motion vectors from frame A to frame B, where E rotates A coordinates
    into B coordinates and r is B's origin in A coordinates."""
    X = bk.zeros((6, 6))
    X[:3, :3] = E
    X[3:, 3:] = E
    X[3:, :3] = -(E @ skew(r, bk))
    return X


def mcI(m, c, Ic, bk=NUMERIC):
    """Spatial inertia about the body origin: [[Ic + m S(c) S(c)^T, m S(c)], [m S(c)^T, m 1]]."""
    I = bk.zeros((6, 6))
    C = skew(c, bk)
    I[:3, :3] = Ic + m * (C @ C.T)
    I[:3, 3:] = m * C
    I[3:, :3] = m * C.T
    for a in range(3):
        I[3 + a, 3 + a] = m
    return I


# ---------------------------------------------------------------- rotations (numeric, model side)

HALF_PI = math.pi / 2
_EXACT_COS_SIN = ((1.0, 0.0), (0.0, 1.0), (-1.0, 0.0), (0.0, -1.0))   # angle k·π/2, k mod 4


def cos_sin(a):
    """cos and sin of ``a``, exactly (0, ±1) when ``a`` is the float k·π/2: the URDF reader
    snaps near right angles to those floats so that structural zeros of transforms stay exact."""
    k = round(a / HALF_PI)
    if a == k * HALF_PI:
        return _EXACT_COS_SIN[k % 4]
    return math.cos(a), math.sin(a)


def rot_x(a):
    c, s = cos_sin(a)
    return np.array([[1.0, 0.0, 0.0], [0.0, c, -s], [0.0, s, c]])


def rot_y(a):
    c, s = cos_sin(a)
    return np.array([[c, 0.0, s], [0.0, 1.0, 0.0], [-s, 0.0, c]])


def rot_z(a):
    c, s = cos_sin(a)
    return np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])


def rpy_matrix(rpy):
    """URDF's fixed-axis roll-pitch-yaw: R = Rz(yaw) Ry(pitch) Rx(roll) (child orientation in
    parent), with exact 0/±1 entries for angles that are the floats k·π/2 (:func:`cos_sin`)."""
    r, p, y = rpy
    return rot_z(y) @ rot_y(p) @ rot_x(r)


def axis_angle(axis, c, s, bk=NUMERIC):
    """Rotation matrix R of angle q about the unit axis, given c = cos q and s = sin q (Rodrigues).
    Works on symbols: the axis entries are constants, c and s may be symbols."""
    R = bk.zeros((3, 3))
    K = skew(axis, bk)
    KK = K @ K
    for a in range(3):
        for b in range(3):
            R[a, b] = (1 if a == b else 0) + s * K[a, b] + (1 - c) * KK[a, b]
    return R


def z_turn(axis) -> np.ndarray:
    """A rotation T (columns u, w, axis; u x w = axis) with T e_z = axis: a signed cyclic
    permutation when the axis is a signed coordinate axis."""
    a = np.array(axis, dtype=float)
    nz = np.flatnonzero(a)
    if len(nz) == 1:
        m, sign = int(nz[0]), float(np.sign(a[nz[0]]))
        u, w = np.zeros(3), np.zeros(3)
        u[(m + 1) % 3] = 1.0
        w[(m + 2) % 3] = sign
        return np.column_stack([u, w, a])
    e = np.zeros(3)
    e[int(np.argmin(np.abs(a)))] = 1.0
    u = np.cross(a, e)
    u /= np.linalg.norm(u)
    return np.column_stack([u, np.cross(a, u), a])
