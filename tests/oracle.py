"""Pinocchio as the outside oracle: locating it and example-robot-data, matching its indices to
symgen's, and comparing the two at random states.

symgen's state is one number per joint, in ``robot.joint_names`` order. Pinocchio orders joints
by its own tree traversal and gives a continuous (unbounded revolute) joint two configuration
entries, (cos q, sin q), and one velocity entry. :class:`JointMap` matches the two by joint name
and builds the permutation ``P`` with ``v_pin = P @ v_symgen``, so that

    M_symgen = P.T @ M_pin @ P,    C_symgen = P.T @ C_pin @ P,    tau_symgen = P.T @ tau_pin.

Every check here is stated against Pinocchio's own functions (``crba``, ``rnea``,
``computeCoriolisMatrix``), never against another symgen function, so an error common to all of
symgen's algorithms (a wrong joint transform, a misread URDF) still shows.
"""
from __future__ import annotations

import os
import site
import sys
import sysconfig
from pathlib import Path

import numpy as np
import pytest

import symgen.pinocchio_oracle as _oracle
from symgen.pinocchio_oracle import OracleError  # noqa: F401  (re-exported for the tests)

#: Relative tolerance of every comparison, against the largest entry of the compared quantity.
RTOL = 1e-9
#: Absolute floor, for quantities that are zero up to round-off (e.g. C at a state with qd ~ 0).
ATOL = 1e-12

# ------------------------------------------------------------------ finding the oracle and data

_MISSING_EXTRA = ("{what} is not installed, but CI is set: the test extra was not installed "
                  "(pip install -e '.[test]'). Pinocchio is symgen's outside oracle; a CI run "
                  "without it checks nothing against the outside world.")


def _skip_or_fail(what: str, detail: str):
    if os.environ.get("CI"):
        pytest.fail(_MISSING_EXTRA.format(what=what) + f" ({detail})", pytrace=False)
    pytest.skip(f"{what} is not installed ({detail})")


def require_pinocchio():
    """The ``pinocchio`` module; skips the test if it is missing, fails it if CI is set."""
    try:
        import pinocchio
    except ImportError as exc:                      # pragma: no cover - depends on the environment
        _skip_or_fail("pinocchio (PyPI package 'pin')", str(exc))
    return pinocchio


_ERD_SUBDIR = Path("share", "example-robot-data", "robots")


def _erd_candidates():
    env = os.environ.get("EXAMPLE_ROBOT_DATA_DIR")
    if env:
        if not Path(env).is_dir():
            pytest.fail(f"EXAMPLE_ROBOT_DATA_DIR={env!r} is not a directory", pytrace=False)
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


def erd_dir() -> Path:
    """example-robot-data's ``robots`` directory (it installs no Python module, only files);
    ``$EXAMPLE_ROBOT_DATA_DIR`` overrides the search. Skips, or fails under CI, if absent."""
    for d in _erd_candidates():
        if d.is_dir():
            return d
    _skip_or_fail("example-robot-data", "no share/example-robot-data/robots directory found")


def erd_path(relative: str) -> Path:
    """A file under example-robot-data's robots directory, e.g. ``"ur_description/urdf/ur5_robot.urdf"``."""
    path = erd_dir() / relative
    if not path.is_file():
        # the data set moves files between releases; a missing file is a test-list problem
        pytest.fail(f"example-robot-data has no {relative} (looked in {path.parent})", pytrace=False)
    return path


# Index matching (JointMap) and Pinocchio's quantities (PinOracle) live in symgen.pinocchio_oracle, which
# `symgen verify --urdf` uses too.

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
    # Pinocchio's Python API cannot give an unbounded (continuous) joint an arbitrary axis, only
    # x, y or z; such a joint turns about z of a frame offset[i] (a rotation taking z to the axis)
    # relative to symgen's joint frame. The offset commutes with the joint motion, so symgen's
    # body frame is Pinocchio's joint frame times offset[i]^-1, in which the inertia and the
    # children are placed.
    offset = {-1: pin.SE3.Identity()}
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
    helper = np.eye(3)[int(np.argmin(np.abs(z)))]
    x = np.cross(helper, z)
    x /= np.linalg.norm(x)
    return np.column_stack([x, np.cross(z, x), z])


# ------------------------------------------------------------------------------- Pinocchio side

class PinOracle(_oracle.PinOracle):
    """:class:`symgen.pinocchio_oracle.PinOracle`, with Pinocchio required the tests' way (skip, or fail
    under CI)."""

    def __init__(self, robot, model):
        super().__init__(robot, model, require_pinocchio())


# ------------------------------------------------------------------------------------ checking

def random_states(seed: int, n: int, count: int):
    """``count`` states as in the paper's Section 5: q in [0, 2 pi], qd in [0, 10]; qdd in [-10, 10]."""
    rng = np.random.default_rng(seed)
    for _ in range(count):
        yield (rng.uniform(0.0, 2 * np.pi, n), rng.uniform(0.0, 10.0, n), rng.uniform(-10.0, 10.0, n))


#: Worst relative error seen per (robot, quantity), for the summary printed with
#: SYMGEN_ORACLE_SUMMARY=1 (see conftest.py).
WORST: dict[tuple[str, str], float] = {}


def assert_close(actual, expected, what: str, context: str, rtol: float = RTOL, atol: float = ATOL):
    """|actual - expected| <= rtol * max|expected| + atol, entrywise max. ``context`` names the
    robot, seed and state so that a failure can be reproduced."""
    actual, expected = np.asarray(actual, float), np.asarray(expected, float)
    assert actual.shape == expected.shape, f"{what}: shape {actual.shape} != {expected.shape} [{context}]"
    scale = float(np.max(np.abs(expected), initial=0.0))
    diff = np.abs(actual - expected)
    err = float(np.max(diff, initial=0.0))
    rel = err / scale if scale > 0 else err
    key = (context.split(" ")[0], what)
    WORST[key] = max(WORST.get(key, 0.0), rel)
    if not err <= rtol * scale + atol:
        worst = tuple(int(w) for w in np.unravel_index(int(np.argmax(diff)), diff.shape))
        raise AssertionError(
            f"{what} differs from Pinocchio [{context}]: max abs error {err:.3e} at index {worst} "
            f"(symgen {actual[worst]:.12g}, pinocchio {expected[worst]:.12g}), relative {rel:.3e} "
            f"to max |entry| {scale:.3e}; allowed {rtol:.0e} relative + {atol:.0e}")
