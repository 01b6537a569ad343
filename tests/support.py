"""What the tests share: their outside requirements, the generated functions, random states,
relative errors, and Pinocchio as the outside oracle.

- **Requirements.** Pinocchio and example-robot-data are test extras: a test that needs one
  skips when it is missing, and fails when the ``CI`` variable is set (a skip there would hide
  that nothing was checked against the outside world).
- **The generated functions**, read from the registry (``symgen.quantities``): their names, how
  a package's function is called at a state and the numeric reference value there.
- **Random states** as in the paper's Section 5 and as ``symgen verify`` draws them
  (``symgen.quantities.random_state``): q in [0, 2 pi], qd in [0, 10], qdd in [-10, 10]. Every
  test that draws them names the seed in its failure messages.
- **Relative errors** and :func:`assert_close`, which says where two results differ.
- **Pinocchio.** symgen's state is one number per joint, in ``robot.joint_names`` order.
  Pinocchio orders joints by its own tree traversal and gives a continuous (unbounded revolute)
  joint two configuration entries, (cos q, sin q), and one velocity entry.
  :class:`~symgen.pinocchio_oracle.JointMap` matches the two by joint name and builds the
  permutation ``P`` with ``v_pin = P @ v_symgen``, so that

      M_symgen = P.T @ M_pin @ P,    C_symgen = P.T @ C_pin @ P,    tau_symgen = P.T @ tau_pin.

  Every check against it is stated against Pinocchio's own functions (``crba``, ``rnea``,
  ``computeCoriolisMatrix``), never against another symgen function, so an error common to all
  of symgen's algorithms (a wrong joint transform, a misread URDF) still shows.

tests/ is not a package: ``conftest.py`` puts this folder on ``sys.path`` and tests ``import support``.
"""
from __future__ import annotations

import os
import site
import sys
import sysconfig
import zlib
from pathlib import Path

import numpy as np
import pytest

import symgen.pinocchio_oracle as _oracle
from symgen import quantities as Q
from symgen.pinocchio_oracle import OracleError  # noqa: F401  (re-exported for the tests)

#: Relative tolerance of every comparison with Pinocchio, against the largest entry of the
#: compared quantity.
RTOL = 1e-9
#: Absolute floor, for quantities that are zero up to round-off (e.g. C at a state with qd ~ 0).
ATOL = 1e-12

# ------------------------------------------------------------------------------ requirements

_MISSING_EXTRA = ("{what} is not installed, but CI is set: the test extra was not installed "
                  "(pip install -e '.[test]'). Pinocchio is symgen's outside oracle; a CI run "
                  "without it checks nothing against the outside world.")


def require(what: str, available: bool, detail: str = "") -> None:
    """Skip the test unless ``available``; under CI, fail it instead."""
    if available:
        return
    if os.environ.get("CI"):
        pytest.fail(_MISSING_EXTRA.format(what=what) + (f" ({detail})" if detail else ""), pytrace=False)
    pytest.skip(f"{what} is not installed" + (f" ({detail})" if detail else ""))


def require_pinocchio():
    """The ``pinocchio`` module; skips the test if it is missing, fails it if CI is set."""
    try:
        import pinocchio
    except ImportError as exc:                      # pragma: no cover - depends on the environment
        require("pinocchio (PyPI package 'pin')", False, str(exc))
    return pinocchio


_ERD_SUBDIR = Path("share", "example-robot-data", "robots")


def _erd_candidates():
    env = os.environ.get("EXAMPLE_ROBOT_DATA_DIR")
    if env:
        yield Path(env)
        return
    prefixes = set()
    for d in [*site.getsitepackages(), site.getusersitepackages(), sysconfig.get_paths()["purelib"],
              *sys.path]:
        if d:
            prefixes.add(Path(d) / "cmeel.prefix")
    for p in sorted(prefixes):
        yield p / _ERD_SUBDIR
    for p in (sys.prefix, "/opt/openrobots", "/usr/local", "/usr"):
        yield Path(p) / _ERD_SUBDIR


def find_erd_dir() -> Path | None:
    """example-robot-data's ``robots`` directory (it installs no Python module, only files), or
    None; ``$EXAMPLE_ROBOT_DATA_DIR`` overrides the search. Safe at collection time."""
    return next((d for d in _erd_candidates() if d.is_dir()), None)


def erd_dir() -> Path:
    """:func:`find_erd_dir` inside a test: skips, or fails under CI, if absent."""
    found = find_erd_dir()
    env = os.environ.get("EXAMPLE_ROBOT_DATA_DIR")
    if found is None and env:
        pytest.fail(f"EXAMPLE_ROBOT_DATA_DIR={env!r} is not a directory", pytrace=False)
    require("example-robot-data", found is not None, "no share/example-robot-data/robots directory found")
    return found


def erd_path(relative: str) -> Path:
    """A file under example-robot-data's robots directory, e.g. ``"ur_description/urdf/ur5_robot.urdf"``."""
    path = erd_dir() / relative
    if not path.is_file():
        # the data set moves files between releases; a missing file is a test-list problem
        pytest.fail(f"example-robot-data has no {relative} (looked in {path.parent})", pytrace=False)
    return path


# ------------------------------------------------------------------- the generated functions

#: the name of every function of a default build (``Quantity.default``), in the registry's order
FUNCTIONS = tuple(Q.QUANTITIES[k].function for k in Q.DEFAULT)
#: generated function name -> how many state vectors it takes
ARITY = {Q.QUANTITIES[k].function: len(Q.QUANTITIES[k].arguments) for k in Q.DEFAULT}


def full_state(q, qd, qdd) -> dict:
    """Every argument of the registry from (q, qd, qdd): the Slotine-Li references are qd and qdd
    reversed, tau is 5 qdd (one state or a batch)."""
    return {"q": q, "qd": qd, "qdd": qdd, "qd_r": np.flip(qd, -1), "qdd_r": np.flip(qdd, -1), "tau": 5 * qdd}


def call(module, function: str, q, qd, qdd):
    """``module.function`` (a generated package or one of its backends) at :func:`full_state`,
    given only the vectors it takes."""
    state = full_state(q, qd, qdd)
    return getattr(module, function)(*(state[a] for a in Q.BY_FUNCTION[function].arguments))


def reference(robot, function: str, q, qd, qdd):
    """The numeric reference value of a generated function at :func:`full_state`."""
    return Q.evaluate(robot, Q.BY_FUNCTION[function].key, full_state(q, qd, qdd))


def output_size(function: str, robot, opts: Q.SweepOptions = Q.SweepOptions()) -> int:
    """How many doubles a generated function of ``robot`` writes (its C output buffer)."""
    (out,) = Q.BY_FUNCTION[function].outputs
    return int(np.prod(out.shape(robot, opts)))


# ------------------------------------------------------------------------------ random states

#: the arguments of the paper's states
PAPER_STATE = ("q", "qd", "qdd")


def random_state(seed: int, n: int, nq: int | None = None):
    """One state ``(q, qd, qdd)`` of a robot with n velocities (and nq = n configuration entries,
    or nq = n + 1 with a free-flyer), drawn as the paper and ``symgen verify`` do from
    ``numpy.random.default_rng(seed)``."""
    return next(random_states(seed, n, 1, nq))


def random_states(seed: int, n: int, count: int, nq: int | None = None):
    """``count`` such states, one after another from one ``default_rng(seed)``."""
    rng = np.random.default_rng(seed)
    for _ in range(count):
        state = Q.random_state(rng, n if nq is None else nq, n, PAPER_STATE)
        yield tuple(state[a] for a in PAPER_STATE)


def seeded_states(label: str, robot, count: int = 3, layout=None, unit_base: bool = False):
    """``(seed, states)``: ``count`` states ``{argument: vector}`` of every state argument, drawn as
    verify draws them from ``default_rng(seed)``, the seed being the CRC-32 of ``label`` (so a
    failure message can name it). ``layout``: the robot's joint layout, for joint models;
    ``unit_base``: a free-flyer's quaternion q[3:7] made unit afterwards, as Pinocchio reads it."""
    seed = zlib.crc32(label.encode())
    rng = np.random.default_rng(seed)
    states = [Q.random_state(rng, robot.nq, robot.nv, layout=layout) for _ in range(count)]
    for s in states if unit_base else ():
        s["q"][3:7] /= np.linalg.norm(s["q"][3:7])
    return seed, states


def move(robot, q, v, t: float):
    """q moved for time t at velocity v: q + t v, or for a free-flyer the base moved by the
    twist t v in its own frame (position += R t v_lin, quaternion x= exp(t w / 2); x, y, z, w
    order) and the joints by t v. Central differences along it are second-order accurate."""
    q, v = np.asarray(q, dtype=float), np.asarray(v, dtype=float)
    if not robot.floating_base:
        return q + t * v
    x, y, z, w = q[3:7]
    R = np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
                  [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
                  [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)]])
    angle = np.linalg.norm(v[3:6]) * t
    axis = v[3:6] / np.linalg.norm(v[3:6]) if angle else np.zeros(3)
    b = np.r_[np.sin(angle / 2) * axis, np.cos(angle / 2)]          # exp(t w / 2), (x, y, z, w)
    a = q[3:7]
    quat = np.r_[a[3] * b[:3] + b[3] * a[:3] + np.cross(a[:3], b[:3]), a[3] * b[3] - a[:3] @ b[:3]]
    return np.r_[q[:3] + R @ (t * v[:3]), quat, q[7:] + t * v[6:]]


def random_batch(seed: int, n: int, count: int, nq: int | None = None):
    """The same ``count`` states as a batch: ``(Q, QD, QDD)``, each of shape (count, n) (Q:
    (count, nq))."""
    return tuple(np.array(x) for x in zip(*random_states(seed, n, count, nq)))


# ------------------------------------------------------------------------------ errors

def max_abs(a) -> float:
    """The largest |entry| (0 for an empty array)."""
    a = np.asarray(a, dtype=float)
    return float(np.max(np.abs(a))) if a.size else 0.0


def relative_error(actual, expected, floor: float = 0.0, symmetric: bool = False) -> tuple[float, float]:
    """(relative, absolute) largest entrywise difference. Relative to max|expected| (to the larger
    max-abs entry of the two, ``symmetric``), that scale floored at ``floor``; absolute where the
    scale is 0."""
    diff = max_abs(np.asarray(actual, dtype=float) - np.asarray(expected, dtype=float))
    scale = max(max_abs(expected), max_abs(actual) if symmetric else 0.0, floor)
    return (diff / scale if scale > 0.0 else diff), diff


def rel_error(actual, expected) -> float:
    """max |actual - expected| over max(1, max |expected|); several outputs (a tuple) laid end to
    end (``quantities.flat``)."""
    return relative_error(Q.flat(actual), Q.flat(expected), floor=1.0)[0]


#: Worst relative error seen per (robot, quantity), for the summary printed with
#: SYMGEN_ORACLE_SUMMARY=1 (see conftest.py).
WORST: dict[tuple[str, str], float] = {}


def assert_close(actual, expected, what: str, context: str = "", rtol: float = RTOL, atol: float = ATOL,
                 floor: float = 0.0, against: str = "Pinocchio", summary: dict | None = WORST):
    """|actual - expected| <= rtol * max(max|expected|, floor) + atol, entrywise max, with a message
    giving the worst entry. ``context`` names the robot, seed and state so that a failure can be
    reproduced; its first word and ``what`` key the ``summary`` of worst errors (None: no entry)."""
    actual, expected = Q.flat(actual).astype(float), Q.flat(expected).astype(float)   # several outputs: end to end
    where = f" [{context}]" if context else ""
    assert actual.shape == expected.shape, f"{what}: shape {actual.shape} != {expected.shape}{where}"
    rel, err = relative_error(actual, expected, floor)
    scale = max(max_abs(expected), floor)
    if summary is not None:
        key = (context.split(" ")[0], what)
        summary[key] = max(summary.get(key, 0.0), rel)
    if not err <= rtol * scale + atol:
        diff = np.abs(actual - expected)
        worst = tuple(int(w) for w in np.unravel_index(int(np.argmax(diff)), diff.shape))
        raise AssertionError(
            f"{what} differs from {against}{where}: max abs error {err:.3e} at index {worst} "
            f"(got {actual[worst]:.12g}, {against} {expected[worst]:.12g}), relative {rel:.3e} "
            f"to max |entry| {scale:.3e}; allowed {rtol:.0e} relative + {atol:.0e}")


def assert_agree(actual, expected, what: str, tol: float = 1e-9):
    """Two computations of the same values (generated NumPy or C, the numeric reference, a batch
    and its single calls): within ``tol`` of max(1, max|expected|). ``what`` names the seed."""
    assert_close(actual, expected, what, rtol=tol, atol=0.0, floor=1.0, against="the expected value",
                 summary=None)


def assert_matches_reference(actual, robot, function: str, q, qd, qdd, what: str):
    """``actual`` against :func:`reference`, within the registry's tolerance at that state
    (looser than 1e-9 for a quantity that inherits cond(M))."""
    tol = Q.tolerance(Q.BY_FUNCTION[function], Q.evaluate(robot, "M", {"q": q}))
    assert_agree(actual, reference(robot, function, q, qd, qdd), what, tol)


def task_inertia(oracle, state):
    """Pinocchio's route to operational_space_inertia at ``state``: the tasks' conditioning that
    the operational-space functions' tolerance allows for (``quantities.tolerance``)."""
    return Q.QUANTITIES["Lambda"].pinocchio(oracle, state)


def compare_with_pinocchio(robot, model, label: str, keys=None, base: float = 1e-9, states: int = 3):
    """Every registered quantity of ``keys`` (all by default) that has a Pinocchio counterpart, as
    the numeric reference computes it in both coordinate choices, against Pinocchio's value, at
    ``states`` random states seeded from ``label``; tolerance ``base``, or 100 eps cond(M) for a
    solve with M (times cond(Lambda) for the operational-space functions: ``quantities.tolerance``). Christoffel symbols (n Coriolis matrices in
    Pinocchio) at the first state only."""
    oracle = PinOracle(robot, model)
    seed, drawn = seeded_states(label, robot, states)
    chosen = [Q.QUANTITIES[k] for k in keys] if keys is not None else list(Q.QUANTITIES.values())
    for t, state in enumerate(drawn):
        ctx = f"{label} seed={seed} state#{t}"
        for x in chosen:
            if x.pinocchio is None or (x.key == "Gamma" and t > 0):
                continue
            at = x.oracle_state(state) if x.oracle_state else state
            expected = x.pinocchio(oracle, at)
            rtol = Q.tolerance(x, oracle.mass_matrix(at["q"]), base, task_inertia(oracle, at) if x.task else None)
            for frame in Q.FRAMES:
                got = Q.evaluate(robot, x.key, at, Q.SweepOptions(frame=frame))
                assert_close(got, expected, f"{x.function} ({frame} frame)", ctx, rtol=rtol)


# ------------------------------------------------------------------------------- random trees

#: the joint kinds of :func:`mixed_tree`: single-DoF and Pinocchio's joint models with several speeds
KINDS = ("revolute", "prismatic", "spherical", "planar", "freeflyer")


def mixed_tree(seed: int, size: int = 8, floating: bool = True, kinds: tuple = None):
    """A random tree: a root free-flyer (or none), then ``size`` joints of random kinds (each of
    ``kinds``, by default :data:`KINDS`, at least once when size allows), random parents, placements
    and general axes."""
    from symgen.model import Body, Robot, free_flyer_bodies, group_bodies
    from symgen.robots import random_inertia
    from symgen.spatial import rpy_matrix

    kinds = KINDS if kinds is None else tuple(kinds)
    rng = np.random.default_rng(seed)
    bodies = free_flyer_bodies("torso", random_inertia(rng)) if floating else []
    kinds = list(kinds) + [str(k) for k in rng.choice(kinds, max(0, size - len(kinds)))]
    rng.shuffle(kinds)
    path = [len(bodies) - 1] if floating else [-1]             # the links from the root to the last one
    for k, kind in enumerate(kinds[:size]):
        del path[int(rng.integers(1, len(path) + 1)):]           # depth first (Pinocchio's order):
        parent = path[-1]                                        # a child of the last link or an ancestor
        R = tuple(map(tuple, rpy_matrix(rng.uniform(-1.5, 1.5, 3))))
        p = tuple(rng.uniform(-0.3, 0.3, 3))
        name = f"l{k}"
        if kind in ("revolute", "prismatic"):
            axis = rng.normal(size=3)
            bodies.append(Body(name, f"{name}_joint", kind, tuple(axis / np.linalg.norm(axis)), parent, R, p,
                               random_inertia(rng)))
        else:
            bodies.extend(group_bodies(kind, f"{name}_joint", name, parent, len(bodies), R, p, random_inertia(rng)))
        path.append(len(bodies) - 1)
    return Robot(f"mixed{seed}", tuple(bodies), floating_base=floating)


# -------------------------------------------------------------- a Pinocchio model without URDF

def pin_model_from_robot(robot):
    """A Pinocchio model built directly from a symgen Robot, joint i <-> body i, no URDF involved.

    It checks symgen's algorithms on the model symgen holds (independently of its URDF reader
    and writer): the joint frame is placed by (rotation, translation) in the parent's body frame,
    the body frame is the joint frame moved by q, inertias are given about the CoM."""
    pin = require_pinocchio()
    model = pin.Model()
    model.name = robot.name
    # Pinocchio's crba and Coriolis assume depth-first joint order (each subtree a contiguous
    # block of v); symgen only promises parent < child, so add the bodies in pre-order.
    children = [[] for _ in range(robot.n)]
    roots = []
    for i, p in enumerate(robot.parent):
        (roots if p < 0 else children[p]).append(i)
    order, stack = [], roots[::-1]
    while stack:
        i = stack.pop()
        order.append(i)
        stack.extend(children[i][::-1])
    jid_of = {-1: 0}
    if robot.free:                 # the free-flyer's six bodies are one Pinocchio joint
        base = robot.bodies[robot.free - 1]
        jid = model.addJoint(0, pin.JointModelFreeFlyer(), pin.SE3.Identity(), base.joint_name)
        model.appendBodyToJoint(jid, pin.Inertia(float(base.inertia.mass), np.array(base.inertia.com, dtype=float),
                                                 np.array(base.inertia.I_com, dtype=float)), pin.SE3.Identity())
        jid_of.update({i: jid for i in range(robot.free)})
        order = order[robot.free:]
    # Pinocchio's Python API cannot give an unbounded (continuous) joint an arbitrary axis, only
    # x, y or z; such a joint turns about z of a frame offset[i] (a rotation taking z to the axis)
    # relative to symgen's joint frame. The offset commutes with the joint motion, so symgen's
    # body frame is Pinocchio's joint frame times offset[i]^-1, in which the inertia and the
    # children are placed.
    offset = {i: pin.SE3.Identity() for i in range(-1, robot.free)}
    for i in order:
        body = robot.bodies[i]
        axis = np.array(body.axis, dtype=float)
        if body.joint_type == "continuous":
            offset[i] = pin.SE3(_rotation_taking_z_to(axis), np.zeros(3))
            joint = pin.JointModelRUBZ()
        else:
            offset[i] = pin.SE3.Identity()
            joint = (pin.JointModelPrismaticUnaligned if body.joint_type == "prismatic"
                     else pin.JointModelRevoluteUnaligned)(axis)
        placement = pin.SE3(np.array(body.rotation, dtype=float), np.array(body.translation, dtype=float))
        placement = offset[body.parent].inverse() * placement * offset[i]
        jid = jid_of[i] = model.addJoint(jid_of[body.parent], joint, placement, body.joint_name)
        inertia = body.inertia
        model.appendBodyToJoint(jid, pin.Inertia(float(inertia.mass), np.array(inertia.com, dtype=float),
                                                 np.array(inertia.I_com, dtype=float)),
                                offset[i].inverse())
    return model


def _rotation_taking_z_to(axis):
    """A rotation matrix R with R @ e_z = axis (unit)."""
    z = axis / np.linalg.norm(axis)
    other = np.eye(3)[int(np.argmin(np.abs(z)))]
    x = np.cross(other, z)
    x /= np.linalg.norm(x)
    return np.column_stack([x, np.cross(z, x), z])


# ------------------------------------------------------------------------------- Pinocchio side

class PinOracle(_oracle.PinOracle):
    """:class:`symgen.pinocchio_oracle.PinOracle`, with Pinocchio required the tests' way (skip, or fail
    under CI)."""

    def __init__(self, robot, model):
        super().__init__(robot, model, require_pinocchio())
