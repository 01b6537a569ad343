"""contact_dynamics_derivatives' path-range solve (templates/contact_solve.c.j2): the C runs Z = L^-T r1 and
D^-1 Z only over each row's column ranges of :func:`symgen.algorithms.contact.path_ranges` (unrolled at build
time, ranges widened to whole vectors of PATH_ALIGN, rows padded to WIDTH_ALIGN; below a free-flyer without the
three zero q columns of its translations), the NumPy solve over whole rows.

1. path_ranges against the nonzero pattern of Z = L^-T r1, r1 = (-dID/dq + sum_r lam_r d(Jc_r^T)/dq, -dID/dv, 1),
   on numbers: dID from Pinocchio's computeRNEADerivatives, L from Pinocchio's crba (M = L^T D L,
   oracle_contact.ltdl), the contact term from symgen's NUMERIC contact_partials with random lam; Z by a dense
   triangular solve. Random trees, fixed and on a free-flyer, bipeds and quadrupeds.
2. C against NumPy contact_dynamics_derivatives and contact_dynamics (two independent solves of the same generated
   terms), rel tol 1e-10 (or 100 eps cond(K_a)), random active sets including none and all; dependent sets are
   skipped, regular ones must not raise. Robots: a branching tree on a free-flyer with contacts at inner nodes
   and leaves (3n - 3 = 42, padded to 48), and a quadruped on a free-flyer (3n - 3 = 48: no padding) with two
   contacts on one leg and a flat (6d) contact. Slow (CI's budget, 4-7 s each): the review's scratch cases (a fixed
   tree, a 22-joint quadruped with six mixed contacts, a fixed chain) and a flat contact on the floating torso.
3. A finding of 2.: a dependent pair of point contacts that a pivot test at 1e-13 of the diagonal let
   through (a pivot of 2.9e-12 of its diagonal after an earlier one of 1.5e-4); CONTACT_PIVOT is 1e-10.
"""
from __future__ import annotations

import numpy as np
import pytest

from support import pin_model_from_robot
from symgen import quantities as Q
from symgen import robots
from symgen.algorithms.contact import path_ranges
from symgen.algorithms.contact_derivatives import unpack_dJ
from symgen.codegen.build import BuildOptions, build, import_package
from symgen.model import Robot, free_flyer_bodies
from symgen.oracle_contact import ltdl
from symgen.pinocchio_oracle import PinOracle
from symgen.quantities.contact import PATH_ALIGN, WIDTH_ALIGN, solve_columns

KEYS = ("contact_terms", "contact_partials")
NAMES = ("dqdd_dq", "dqdd_dv", "dqdd_dtau", "dlam_dq", "dlam_dv", "dlam_dtau")
TOL = 1e-10
#: cond(K_a) above this: a dependent active set (in these runs the regular ones stay below 2e7, the dependent
#: ones above 9e15)
SINGULAR = 1e10


def floating_tree(n, seed):
    """A binary tree of n random revolute bodies (body i's parent i // 2, 1-based) on a free-flyer."""
    rng = np.random.default_rng(seed)
    bodies = free_flyer_bodies("torso", robots.random_inertia(rng, scale=3.0))
    base = len(bodies) - 1
    for i in range(n):
        parent = base if i == 0 else base + 1 + (i + 1) // 2 - 1
        bodies.append(robots._random_body(rng, f"link{i + 1}", parent))
    return Robot(name=f"fftree{n}", bodies=tuple(bodies), root_link="world", floating_base=True)


def columns(ranges):
    return {c for lo, hi in ranges for c in range(lo, hi)}


def ancestors(parent, k):
    out, j = [], parent[k]
    while j >= 0:
        out.append(j)
        j = parent[j]
    return out


PATTERN_ROBOTS = {
    "tree7": lambda: robots.make("tree", 7, 4),
    "tree12": lambda: robots.make("tree", 12, 9),
    "serial5": lambda: robots.make("serial", 5, 3),
    "biped4": lambda: robots.make("biped", 4, 3),
    "quadruped10": lambda: robots.make("quadruped", 10, 2),
    "fftree6": lambda: floating_tree(6, 11),
}


@pytest.mark.parametrize("label", sorted(PATTERN_ROBOTS))
def test_path_ranges_are_nested_up_the_tree_and_padding_only_widens_them(label):
    """What the C's unrolled L^-T relies on: row k's columns lie in each ancestor's (pushing row k into
    ancestor j over k's ranges leaves j inside its own), and the padded ranges hold the exact ones."""
    parent = PATTERN_ROBOTS[label]().parent
    n = len(parent)
    exact = path_ranges(parent)
    width = -(-3 * n // PATH_ALIGN) * PATH_ALIGN
    padded = path_ranges(parent, PATH_ALIGN, width)
    for k in range(n):
        assert columns(exact[k]) <= columns(padded[k]), f"{label} row {k}: padding dropped columns"
        for lo, hi in padded[k]:
            assert 0 <= lo < hi <= width and lo % PATH_ALIGN == 0 and (hi % PATH_ALIGN == 0 or hi == width), \
                f"{label} row {k}: padded range {(lo, hi)} not whole vectors within {width}"
        assert all(a[1] < b[0] for a, b in zip(padded[k], padded[k][1:])), f"{label} row {k}: ranges overlap"
        assert 2 * n + k in columns(exact[k]), f"{label} row {k}: the identity's column missing"
        for j in ancestors(parent, k):
            assert columns(exact[k]) <= columns(exact[j]), f"{label}: row {k}'s columns not inside ancestor {j}'s"


@pytest.mark.parametrize("label", sorted(PATTERN_ROBOTS))
def test_path_ranges_without_the_leading_q_columns_are_the_full_ones_moved_left(label):
    """The layout below a free-flyer (skip = 3: its translations' q columns left out): each row's columns are
    the full layout's less columns 0-2, the others shifted left by 3; and the padded ones hold them."""
    parent = PATTERN_ROBOTS[label]().parent
    n, skip = len(parent), 3
    full, cut = path_ranges(parent), path_ranges(parent, skip=skip)
    width = -(-(3 * n - skip) // WIDTH_ALIGN) * WIDTH_ALIGN
    padded = path_ranges(parent, PATH_ALIGN, width, skip)
    for k in range(n):
        want = {c - skip for c in columns(full[k]) if c >= skip}
        assert columns(cut[k]) == want, f"{label} row {k}: {cut[k]} against the full layout's {full[k]}"
        assert want <= columns(padded[k]) and max(columns(padded[k])) < width, f"{label} row {k}: {padded[k]}"


@pytest.mark.pinocchio
@pytest.mark.parametrize("label", sorted(PATTERN_ROBOTS))
def test_every_nonzero_of_L_inv_T_r1_lies_in_its_rows_path_ranges(pin, label):
    robot = PATTERN_ROBOTS[label]()
    n, parent = robot.nv, robot.parent
    seed = 4100 + sum(map(ord, label))
    rng = np.random.default_rng(seed)
    oracle = PinOracle(robot, pin_model_from_robot(robot), pin)
    # contacts on random bodies (skipping the free-flyer's massless intermediate bodies), random kinds
    names = [b.name for b in robot.bodies if not b.name.startswith("root_joint")]
    picked = rng.choice(len(names), size=min(3, len(names)), replace=False)
    contacts = tuple((names[i], "3d" if rng.random() < 0.6 else "6d") for i in sorted(picked))
    opts = Q.SweepOptions(frames=tuple(c for c, _ in contacts), contacts=contacts)
    frames, kinds = zip(*Q.contact.contacts_of(robot, opts))
    ranges = [columns(r) for r in path_ranges(parent)]
    inside = np.array([[c in ranges[k] for c in range(3 * n)] for k in range(n)])
    filled = np.zeros_like(inside)
    for t in range(3):
        s = Q.random_state(rng, robot.nq, robot.nv, layout=robot.joint_layout)
        q, v, qdd = s["q"], s["qd"], s["qdd"]
        dq, dv = oracle.inverse_dynamics_derivatives(q, v, qdd)
        L, _ = ltdl(oracle.mass_matrix(q), parent)
        dJ = unpack_dJ(robot, frames, kinds, Q.evaluate(robot, "contact_partials", s, opts)[2])
        lam = rng.normal(size=len(dJ))
        r1 = np.hstack([-dq + np.einsum("r,rik->ik", lam, dJ), -dv, np.eye(n)])
        Z = np.linalg.solve(L.T, r1)
        scale = np.max(np.abs(Z))
        leak = np.abs(Z) * ~inside
        k, c = np.unravel_index(np.argmax(leak), leak.shape)
        assert leak[k, c] <= 1e-13 * scale, (f"{label} seed={seed} state#{t} contacts={contacts}: Z[{k}, {c}] = "
                                             f"{Z[k, c]:.3e} outside row {k}'s path ranges {path_ranges(parent)[k]}")
        filled |= np.abs(Z) > 1e-13 * scale
    # not vacuous: the ranges are (almost) all used by some state. A free-flyer's position (q columns 0-2)
    # moves nothing the dynamics sees: those columns of dID/dq are zero everywhere
    expected = inside.copy()
    if robot.floating_base:
        expected[:, :3] = False
    share = filled[expected].mean()
    never = [(int(k), int(c)) for k, c in zip(*np.nonzero(expected & ~filled))]
    assert share > 0.9, f"{label} seed={seed}: only {share:.0%} of the in-range entries of Z were ever nonzero: {never}"


# ---- C against NumPy -------------------------------------------------------------------------------------

SOLVE_CASES = {
    # a branching tree on a free-flyer (15 joints, 3n = 45 -> 48): contacts at inner nodes (link2 with two
    # subtrees below it, link3) and at leaves of both subtrees
    "fftree9": (lambda: floating_tree(9, 12),
                (("link2", "3d"), ("link3", "3d"), ("link8", "3d"), ("link7", "3d"))),
    # a free-flyer, 17 joints (3n - 3 = 48, no padding): two contacts on leg 1, a flat contact at leg 2's end
    "quad11": (lambda: robots.make("quadruped", 11, 2),
               (("leg1_link1", "3d"), ("leg1_link3", "3d"), ("leg2_link3", "6d"), ("leg3_link2", "3d"))),
}
SLOW_CASES = {
    # the reviewer's check_paths cases: a fixed-base tree (most sets singular: one-joint links), a
    # 22-joint quadruped with six mixed contacts (3n = 66 -> 68), a fixed chain with contacts partway
    "tree7": (lambda: robots.make("tree", 7, 4), (("link2", "3d"), ("link4", "3d"), ("link5", "3d"), ("link7", "3d"))),
    "quad16": (lambda: robots.make("quadruped", 16, 2),
               (("leg1_link1", "3d"), ("leg1_link2", "6d"), ("leg1_link4", "3d"), ("leg2_link4", "6d"),
                ("leg3_link3", "3d"), ("leg4_link4", "3d"))),
    "serial5": (lambda: robots.make("serial", 5, 3), (("link2", "3d"), ("link5", "3d"), ("link4", "3d"))),
    "fftree9flat": (lambda: floating_tree(9, 12),
                        (("torso", "6d"), ("link2", "3d"), ("link4", "3d"), ("link7", "3d"), ("link9", "3d"))),
}


def _build(tmp_path_factory, label, make, contacts):
    robot = make()
    opts = BuildOptions(quantities=KEYS, contacts=contacts, copt="-O0", jobs=2)
    return robot, import_package(build(robot, tmp_path_factory.mktemp(label), name=f"{label}cp", opts=opts).path)


@pytest.fixture(scope="module")
def packages(tmp_path_factory):
    """label -> (robot, package), each built on first use (a test's setup pays for its own robot only)."""
    built = {}

    def get(label):
        if label not in built:
            built[label] = _build(tmp_path_factory, label, *SOLVE_CASES[label])
        return built[label]
    return get


def _rel(a, b):
    return np.max(np.abs(a - b), initial=0.0) / max(1.0, np.max(np.abs(a), initial=0.0))


def _raises(f, *args):
    """The SingularContactError f(*args) raised, or None."""
    try:
        f(*args)
    except ValueError as error:
        if type(error).__name__ != "SingularContactError":
            raise
        return error
    return None


def _compare(robot, pkg, label, seed, states, draws):
    """C against NumPy on ``states`` random states, each with none, all and ``draws`` random active sets,
    tolerance max(TOL, 100 eps cond(K_a)); (compared, dependent) counts. A dependent set (cond(K_a) above
    SINGULAR, Jc_a rank-deficient) is skipped: each backend raises SingularContactError naming the active
    contacts or (rounding above the pivot test, test_a_dependent_pair_of_contacts_...) returns; a regular
    one must not raise."""
    rng = np.random.default_rng(seed)
    count, compared, dependent = len(pkg.contacts), 0, 0
    skip, width = solve_columns(robot)
    for t in range(states):
        s = Q.random_state(rng, robot.nq, robot.nv, layout=robot.joint_layout)
        q, v, tau = s["q"], s["qd"], s["tau"]
        Kc = pkg.numpy.contact_terms(q, v, tau)[0]
        for on in [np.zeros(count), np.ones(count)] + [rng.integers(0, 2, count).astype(float) for _ in range(draws)]:
            where = f"{label} (3n {3 * robot.nv}, skip {skip}, width {width}) seed={seed} state#{t} active={on.astype(int)}"
            rows = [r for rr, flag in zip(pkg.numpy._CONTACT_ROWS, on) if flag for r in rr]
            cond = np.linalg.cond(Kc[np.ix_(rows, rows)]) if rows else 1.0
            errors = {f"{b}.{f}": _raises(getattr(getattr(pkg, b), f), q, v, tau, on)
                      for b in ("numpy", "c") for f in ("contact_dynamics_derivatives", "contact_dynamics")}
            if cond > SINGULAR:
                dependent += 1
                names = ", ".join(name for (name, _), flag in zip(pkg.contacts, on) if flag)
                for what, error in errors.items():
                    assert error is None or names in str(error), f"{what} {where}: {error} does not name {names}"
                continue
            raised = {what: str(error) for what, error in errors.items() if error is not None}
            assert not raised, f"{where}: a regular set (cond(K_a) {cond:.1e}) raised {raised}"
            tol = max(TOL, 100 * np.finfo(float).eps * cond)
            want = pkg.numpy.contact_dynamics_derivatives(q, v, tau, on)
            got = pkg.c.contact_dynamics_derivatives(q, v, tau, on)
            for name, g, w in zip(NAMES, got, want):
                err = _rel(w, g)
                assert err <= tol, f"{name} C vs NumPy {where}: relative difference {err:.2e} > {tol:.1e}"
            for name, g, w in zip(("qdd", "lam"), pkg.c.contact_dynamics(q, v, tau, on),
                                  pkg.numpy.contact_dynamics(q, v, tau, on)):
                err = _rel(w, g)
                assert err <= tol, f"contact_dynamics {name} C vs NumPy {where}: relative difference {err:.2e}"
            compared += 1
    return compared, dependent


@pytest.mark.parametrize("label", sorted(SOLVE_CASES))
def test_the_C_path_range_solve_matches_the_whole_row_NumPy_solve(packages, label):
    robot, pkg = packages(label)
    seed = 4200 + len(label)
    compared, _ = _compare(robot, pkg, label, seed, states=3, draws=4)
    assert compared >= 3, f"{label} seed={seed}: only {compared} active sets were regular"


def test_the_fast_cases_cover_padded_and_unpadded_rows():
    """The two fast cases are what they claim: one padded, one not (3n - 3 a multiple of WIDTH_ALIGN)."""
    def padding(robot):
        skip, width = solve_columns(robot)
        return width - (3 * robot.nv - skip)

    rest = {label: padding(make()) for label, (make, _) in SOLVE_CASES.items()}
    assert rest["fftree9"] != 0 and rest["quad11"] == 0, rest


def test_the_fast_cases_cover_the_fused_and_the_generic_all_active_products(packages):
    """With every contact active the C takes the fused K_a / Wc products up to FUSED_ROWS rows (fftree9:
    4 x 3d = 12) and the row-table loops past them (quad11: 15 rows), so the C-against-NumPy test above,
    whose active sets include all, runs both."""
    from pathlib import Path

    from symgen.quantities.contact import FUSED_ROWS
    fused = {}
    for label in SOLVE_CASES:
        _, pkg = packages(label)
        source = (Path(pkg.__file__).parent / f"{label}cp.c").read_text()
        fused[label] = (pkg.numpy._CONTACT_M, "the three products chunk by chunk" in source)
    assert fused == {"fftree9": (FUSED_ROWS, True), "quad11": (FUSED_ROWS + 3, False)}, fused


def test_a_dependent_pair_of_contacts_raises_SingularContactError(packages):
    """link7's frame is on its joint's axis, so its point moves with its parent link3: the two point contacts
    constrain 6 rows of one rigid body's 6 velocities with rank 5 (Jc_a rank-deficient in every state). Found
    by this file's C-vs-NumPy comparison (seed 4207 state#0: the two solves differed by 2.5e15 relative,
    Pinocchio's by 2); the singular sets are otherwise skipped there."""
    robot, pkg = packages("fftree9")
    seed, on = 4207, np.array([0.0, 1.0, 0.0, 1.0])
    assert [name for (name, _), flag in zip(pkg.contacts, on) if flag] == ["link3", "link7"]
    rng = np.random.default_rng(seed)
    rows = [r for rr, flag in zip(pkg.numpy._CONTACT_ROWS, on) if flag for r in rr]
    for t in range(3):
        s = Q.random_state(rng, robot.nq, robot.nv, layout=robot.joint_layout)
        Jc = pkg.numpy.contact_partials(s["q"], s["qd"], s["qdd"])[3][rows]
        sv = np.linalg.svd(Jc, compute_uv=False)
        assert sv[-1] <= 1e-12 * sv[0], f"seed={seed} state#{t}: Jc_a not rank-deficient ({sv[-1] / sv[0]:.1e})"
        for backend in ("numpy", "c"):
            error = _raises(getattr(pkg, backend).contact_dynamics_derivatives, s["q"], s["qd"], s["tau"], on)
            assert error is not None, f"{backend} seed={seed} state#{t}: link3 + link7 (rank 5 of 6) not found singular"


@pytest.mark.slow
@pytest.mark.parametrize("label", sorted(SLOW_CASES))
def test_the_C_path_range_solve_matches_numpy_on_more_robots(tmp_path_factory, label):
    robot, pkg = _build(tmp_path_factory, label, *SLOW_CASES[label])
    seed = 4300 + sorted(SLOW_CASES).index(label)
    compared, _ = _compare(robot, pkg, label, seed, states=4, draws=6)
    assert compared >= 3, f"{label} seed={seed}: only {compared} active sets were regular"
