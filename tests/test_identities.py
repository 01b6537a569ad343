"""The paper's Section 5 checks: identities that tie RNEA, CRBA, Algorithm 1 and Algorithm 2 together.

Each identity is one test function, named for the property it checks, run on

- the paper's synthetic systems (``symgen.robots.make``): serial chains of 10, 20, 30 bodies, a
  planar chain of 10, binary trees of 10 and 20, a biped and a quadruped with 20 actuated joints,
  a few random states each;
- random URDF trees drawn by Hypothesis (1-8 joints mixing revolute, continuous, prismatic and
  fixed, random parents, origins, axes and valid inertias, fixed or floating base), read by
  ``symgen.urdf.parse_urdf_string``;
- the paper's own experiment, 100 random states on serial chains of 10, 20 and 30 bodies
  (``-m slow``; its first 3 states run by default, so CI runs a sample).

States: q uniform in [0, 2π], qd in [0, 10] (the paper's ranges) and qdd in [-10, 10], drawn from
``numpy.random.default_rng(seed)`` (``support.random_state``); every failure names the robot and
that seed. To replay one: ``q, qd, qdd = support.random_state(seed, n)``.

Tolerances are relative to the larger max-abs entry of the two sides (the paper saw errors of
1e-11..1e-9 in N·m, we ask for 1e-9 relative); the central difference of M gets 1e-6. So that a
quantity that vanishes identically (e.g. C of an all-prismatic robot) does not divide round-off
by round-off, that scale is floored at a thousandth of its natural size (max|M| times the
velocity terms). Structural zeros of Gamma must be exactly zero.

The worst errors seen are printed at the end of the run (pytest's terminal summary).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
import pytest
from hypothesis import given, note, settings
from hypothesis import strategies as st

import symgen
from symgen import robots
from symgen.urdf import parse_urdf_string
from support import max_abs, move, random_state, relative_error

ROBOT_SEED = 0                  # robots.make(kind, n, seed=ROBOT_SEED), as in test_pinocchio
STATE_SEED = 5_000              # fast tests: states STATE_SEED + t, t < STATES
STATES = 3
PAPER_SEED = 100_000            # the Section 5 experiment: states PAPER_SEED + t, t < trials
PAPER_TRIALS = 100
PAPER_SAMPLE = 3

TOL = 1e-9                      # relative, for every identity
TOL_FD = 1e-6                   # relative, Mdot against a central difference of M
FD_STEP = 1e-6                  # M(q ± h qd)
FLOOR = 1e-3                    # scale floor, as a fraction of the natural scale (see above)

ROBOTS = [("serial", 10), ("serial", 20), ("serial", 30), ("planar", 10), ("tree", 10),
          ("tree", 20), ("biped", 20), ("quadruped", 20)]
ROBOT_IDS = [f"{k}{n}" for k, n in ROBOTS]
RANDOM_URDF = "random URDF"


# ---------------------------------------------------------------------------- states and errors

@lru_cache(maxsize=None)
def _robot(kind: str, n: int) -> symgen.Robot:
    return robots.make(kind, n, seed=ROBOT_SEED)


def _label(kind: str, n: int) -> str:
    return f"robots.make({kind!r}, {n}, seed={ROBOT_SEED})"




@dataclass
class Case:
    """One robot at one state; quantities computed on first use."""

    robot: symgen.Robot
    q: np.ndarray
    qd: np.ndarray
    qdd: np.ndarray
    where: str                  # "<robot> state seed <seed>", for every message

    def __post_init__(self):
        self._memo = {}

    def _get(self, key, f):
        if key not in self._memo:
            self._memo[key] = f()
        return self._memo[key]

    @property
    def alg1(self):             # (M, Mdot, C) by Algorithm 1
        return self._get("alg1", lambda: symgen.coriolis(self.robot, self.q, self.qd))

    @property
    def Gamma(self):            # Algorithm 2
        return self._get("Gamma", lambda: symgen.christoffel(self.robot, self.q))

    @property
    def M_crba(self):
        return self._get("M_crba", lambda: symgen.mass_matrix(self.robot, self.q))

    @property
    def Mq(self) -> float:      # max|M|, the natural scale of everything else
        return max_abs(self.M_crba)

    @property
    def vel(self) -> float:
        return max_abs(self.qd)


def _compare(a, b, natural: float, what: str, case: Case, tol: float = TOL) -> tuple[float, float]:
    """Asserts a == b to ``tol``: the max-abs difference relative to the larger max-abs entry of
    the two, floored at FLOOR * natural. Returns (relative, absolute) error for the summary."""
    rel, ab = relative_error(a, b, FLOOR * natural, symmetric=True)
    assert rel <= tol, f"{what}: error {rel:.3e} > {tol:g} on {case.where}"
    return rel, ab


# ---------------------------------------------------------------------------- the identities
# Each takes a Case, asserts, and returns (relative error, absolute error) for the summary.

def check_C_qd_equals_rnea_without_gravity(c: Case):
    """C(q, qd) qd (Algorithm 1) == RNEA(q, qd, qdd = 0) with gravity 0."""
    _, _, C = c.alg1
    rnea = symgen.inverse_dynamics(c.robot, c.q, c.qd, np.zeros(c.robot.n), gravity=(0.0, 0.0, 0.0))
    return _compare(C @ c.qd, rnea, c.Mq * c.vel**2,
                    "C qd != RNEA(q, qd, 0) without gravity (relative to max|tau|)", c)


def check_Mdot_equals_C_plus_CT(c: Case):
    """Mdot = C + C^T (C is admissible, eq. 2), both from Algorithm 1."""
    _, Mdot, C = c.alg1
    return _compare(Mdot, C + C.T, c.Mq * c.vel, "Mdot != C + C^T (relative to max|Mdot|)", c)


def check_C_equals_Gamma_contracted_with_qd(c: Case):
    """C (Algorithm 1) == sum_k Gamma[:, :, k] qd_k (Algorithm 2), eq. 3."""
    _, _, C = c.alg1
    return _compare(C, np.einsum("ijk,k->ij", c.Gamma, c.qd), c.Mq * c.vel,
                    "C (Algorithm 1) != sum_k Gamma_ijk qd_k (Algorithm 2) (relative to max|C|)", c)


def check_Mdot_matches_central_difference_of_M(c: Case):
    """Mdot (Algorithm 1) == (M(q + h qd) - M(q - h qd)) / 2h, h = FD_STEP, to TOL_FD."""
    _, Mdot, _ = c.alg1
    h = FD_STEP
    fd = (symgen.mass_matrix(c.robot, move(c.robot, c.q, c.qd, h))
          - symgen.mass_matrix(c.robot, move(c.robot, c.q, c.qd, -h))) / (2 * h)
    return _compare(Mdot, fd, c.Mq * c.vel,
                    f"Mdot != central difference of M along qd, step {h:g} (relative to max|Mdot|)", c, tol=TOL_FD)


def check_Gamma_symmetric_in_j_k(c: Case):
    """Gamma_ijk == Gamma_ikj, but for a free-flyer's torsion: Gamma[:, j, k] - Gamma[:, k, j] =
    M (Phi_k x Phi_j) for j, k base speeds (e.g. j, k = angular x, angular y: M[:, angular z])."""
    G = c.Gamma
    torsion = np.zeros_like(G)
    S = [np.asarray(c.robot.S[i]) for i in range(c.robot.free)]
    for j in range(c.robot.free):
        for k in range(c.robot.free):
            x = symgen.spatial.crm(S[k]) @ S[j]            # Phi_k x Phi_j in the base speeds' basis
            torsion[:, j, k] = c.M_crba[:, :c.robot.free] @ np.array([x @ Sm for Sm in S])
    return _compare(G - G.transpose(0, 2, 1), torsion, c.Mq,
                    "Gamma_ijk - Gamma_ikj != torsion (relative to max|Gamma|)", c)


def check_Gamma_zero_unless_i_j_k_mutually_related(c: Case):
    """Gamma_ijk == 0, exactly, unless i ~ j, j ~ k and i ~ k (Algorithm 2 never writes them)."""
    n = c.robot.n
    R = np.array([[c.robot.related(i, j) for j in range(n)] for i in range(n)])
    mutual = R[:, :, None] & R[None, :, :] & R[:, None, :]
    G = c.Gamma
    off = G[~mutual]
    ab = max_abs(off)
    if ab != 0.0:
        i, j, k = (int(x[0]) for x in np.nonzero((np.abs(G) == ab) & ~mutual))
        raise AssertionError(f"Gamma[{i}, {j}, {k}] = {float(G[i, j, k])!r} but bodies {i}, {j}, {k} are not "
                             f"mutually related ({int(np.count_nonzero(off))} such nonzero entries) "
                             f"on {c.where}")
    return ab / max(max_abs(G), FLOOR * c.Mq), ab


def check_M_symmetric_positive_definite(c: Case):
    """M (CRBA) == M^T, and its Cholesky factorization exists."""
    M = c.M_crba
    errors = _compare(M, M.T, c.Mq, "M != M^T (relative to max|M|)", c)
    try:
        np.linalg.cholesky(M)
    except np.linalg.LinAlgError:
        eig = np.linalg.eigvalsh((M + M.T) / 2)
        raise AssertionError(f"M is not positive definite (eigenvalues {eig[0]:.3e} .. {eig[-1]:.3e}) "
                             f"on {c.where}") from None
    return errors


def check_M_crba_equals_M_algorithm1(c: Case):
    """M by CRBA == M by Algorithm 1."""
    return _compare(c.M_crba, c.alg1[0], c.Mq, "M (CRBA) != M (Algorithm 1) (relative to max|M|)", c)


def check_tau_equals_M_qdd_plus_C_qd_plus_g(c: Case):
    """RNEA(q, qd, qdd) == M qdd + C qd + g, g = RNEA(q, 0, 0), gravity symgen.GRAVITY (eq. 1)."""
    M, _, C = c.alg1
    zero = np.zeros(c.robot.n)
    tau = symgen.inverse_dynamics(c.robot, c.q, c.qd, c.qdd)
    g = symgen.inverse_dynamics(c.robot, c.q, zero, zero)
    natural = c.Mq * (max_abs(c.qdd) + c.vel**2 + 9.81)
    return _compare(tau, M @ c.qdd + C @ c.qd + g, natural,
                    "RNEA(q, qd, qdd) != M qdd + C qd + g (relative to max|tau|)", c)


def check_ground_frame_equals_body_frame(c: Case):
    """M, Mdot, C and Gamma by the ground-coordinate algorithms (what the generated code runs)
    == the body-frame algorithms as printed in the paper."""
    from symgen.algorithms import christoffel_ground, coriolis_ground, crba_ground
    from symgen.backend import NUMERIC

    worst = (0.0, 0.0)
    M, Mdot, C = coriolis_ground(c.robot, c.q, c.qd, NUMERIC)
    pairs = [("M (CRBA)", crba_ground(c.robot, c.q, NUMERIC), c.M_crba, c.Mq),
             ("M (Algorithm 1)", M, c.alg1[0], c.Mq),
             ("Mdot", Mdot, c.alg1[1], c.Mq * c.vel),
             ("C", C, c.alg1[2], c.Mq * c.vel),
             ("Gamma", christoffel_ground(c.robot, c.q, NUMERIC), c.Gamma, c.Mq)]
    for what, ground, body, natural in pairs:
        worst = max(worst, _compare(ground, body, natural, f"{what}: ground frame != body frame", c))
    return worst


CHECKS = {f.__name__.removeprefix("check_"): f for f in (
    check_C_qd_equals_rnea_without_gravity,
    check_Mdot_equals_C_plus_CT,
    check_C_equals_Gamma_contracted_with_qd,
    check_Mdot_matches_central_difference_of_M,
    check_Gamma_symmetric_in_j_k,
    check_Gamma_zero_unless_i_j_k_mutually_related,
    check_M_symmetric_positive_definite,
    check_M_crba_equals_M_algorithm1,
    check_tau_equals_M_qdd_plus_C_qd_plus_g,
    check_ground_frame_equals_body_frame,
)}
PAPER_CHECKS = ("C_qd_equals_rnea_without_gravity", "Mdot_equals_C_plus_CT",
                "C_equals_Gamma_contracted_with_qd")


# ---------------------------------------------------------------------------- worst errors

WORST: dict[tuple[str, str], list] = {}      # (check, system) -> [rel, seed of it, abs]


def _record(check: str, system: str, errors: tuple[float, float], seed) -> None:
    rel, ab = errors
    w = WORST.setdefault((check, system), [-1.0, None, 0.0])
    if rel > w[0]:
        w[0], w[1] = rel, seed
    w[2] = max(w[2], ab)


class _Summary:
    """Prints WORST at the end of the run (registered once by the fixture below)."""

    def pytest_terminal_summary(self, terminalreporter):
        if not WORST:
            return
        tr = terminalreporter
        tr.section("symgen identities: worst relative error per check")
        systems = [s for s in ROBOT_IDS + [RANDOM_URDF] if any(s == k[1] for k in WORST)]
        tr.write_line(f"{'check':48s}" + "".join(f"{s:>12s}" for s in systems))
        for check in CHECKS:
            cells = (f"{WORST[(check, s)][0]:12.1e}" if (check, s) in WORST else f"{'':12s}" for s in systems)
            tr.write_line(f"{check:48s}" + "".join(cells))
        tr.write_line("absolute worst of the paper's checks on serial chains (paper: 1.3e-11..1.4e-9 "
                      "N·m, 1.8e-12, 1.6e-11 N·m·s):")
        for check in PAPER_CHECKS:
            cells = (f"{WORST[(check, s)][2]:12.1e}" if (check, s) in WORST else f"{'':12s}"
                     for s in ("serial10", "serial20", "serial30"))
            tr.write_line(f"  {check:46s}" + "".join(cells))


@pytest.fixture(scope="module", autouse=True)
def _worst_error_summary(request):
    plugins = request.config.pluginmanager
    if not plugins.has_plugin("symgen-identities-summary"):
        plugins.register(_Summary(), "symgen-identities-summary")
    yield


def _run(check: str, kind: str, n: int, seeds) -> None:
    robot = _robot(kind, n)
    for seed in seeds:
        case = Case(robot, *random_state(seed, robot.n, robot.nq), where=f"{_label(kind, n)}, state seed {seed}")
        _record(check, f"{kind}{n}", CHECKS[check](case), seed)


def _fast_seeds():
    return range(STATE_SEED, STATE_SEED + STATES)


# ---------------------------------------------------------------------------- synthetic systems

robot_params = pytest.mark.parametrize("kind,n", ROBOTS, ids=ROBOT_IDS)


def _identity_test(check: str):
    """``test_<check>``: the identity on every synthetic system, at the fast seeds."""
    @robot_params
    def test(kind, n):
        _run(check, kind, n, _fast_seeds())

    test.__name__ = test.__qualname__ = f"test_{check}"
    test.__doc__ = CHECKS[check].__doc__
    return test


for _check in CHECKS:                   # one test function per identity, named for it
    globals()[f"test_{_check}"] = _identity_test(_check)


def test_every_check_has_a_test():
    """Each identity above runs on the synthetic systems under its own name."""
    missing = [name for name in CHECKS if f"test_{name}" not in globals()]
    assert not missing, f"checks without a test function: {missing} (no seed involved)"


# ---------------------------------------------------------------------------- the paper's experiment

@pytest.mark.parametrize("trials", [PAPER_SAMPLE, pytest.param(PAPER_TRIALS, marks=pytest.mark.slow)],
                         ids=[f"sample{PAPER_SAMPLE}", f"paper{PAPER_TRIALS}"])
@pytest.mark.parametrize("n", [10, 20, 30], ids=lambda n: f"serial{n}")
def test_paper_section5_trials_satisfy_every_identity(n, trials):
    """Section 5: random states on serial chains of 10, 20, 30 bodies, every identity each time.
    The worst error per check (and the seed it came from) is in the terminal summary; the paper's
    three checks are also reported in absolute units there, next to the paper's numbers."""
    robot = _robot("serial", n)
    for seed in range(PAPER_SEED, PAPER_SEED + trials):
        case = Case(robot, *random_state(seed, robot.n),
                    where=f"{_label('serial', n)}, Section 5 trial, state seed {seed}")
        for check, run in CHECKS.items():
            _record(check, f"serial{n}", run(case), seed)


# ---------------------------------------------------------------------------- random URDF trees

JOINT_TYPES = ("revolute", "continuous", "prismatic", "fixed")
MOVABLE = ("revolute", "continuous", "prismatic")
UNIT_AXES = ((1.0, 0.0, 0.0), (0.0, 1.0, 0.0), (0.0, 0.0, 1.0),
             (-1.0, 0.0, 0.0), (0.0, -1.0, 0.0), (0.0, 0.0, -1.0))


def _floats(lo: float, hi: float):
    return st.floats(lo, hi, allow_nan=False, allow_infinity=False)


def _num(values) -> str:
    return " ".join(repr(float(x)) for x in values)


def _rpy_matrix(r: float, p: float, y: float) -> np.ndarray:
    """URDF's Rz(y) Ry(p) Rx(r), written out here so the generator does not lean on symgen."""
    cr, sr, cp, sp, cy, sy = math.cos(r), math.sin(r), math.cos(p), math.sin(p), math.cos(y), math.sin(y)
    Rx = np.array([[1, 0, 0], [0, cr, -sr], [0, sr, cr]])
    Ry = np.array([[cp, 0, sp], [0, 1, 0], [-sp, 0, cp]])
    Rz = np.array([[cy, -sy, 0], [sy, cy, 0], [0, 0, 1]])
    return Rz @ Ry @ Rx


xyzs = st.tuples(_floats(-1.0, 1.0), _floats(-1.0, 1.0), _floats(-1.0, 1.0))
rpys = st.tuples(_floats(-math.pi, math.pi), _floats(-math.pi, math.pi), _floats(-math.pi, math.pi))
axes = st.one_of(st.sampled_from(UNIT_AXES),        # the parser normalizes; keep the norm >= 0.1
                 xyzs.map(lambda a: a if math.hypot(*a) >= 0.1 else (a[0], a[1], 0.5)))


@st.composite
def inertials(draw) -> tuple[float, str]:
    """(mass, <inertial> XML): mass in [0.1, 5] kg, CoM within 0.3 m, a full inertia tensor
    R diag(J) R^T whose principal moments J come from positive second moments s
    (J_x = m (s_y + s_z), ...), so they obey the triangle inequality strictly; the inertial
    frame itself is rotated by a random rpy too."""
    mass = draw(_floats(0.1, 5.0))
    s = [draw(_floats(1e-3, 0.05)) for _ in range(3)]
    J = mass * np.array([s[1] + s[2], s[0] + s[2], s[0] + s[1]])
    R = _rpy_matrix(*draw(rpys))
    I = R @ np.diag(J) @ R.T
    com = draw(st.tuples(_floats(-0.3, 0.3), _floats(-0.3, 0.3), _floats(-0.3, 0.3)))
    xml = (f'<inertial><origin xyz="{_num(com)}" rpy="{_num(draw(rpys))}"/>'
           f'<mass value="{_num([mass])}"/>'
           f'<inertia ixx="{_num([I[0, 0]])}" ixy="{_num([I[0, 1]])}" ixz="{_num([I[0, 2]])}" '
           f'iyy="{_num([I[1, 1]])}" iyz="{_num([I[1, 2]])}" izz="{_num([I[2, 2]])}"/></inertial>')
    return mass, xml


@dataclass(frozen=True)
class RandomTree:
    urdf: str
    parents: tuple[int, ...]        # parents[k - 1]: parent link of link k (link 0 is the root)
    types: tuple[str, ...]          # types[k - 1]: type of the joint above link k
    masses: tuple[float, ...]       # masses[k]: mass of link k


@st.composite
def random_urdf_trees(draw) -> RandomTree:
    """A URDF: a root link and 1-8 more, each hung from a random earlier link by a revolute,
    continuous, prismatic or fixed joint (at least one movable) with a random origin and axis;
    every link has a valid random inertial."""
    n = draw(st.integers(1, 8))
    parents = [draw(st.integers(0, k - 1)) for k in range(1, n + 1)]
    types = [draw(st.sampled_from(JOINT_TYPES)) for _ in range(n)]
    if all(t == "fixed" for t in types):
        types[draw(st.integers(0, n - 1))] = draw(st.sampled_from(MOVABLE))
    masses, lines = [], ['<?xml version="1.0"?>', '<robot name="random_tree">']
    for k in range(n + 1):
        mass, inertial = draw(inertials())
        masses.append(mass)
        lines.append(f'  <link name="l{k}">{inertial}</link>')
    for k in range(1, n + 1):
        t = types[k - 1]
        limit = '<limit lower="-3.0" upper="3.0" effort="100.0" velocity="10.0"/>' if t in ("revolute", "prismatic") else ""
        lines.append(f'  <joint name="j{k}" type="{t}"><parent link="l{parents[k - 1]}"/>'
                     f'<child link="l{k}"/><origin xyz="{_num(draw(xyzs))}" rpy="{_num(draw(rpys))}"/>'
                     f'<axis xyz="{_num(draw(axes))}"/>{limit}</joint>')
    lines.append("</robot>")
    return RandomTree("\n".join(lines) + "\n", tuple(parents), tuple(types), tuple(masses))


def _parse(tree: RandomTree, floating: bool) -> symgen.Robot:
    note(f"URDF (floating_base={floating}):\n{tree.urdf}")
    return parse_urdf_string(tree.urdf, source="hypothesis.urdf", floating_base=floating)


random_cases = given(tree=random_urdf_trees(), floating=st.booleans(), seed=st.integers(0, 2**32 - 1))


@pytest.mark.parametrize("check", list(CHECKS))
@settings(max_examples=25, deadline=None)
@random_cases
def test_random_urdf_trees_satisfy(check, tree, floating, seed):
    """Every identity, on a random URDF tree (fixed or floating base) at a random state."""
    note(f"state seed {seed}")
    robot = _parse(tree, floating)
    case = Case(robot, *random_state(seed, robot.n, robot.nq),
                where=f"random URDF (floating_base={floating}, {robot.n} DoF), state seed {seed}")
    _record(check, RANDOM_URDF, CHECKS[check](case), seed)


@settings(max_examples=25, deadline=None)
@random_cases
def test_random_urdf_fixed_joints_are_lumped(tree, floating, seed):
    """One body per movable joint (plus six virtual ones for a floating base), one lumped link
    per fixed joint, and no mass lost except the links fixed to the ground of a fixed base."""
    robot = _parse(tree, floating)
    where = f"random URDF (floating_base={floating}); no state involved, seed {seed} unused"
    movable = sum(t != "fixed" for t in tree.types)
    assert robot.n == movable + 6 * floating, f"{robot.n} bodies for {movable} movable joints on {where}"
    assert len(robot.lumped) == len(tree.types) - movable, f"lumped {robot.lumped} on {where}"
    assert all(b.joint_type != "fixed" for b in robot.bodies), f"a fixed joint became a body on {where}"

    def grounded(k: int) -> bool:            # link k reaches the root through fixed joints only
        while k > 0 and tree.types[k - 1] == "fixed":
            k = tree.parents[k - 1]
        return k == 0

    expected = sum(m for k, m in enumerate(tree.masses) if floating or not grounded(k))
    total = sum(b.inertia.mass for b in robot.bodies)
    assert math.isclose(total, expected, rel_tol=1e-12), \
        f"total body mass {total!r} != {expected!r} (links not fixed to the ground) on {where}"
