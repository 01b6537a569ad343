"""Contact and impulse dynamics and the whole-body terms (issue #25, items 5 and 7): the generated
terms and the package's run-time solve over the active contacts against Pinocchio 4.1
(forwardDynamics(q, v, tau, J, gamma[, damping]) with the active contacts' LOCAL_WORLD_ALIGNED rows
and classical drift, impulseDynamics, computeAllTerms and the frame and centroidal calls), NumPy
and C, one state and batches, on solo12 (4 point contacts at the feet, free-flyer), panda (a flat
contact at the hand and a point at the tool: mixed types, and a dependent pair) and a random
quadruped on a free-flyer (a flat and three point contacts); random active sets including none and
all; the impulse's contact points at rest; a singular set refused; the CLI's option errors.
Tolerance: 100 eps cond(KKT), at least 1e-9 relative.
"""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

import symgen
from support import erd_path, pin_model_from_robot
from symgen import quantities as Q
from symgen import robots
from symgen.cli import main
from symgen.codegen.build import BuildOptions, build, import_package
from symgen.errors import OptionError
from symgen.oracle_contact import with_contacts
from symgen import oracle_contact as ocn
from symgen.pinocchio_oracle import PinOracle
from symgen.verify_contact import _active_rows, kkt_tolerance

ROOT_ARM4 = Path(__file__).resolve().parents[1] / "symgen" / "examples" / "arm4.urdf"
SOLO = "solo_description/robots/solo12.urdf"
PANDA = "panda_description/urdf/panda.urdf"
FEET = tuple((f"{leg}_FOOT", "3d") for leg in ("FL", "FR", "HL", "HR"))
KEYS = ("contact_terms", "impulse_terms", "whole_body_terms")


def _package(robot, tmp_path_factory, name, contacts, frames=None):
    opts = BuildOptions(quantities=KEYS, frames=frames, contacts=contacts, copt="-O0", jobs=2)
    pkg = import_package(build(robot, tmp_path_factory.mktemp(name), name=name, opts=opts).path)
    pkg.frame_specs = tuple(json.loads((Path(pkg.__file__).parent / "manifest.json").read_text())["frames"])
    return pkg


@pytest.fixture(scope="module")
def cases(pin, tmp_path_factory):
    """{label: (robot, oracle with the contacts, package)}."""
    out = {}
    path = str(erd_path(SOLO))
    solo = symgen.load_urdf(path, floating_base=True)
    pkg = _package(solo, tmp_path_factory, "solocd", FEET)
    out["solo12"] = (solo, with_contacts(PinOracle(solo, pin.buildModelFromUrdf(path, pin.JointModelFreeFlyer()), pin,
                                                   frames=pkg.frame_specs), FEET), pkg)
    path = str(erd_path(PANDA))
    panda = symgen.load_urdf(path)
    contacts = (("panda_hand", "6d"), ("tcp", "3d"))
    pkg = _package(panda, tmp_path_factory, "pandacd", contacts, frames=("tcp=panda_hand@0,0,0.1034",))
    out["panda"] = (panda, with_contacts(PinOracle(panda, pin.buildModelFromUrdf(path), pin, frames=pkg.frame_specs),
                                         contacts), pkg)
    legged = robots.make("quadruped", 12, 7)                 # a free-flyer, legs of 3 random-axis joints
    contacts = ((legged.leaf_links[0], "6d"),) + tuple((f, "3d") for f in legged.leaf_links[1:])
    pkg = _package(legged, tmp_path_factory, "leggedcd", contacts)
    out["legged"] = (legged, with_contacts(PinOracle(legged, pin_model_from_robot(legged), pin, frames=pkg.frame_specs),
                                           contacts), pkg)
    return out


def _dependent(label, on):
    """panda's hand (6d) and its tool point (3d) on one body: their rows are dependent."""
    return label == "panda" and on.all()


def _active_sets(rng, count, draws=4):
    return [np.zeros(count), np.ones(count)] + [rng.integers(0, 2, count).astype(float) for _ in range(draws)]


def _close(got, want, tol, what):
    got, want = np.ravel(got), np.ravel(want)
    err = np.max(np.abs(got - want), initial=0.0) / max(1.0, np.max(np.abs(want), initial=0.0))
    assert err <= tol, f"{what}: relative error {err:.2e} > {tol:.1e}"


@pytest.mark.pinocchio
@pytest.mark.parametrize("label", ["solo12", "panda", "legged"])
def test_contact_and_impulse_dynamics_match_pinocchio_on_random_active_sets(cases, label):
    robot, oracle, pkg = cases[label]
    seed = 2500 + len(label)
    rng = np.random.default_rng(seed)
    for t in range(3):
        s = Q.random_state(rng, robot.nq, robot.nv)
        q, v, tau = s["q"], s["qd"], s["tau"]
        for on in _active_sets(rng, len(pkg.contacts)):
            if _dependent(label, on):
                continue
            flags = on.astype(bool)
            tol = kkt_tolerance(oracle.mass_matrix(q), ocn.contact_jacobian(oracle, q, flags))
            ctx = f"{label} seed={seed} state#{t} active={on.astype(int)}"
            qdd_p, lam_p = ocn.contact_dynamics(oracle, q, v, tau, flags)
            v_p, imp_p = ocn.impulse_dynamics(oracle, q, v, flags)
            for backend in ("numpy", "c"):
                mod = getattr(pkg, backend)
                qdd, lam = mod.contact_dynamics(q, v, tau, on)
                _close(qdd, qdd_p, tol, f"contact_dynamics qdd ({backend}) {ctx}")
                _close(_active_rows(pkg, lam, flags), lam_p, tol, f"contact_dynamics lambda ({backend}) {ctx}")
                assert not np.ravel(lam)[[r for c, a in zip(pkg.numpy._CONTACT_ROWS, flags) if not a for r in c]].any()
                v_after, imp = mod.impulse_dynamics(q, v, on.astype(bool))
                _close(v_after, v_p, tol, f"impulse_dynamics v+ ({backend}) {ctx}")
                _close(_active_rows(pkg, imp, flags), imp_p, tol, f"impulse_dynamics impulse ({backend}) {ctx}")
                # restitution 0: the active contact points are at rest after the impulse
                rest = _active_rows(pkg, pkg.numpy.impulse_terms(q, v_after)[3], flags)
                assert np.max(np.abs(rest), initial=0.0) <= tol * max(1.0, np.max(np.abs(v))), f"{ctx} {rest}"


@pytest.mark.pinocchio
@pytest.mark.parametrize("label", ["solo12", "panda", "legged"])
def test_generated_terms_and_whole_body_terms_match_pinocchio(cases, label):
    robot, oracle, pkg = cases[label]
    seed = 2600 + len(label)
    rng = np.random.default_rng(seed)
    for t in range(2):
        s = Q.random_state(rng, robot.nq, robot.nv)
        for key in KEYS:
            x = Q.QUANTITIES[key]
            want = x.pinocchio(oracle, s)
            tol = Q.tolerance(x, oracle.mass_matrix(s["q"]))
            for backend in ("numpy", "c"):
                got = Q.call(getattr(pkg, backend), key, s)
                for k, (g, w) in enumerate(zip(got, want)):
                    _close(g, w, tol, f"{key} output {k} ({backend}) {label} seed={seed} state#{t}")


@pytest.mark.pinocchio
def test_damping_matches_pinocchio_and_batches_match_one_state_calls(cases):
    robot, oracle, pkg = cases["solo12"]
    seed = 2700
    rng = np.random.default_rng(seed)
    states = [Q.random_state(rng, robot.nq, robot.nv) for _ in range(5)]
    q, v, tau = (np.array([s[a] for s in states]) for a in ("q", "qd", "tau"))
    active = rng.integers(0, 2, (5, 4))
    for backend in ("numpy", "c"):
        mod = getattr(pkg, backend)
        qdd, lam = mod.contact_dynamics(q, v, tau, active, 1e-3)
        assert qdd.shape == (5, robot.nv) and lam.shape == (5, 4, 3)
        for k in range(5):
            one = mod.contact_dynamics(q[k], v[k], tau[k], active[k], damping=1e-3)
            _close(qdd[k], one[0], 1e-12, f"batch state {k} ({backend}) seed={seed}")
            _close(lam[k], one[1], 1e-12, f"batch state {k} ({backend}) seed={seed}")
            flags = active[k].astype(bool)
            want_qdd, want_lam = ocn.contact_dynamics(oracle, q[k], v[k], tau[k], flags, damping=1e-3)
            tol = kkt_tolerance(oracle.mass_matrix(q[k]), ocn.contact_jacobian(oracle, q[k], flags))
            _close(qdd[k], want_qdd, tol, f"damped qdd ({backend}) state {k} seed={seed}")
            _close(lam[k][flags], want_lam, tol, f"damped lambda ({backend}) state {k} seed={seed}")


def test_a_singular_active_set_is_refused_with_the_contacts_named_never_a_nan(cases):
    robot, _, pkg = cases["panda"]
    s = Q.random_state(np.random.default_rng(2800), robot.nq, robot.nv)
    assert pkg.numpy._lam_shape(()) == (9,)                 # mixed types: the flat rows
    for backend in ("numpy", "c"):
        mod = getattr(pkg, backend)
        with pytest.raises(pkg.SingularContactError, match="panda_hand, tcp"):
            mod.contact_dynamics(s["q"], s["qd"], s["tau"], [1, 1])
        with pytest.raises(pkg.SingularContactError, match="panda_hand, tcp"):
            mod.impulse_dynamics(s["q"], s["qd"], [True, True])
        qdd, lam = mod.contact_dynamics(s["q"], s["qd"], s["tau"], [1, 1], damping=1e-6)   # damped: solvable
        assert np.isfinite(qdd).all() and np.isfinite(lam).all()
        with pytest.raises(ValueError, match="active must have shape"):
            mod.contact_dynamics(s["q"], s["qd"], s["tau"], [1, 1, 0])


def test_the_package_records_its_contacts_and_adds_them_to_its_frames(cases):
    _, _, pkg = cases["panda"]
    assert pkg.contacts == (("panda_hand", "6d"), ("tcp", "3d")) == pkg.c.contacts
    assert pkg.frames == ("tcp", "panda_hand")             # the hand joined --frames
    folder = Path(pkg.__file__).parent
    manifest = json.loads((folder / "manifest.json").read_text())
    assert manifest["contacts"] == [["panda_hand", "6d"], ["tcp", "3d"]]
    header = (folder / "pandacd.h").read_text()
    assert "int pandacd_contact_dynamics(" in header and "#define PANDACD_CONTACT_ROWS 9" in header


@pytest.mark.parametrize("text, reason", [
    ("nope", "unknown frame 'nope'"),
    ("tool_link:7d", "unknown contact type '7d'"),
    ("tool_link,tool_link:6d", "named twice"),
    ("tool_link,", "empty frame name"),
])
def test_a_bad_contact_is_a_one_line_option_error_with_exit_code_2(text, reason, tmp_path):
    arm = str(ROOT_ARM4)
    robot = symgen.load_urdf(arm)
    with pytest.raises(OptionError, match=reason):
        Q.contact.frames_with_contacts(robot, None, Q.contact.parse_contacts(text))
    result = CliRunner().invoke(main, ["build", arm, "--out", str(tmp_path), "--contacts", text, "--no-compile"])
    assert result.exit_code == 2, result.output
    message = result.output.strip()
    assert "\n" not in message and "--contacts" in message and reason in message, message



def test_quadruped_example_stands_on_its_weight_and_trots_with_the_feet_down_at_rest(tmp_path, capsys):
    """examples/quadruped_contacts.py, 0.5 s standing then 0.6 s of trot (compiled): standing, the
    feet carry the weight (sum of vertical forces = m g) and the base stays put; trotting, the feet
    on the ground stay at rest (the impulses at touchdown and after each step) and the base height
    stays within a few centimetres of the stance."""
    from test_examples import load_example

    example = load_example(Path(__file__).resolve().parents[1] / "examples" / "quadruped_contacts.py")
    run = example.main(["--seconds", "1.1", "--stand", "0.5", "--out", str(tmp_path)])
    assert "sum of vertical forces / weight" in capsys.readouterr().out
    standing = run.t < 0.5
    np.testing.assert_allclose(run.forces[standing].sum(axis=1), run.weight, rtol=1e-6)
    assert (run.forces[standing] > 0).all()
    assert np.ptp(run.height[standing]) < 1e-6, np.ptp(run.height[standing])
    assert run.rest.max() < 1e-2, run.rest.max()
    assert 0.15 < run.height.min() and run.height.max() < 0.3, (run.height.min(), run.height.max())
    trot = run.t > 0.52                                             # lift-off a few ms into the swing
    assert (run.forces[trot] == 0).any(axis=1).all()                # a pair in the air throughout the trot


@pytest.mark.pinocchio
def test_cli_contacts_add_the_contact_functions_and_verify_checks_them_against_pinocchio(tmp_path, pin):
    """``symgen build --contacts`` without --quantities: the default functions and the contact ones,
    the contacts in the manifest and its command; ``symgen verify`` then checks contact_dynamics and
    impulse_dynamics against Pinocchio (NumPy: --no-compile keeps it short)."""
    arm = str(ROOT_ARM4)
    result = CliRunner().invoke(main, ["build", arm, "--out", str(tmp_path), "--contacts", "tool_link",
                                       "--frames", "tool_link,tip=wrist_link@0.1,0,0", "--no-compile", "--quiet",
                                       "--jobs", "1"])
    assert result.exit_code == 0, result.output
    manifest = json.loads((tmp_path / "arm4" / "manifest.json").read_text())
    assert manifest["contacts"] == [["tool_link", "3d"]]
    assert set(Q.DEFAULT) | set(Q.contact.CONTACT_KEYS) == set(manifest["options"]["quantities"])
    assert "--contacts tool_link:3d" in (tmp_path / "arm4" / "arm4.h").read_text()
    result = CliRunner().invoke(main, ["verify", str(tmp_path / "arm4"), "--model", arm, "--trials", "3"])
    assert result.exit_code == 0, result.output
    assert "numpy vs Pinocchio: contact_dynamics" in result.output and "all checks passed" in result.output
