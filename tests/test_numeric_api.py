"""The numeric API (``symgen.mass_matrix``, ``coriolis``, ``christoffel``, ``inverse_dynamics``, ...:
every function ``symgen/__init__.py`` exports) equals the generated package of the same robot, its
NumPy module and its compiled C, for every kind of robot: a fixed base, a free-flyer, ``--mimic``,
URDF+ couplings, a loop (a ``Closed`` view, q from the package's ``solve_loops``) and MJCF.

The package is the contract the API must not contradict: both go through the registry
(``symgen.quantities``), and these tests fail if the API takes another route for some robot kind
(the four-bar's M̄ was the spanning tree's M on the independent size: [[0.03425]] for [[0.22344]]).
Each package is built once per module (``-O0``, only the functions the API offers); every
comparison names its seed.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import support
import symgen
from symgen.codegen.build import BuildOptions, build, import_package
from test_mimic import gripper

ROOT = Path(__file__).resolve().parent.parent
DATA = Path(__file__).resolve().parent / "data"
MARS = (0.0, 0.0, -3.72)

#: what the numeric API offers: its function -> (the package's functions it equals, its arguments)
API = {
    "mass_matrix": (("mass_matrix",), ("q",)),
    "coriolis": (("mass_matrix", "mass_matrix_dot", "coriolis_matrix"), ("q", "qd")),
    "coriolis_matrix": (("coriolis_matrix",), ("q", "qd")),
    "mass_matrix_dot": (("mass_matrix_dot",), ("q", "qd")),
    "christoffel": (("christoffel",), ("q",)),
    "inverse_dynamics": (("inverse_dynamics",), ("q", "qd", "qdd")),
}
#: the registry keys of those package functions (and, for a loop, what solve_loops needs)
KEYS = ("M", "Mdot", "C", "Gamma", "tau")
LOOP_KEYS = ("phi", "Kl")

#: kind -> (how to load the robot, its build's gravity)
KINDS = {
    "fixed": (lambda tmp: symgen.load_urdf(ROOT / "symgen" / "examples" / "arm4.urdf"), None),
    "free_flyer": (lambda tmp: symgen.load_urdf(ROOT / "symgen" / "examples" / "arm4.urdf", floating_base=True), MARS),
    "mimic": (lambda tmp: symgen.load_urdf(_written(tmp / "gripper.urdf", gripper()), mimic=True), None),
    "couplings": (lambda tmp: symgen.load_urdf(DATA / "urdfplus" / "belt_leg.urdf"), None),
    "loop": (lambda tmp: symgen.load_urdf(DATA / "urdfplus" / "four_bar.urdf"), None),
    "mjcf": (lambda tmp: symgen.load_robot(DATA / "mjcf" / "hopper.xml"), None),
}


def _written(path, text):
    path.write_text(text)
    return path


def test_the_kinds_are_the_views_they_claim():
    """Each kind is the robot class the readers return for it, so a kind cannot silently fall
    back to a plain tree (the four-bar's bug: its view was not recognised)."""
    import tempfile

    from symgen.closed import Closed
    from symgen.couplings import Coupled
    from symgen.mimic import Embedded
    from symgen.model import Robot

    with tempfile.TemporaryDirectory() as tmp:
        robots = {kind: load(Path(tmp)) for kind, (load, _) in KINDS.items()}
    assert type(robots["fixed"]) is Robot and not robots["fixed"].floating_base
    assert type(robots["free_flyer"]) is Robot and robots["free_flyer"].floating_base
    assert type(robots["mimic"]) is Embedded and type(robots["couplings"]) is Coupled
    assert type(robots["loop"]) is Closed and (robots["loop"].nq, robots["loop"].nv) == (3, 1)
    assert type(robots["mjcf"]) is Robot and robots["mjcf"].mujoco_qpos0 is not None


@pytest.fixture(scope="module")
def packages(tmp_path_factory):
    """{kind: (robot, package, gravity)}, each package built once with the functions the API offers."""
    tmp = tmp_path_factory.mktemp("numeric_api")
    out = {}
    for kind, (load, gravity) in KINDS.items():
        robot = load(tmp)
        keys = KEYS + (LOOP_KEYS if kind == "loop" else ())
        opts = BuildOptions(quantities=keys, copt="-O0", **({"gravity": gravity} if gravity else {}))
        out[kind] = (robot, import_package(build(robot, tmp, name=f"api_{kind}", opts=opts).path), gravity)
    return out


def _states(kind, robot, pkg, count=3):
    """(seed, states) as verify draws them; a loop's q closed by the package's own solve_loops."""
    layout = getattr(pkg, "joint_models", None)
    seed, states = support.seeded_states(f"numeric-api-{kind}", robot, count, layout=layout)
    if kind == "loop":
        for s in states:
            s["q"] = pkg.solve_loops(s["q"])
    return seed, states


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("backend", ["numpy", "c"])
def test_the_numeric_api_equals_the_generated_package(packages, kind, backend):
    robot, pkg, gravity = packages[kind]
    mod = getattr(pkg, backend)
    assert mod is not None, f"{kind}: the {backend} backend is missing (not compiled?)"
    seed, states = _states(kind, robot, pkg)
    for t, state in enumerate(states):
        where = f"{kind} {backend} seed={seed} state#{t}"
        for function, (generated, arguments) in API.items():
            args = [state[a] for a in arguments]
            extra = {"gravity": gravity} if function == "inverse_dynamics" and gravity else {}
            got = getattr(symgen, function)(robot, *args, **extra)
            expected = tuple(getattr(mod, f)(*args[:len(_arguments(f))]) for f in generated)
            expected = expected[0] if len(expected) == 1 else expected
            if isinstance(expected, tuple):
                assert isinstance(got, tuple) and len(got) == len(expected), f"symgen.{function}: {where}"
            support.assert_agree(got, expected, f"symgen.{function} vs {backend} {'/'.join(generated)} [{where}]")


def _arguments(function):
    from symgen import quantities as Q

    return Q.BY_FUNCTION[function].arguments


def test_the_four_bar_of_the_issue(packages, pin):
    """The reproducer: at q = solve_loops([0.3, 0.1, -0.2]) the four-bar's M̄ is 0.22344 and τ̄(v = 0.7,
    a = 0.2) 0.1027, as the package and Pinocchio's spanning tree projected by its own G(q), Ġ give
    (the API used to return the spanning tree's M[0, 0], 0.03425, and 0.00685)."""
    from symgen.oracle_loops import oracle_for

    robot, pkg, _ = packages["loop"]
    q = pkg.solve_loops(np.array([0.3, 0.1, -0.2]))
    M, tau = symgen.mass_matrix(robot, q), symgen.inverse_dynamics(robot, q, [0.7], [0.2])
    for mod in (pkg.numpy, pkg.c):
        support.assert_agree(M, mod.mass_matrix(q), f"four-bar M {mod.__name__}")
        support.assert_agree(tau, mod.inverse_dynamics(q, np.array([0.7]), np.array([0.2])), f"four-bar tau {mod.__name__}")
    oracle = oracle_for(robot, pin.buildModelFromUrdf(str(DATA / "urdfplus" / "four_bar.urdf")), pin)
    oracle.at(q)
    support.assert_close(M, oracle.mass_matrix(q), "four-bar M", "four_bar q=solve_loops([0.3, 0.1, -0.2])")
    support.assert_close(tau, oracle.inverse_dynamics(q, np.array([0.7]), np.array([0.2])), "four-bar tau",
                         "four_bar q=solve_loops([0.3, 0.1, -0.2])")
    assert M.shape == (1, 1) and abs(M[0, 0] - 0.22344) < 1e-5 and abs(tau[0] - 0.1027) < 1e-4, (M, tau)


def test_a_wrong_size_is_a_one_line_error(packages):
    """The API checks sizes as the registry does: a loop's q has the spanning tree's 3 entries, v 1."""
    robot, _, _ = packages["loop"]
    with pytest.raises(symgen.ModelError, match=r"q must have shape \(3,\)"):
        symgen.mass_matrix(robot, np.zeros(1))
    with pytest.raises(symgen.ModelError, match=r"qd must have shape \(1,\)"):
        symgen.coriolis(robot, np.zeros(3), np.zeros(3))
