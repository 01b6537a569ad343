"""The cluster CRBA (:mod:`symgen.algorithms.cluster_crba`): M̄ = GᵀMG of a robot with a constant
embedding, one force carried up per reduced column, against Pinocchio.

The reference is Pinocchio's own reading of each URDF+ file (``buildModelFromUrdf``: urdfdom skips
``<coupling>``, every rotor an ordinary joint, GRBDA's ``floating`` root joint a free-flyer): its
``crba`` on the spanning tree at q_full = G y, made symmetric and projected, GᵀMG. Each of the
three versions (body frames, ground coordinates, the local convention) is checked on numbers, with
the axisymmetric rotors turning and turn-free, and with other inertial parameters; the generated
code (NumPy and C) is checked where the build picks the cluster route. Every comparison names its seed.
"""
from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pytest

import symgen
from symgen import quantities as Q
from symgen.algorithms.cluster_crba import cluster_crba, cluster_crba_ground, cluster_crba_local
from symgen.axisymmetric import inertial_view
from symgen.backend import NUMERIC
from symgen.codegen.build import BuildOptions, build, import_package
from symgen.codegen.symbolic import trace_all
from symgen.algorithms.regressor import robot_parameters
from symgen.kinematics import with_parameters
from symgen.oracle_loops import oracle_for
from support import seeded_states

DATA = Path(__file__).parent / "data"

#: (file under tests/data, a floating root joint in the file)
ROBOTS = {
    "rotor_chain": ("urdfplus/rotor_chain.urdf", False),
    "belt_leg": ("urdfplus/belt_leg.urdf", False),
    "mini_cheetah": ("grbda/mini_cheetah.urdf", True),
    "mit_humanoid": ("grbda/mit_humanoid.urdf", True),
}

VERSIONS = (cluster_crba, cluster_crba_ground, cluster_crba_local)


def _load(key):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")                 # GRBDA's hip inertias: tolerated, with a warning
        return symgen.load_urdf(DATA / ROBOTS[key][0])


@pytest.fixture(scope="module")
def oracles(pin):
    cache = {}

    def get(key):
        if key not in cache:
            robot = _load(key)
            cache[key] = robot, oracle_for(robot, pin.buildModelFromUrdf(str(DATA / ROBOTS[key][0])), pin)
        return cache[key]
    return get



def _rel(a, b):
    return float(np.max(np.abs(a - b))) / max(1.0, float(np.max(np.abs(b))))


def test_the_belt_is_one_rotor_in_two_columns(oracles):
    """The belt leg's ankle rotor turns with 12 (q_knee + q_ankle): its body is in two columns of G,
    so the cluster CRBA carries it in both and counts the pair once (the M_ii term)."""
    robot, _ = oracles("belt_leg")
    cols = robot.embedding.columns()
    rotor = robot.full.joint_names.index("ankle_rotor_joint")
    assert [dict(c).get(rotor) for c in cols] == [None, 12.0, 12.0]


@pytest.mark.parametrize("key", ROBOTS)
@pytest.mark.parametrize("version", VERSIONS, ids=lambda f: f.__name__)
def test_cluster_crba_is_the_projected_mass_matrix_of_pinocchio(oracles, key, version):
    robot, oracle = oracles(key)
    emb = robot.embedding
    seed, states = seeded_states(f"cluster-{version.__name__}-{key}", robot, unit_base=ROBOTS[key][1])
    for t, s in enumerate(states):
        want = oracle.mass_matrix(s["q"])
        for full in (robot.full, inertial_view(robot).full):        # rotors turning, and turn-free
            M = version(full, emb.expand_q(s["q"]), emb.columns(), NUMERIC)
            err = _rel(M, want)
            assert err < 1e-12, f"{key} {version.__name__}: rel. error {err:.1e}, seed {seed} state #{t}"


@pytest.mark.parametrize("key", ["belt_leg", "mini_cheetah"])
def test_cluster_crba_with_other_inertial_parameters(pin, key):
    """With parameters theta drawn around the nominal ones (every entry moved), as a --parametric
    build computes them."""
    robot = _load(key)
    oracle = oracle_for(robot, pin.buildModelFromUrdf(str(DATA / ROBOTS[key][0])), pin)    # its own: changed below
    emb = robot.embedding
    seed, states = seeded_states(f"params-{key}", robot, count=2, unit_base=ROBOTS[key][1])
    rng = np.random.default_rng(seed)
    for t, s in enumerate(states):
        theta = Q.ARGUMENTS["params"].draw(rng, robot.nq, robot.nv, nominal=robot_parameters(robot.full))
        oracle.set_parameters(theta)
        want = oracle.mass_matrix(s["q"])
        for version in VERSIONS:
            M = version(with_parameters(robot.full, theta), emb.expand_q(s["q"]), emb.columns(), NUMERIC)
            assert _rel(M, want) < 1e-12, f"{key} {version.__name__}: seed {seed} state #{t}"


@pytest.mark.parametrize("key", ["belt_leg", "mini_cheetah"])
def test_reduced_solves_with_the_cluster_mass_matrix_in_the_local_convention(oracles, key):
    """Forward dynamics and M̄^-1 of the reduced system with M̄ from the cluster CRBA in the local
    convention (the variant a build picks on these robots), on numbers."""
    from dataclasses import replace

    robot, oracle = oracles(key)
    seed, states = seeded_states(f"reduced-local-{key}", robot, count=2, unit_base=ROBOTS[key][1])
    for name, key_q in (("forward_dynamics", "qdd"), ("mass_matrix_inverse", "Minv")):
        sweep = Q.SWEEPS[name]
        local = next(v for v in sweep.variants if getattr(v, "frame", None) == "local")
        x = Q.QUANTITIES[key_q]
        for t, s in enumerate(states):
            args = {a: s[a] for a in sweep.arguments}
            got = Q.run_sweep(replace(sweep, run=local), robot, args, NUMERIC, Q.SweepOptions())[x.outputs[0].name]
            tol = Q.tolerance(x, oracle.mass_matrix(s["q"]))
            err = _rel(got, x.pinocchio(oracle, s))
            assert err <= tol, f"{key} {name} (local): rel. error {err:.1e} > {tol:.0e}, seed {seed} state #{t}"


@pytest.mark.parametrize("key", ["mini_cheetah", "mit_humanoid"])
def test_coriolis_matrix_in_the_local_convention_with_the_floating_root_joint(oracles, key):
    """Algorithm 1 in the local convention on the spanning tree, GRBDA's URDF floating root joint
    seen as a floating base (the variant a build picks on these robots), projected: M̄, Ṁ̄ = C̄ + C̄ᵀ
    and C̄ against Pinocchio, on numbers."""
    from dataclasses import replace

    from symgen.quantities.sweeps import _algorithm1_root_local

    robot, oracle = oracles(key)
    sweep = replace(Q.SWEEPS["algorithm1"], run=_algorithm1_root_local)
    seed, states = seeded_states(f"algorithm1-local-{key}", robot, count=2, unit_base=ROBOTS[key][1])
    for t, s in enumerate(states):
        got = Q.run_sweep(sweep, robot, {"q": s["q"], "qd": s["qd"]}, NUMERIC, Q.SweepOptions())
        C = oracle.coriolis(s["q"], s["qd"])
        where = f"{key}: seed {seed} state #{t}"
        assert _rel(got["C"], C) < 1e-12 and _rel(got["M"], oracle.mass_matrix(s["q"])) < 1e-12, where
        assert _rel(got["Mdot"], C + C.T) < 1e-12, where


def test_the_build_picks_the_cluster_route_where_it_costs_less():
    """On GRBDA's robots the cluster CRBA in the local convention costs less than every spanning-tree
    CRBA projected by G (MIT Humanoid 2,616 operations against 6,702 at this commit); a robot with
    no embedding and a mechanism with loops never trace it."""
    from symgen.codegen.program import count_ops
    from symgen.quantities.sweeps import _cluster_crba, _cluster_crba_local

    for key in ("mini_cheetah", "mit_humanoid"):
        fn = trace_all(_load(key), ("M",))["M"]
        assert fn.route == "cluster_crba_local", (key, fn.route)
        assert count_ops(fn)["total"] < {"mini_cheetah": 2455, "mit_humanoid": 6702}[key]
    fn = trace_all(_load("mini_cheetah"), ("C",))["C"]
    assert fn.route == "algorithm1_root_local" and count_ops(fn)["total"] < 7749
    plain = symgen.load_urdf(DATA / "urdfplus" / "belt_leg.urdf").full
    loops = symgen.load_urdf(DATA / "urdfplus" / "four_bar.urdf")
    for run in (_cluster_crba, _cluster_crba_local):
        assert not run.applies(plain) and not run.applies(loops)


@pytest.fixture(scope="module", params=["belt_leg", "mini_cheetah"])
def package(request, tmp_path_factory, oracles):
    robot, oracle = oracles(request.param)
    opts = BuildOptions(quantities=("M", "qdd", "Minv"), copt="-O0", jobs=1)
    path = build(robot, tmp_path_factory.mktemp("ccrba"), opts=opts).path
    return request.param, robot, oracle, import_package(path)


@pytest.mark.parametrize("backend", ["numpy", "c"])
def test_generated_code_matches_pinocchio(package, backend):
    key, robot, oracle, pkg = package
    mod = getattr(pkg, backend)
    seed, states = seeded_states(f"generated-{backend}-{key}", robot, unit_base=ROBOTS[key][1])
    for t, s in enumerate(states):
        for x in (Q.QUANTITIES[k] for k in ("M", "qdd", "Minv")):
            tol = Q.tolerance(x, oracle.mass_matrix(s["q"]))
            err = _rel(Q.flat(Q.call(mod, x.key, s)), Q.flat(x.pinocchio(oracle, s)))
            assert err <= tol, f"{key} {backend} {x.function}: rel. error {err:.1e} > {tol:.0e}, seed {seed} state #{t}"


@pytest.mark.slow
def test_generated_coriolis_matrix_of_the_mini_cheetah(oracles, tmp_path):
    """C̄ by Algorithm 1 in the local convention (the floating root joint seen as a floating base),
    generated NumPy and C (a 12-28 s build here, by the load: -m slow; numbers are checked unmarked above)."""
    robot, oracle = oracles("mini_cheetah")
    pkg = import_package(build(robot, tmp_path, opts=BuildOptions(quantities=("C",), copt="-O0")).path)
    seed, states = seeded_states("generated-C-mini_cheetah", robot, unit_base=ROBOTS["mini_cheetah"][1])
    for backend in ("numpy", "c"):
        for t, s in enumerate(states):
            err = _rel(getattr(pkg, backend).coriolis_matrix(s["q"], s["qd"]), oracle.coriolis(s["q"], s["qd"]))
            assert err < 1e-9, f"mini_cheetah {backend} C: rel. error {err:.1e}, seed {seed} state #{t}"
