"""The closed-form contact-row derivatives of contact_partials (:mod:`symgen.algorithms.
contact_acceleration_derivatives`: d a_c/dq, d a_c/dv of the classical contact acceleration a_c = Jc qdd +
Jc_dot v, LOCAL_WORLD_ALIGNED, and dJ = d Jc/dq, from the ID-derivative sweep's quantities) against
Pinocchio 4.1 (computeForwardKinematicsDerivatives, getFrameVelocityDerivatives,
getFrameAccelerationDerivatives and the classical term: :func:`symgen.oracle_contact_derivatives.
contact_acceleration_derivatives`, 1e-9 relative) and against the complex step through the contact rows'
own algorithm (the route it replaces, 1e-12). Random free-flyer biped (point and flat contacts), a fixed
6-joint arm (flat contact), solo12 (4 point contacts), talos (2 flat contacts): numbers only, about 1 s each.
"""
from __future__ import annotations

import numpy as np
import pytest

import symgen
from support import erd_path, pin_model_from_robot
from symgen import oracle_contact_derivatives as ocd
from symgen import quantities as Q
from symgen import robots
from symgen.algorithms import contact_derivatives as cd
from symgen.algorithms.contact_acceleration_derivatives import applies, contact_acceleration_partials
from symgen.algorithms.derivatives import forward_pass
from symgen.backend import NUMERIC
from symgen.kinematics import base_acceleration, ground_frames
from symgen.model import GRAVITY
from symgen.oracle_contact import with_contacts
from symgen.pinocchio_oracle import PinOracle

LEGS = ("FL", "FR", "HL", "HR")


def _robot(pin, label):
    """(robot, Pinocchio model, contacts)."""
    if label.startswith("biped"):
        robot = robots.make("biped", 4, 3)
        return robot, pin_model_from_robot(robot), tuple((f, label[-2:]) for f in robot.leaf_links)
    if label == "arm":
        robot = robots.make("serial", 6, 5)
        return robot, pin_model_from_robot(robot), ((robot.leaf_links[0], "6d"),)
    path, contacts = {"solo12": ("solo_description/robots/solo12.urdf", tuple((f"{g}_FOOT", "3d") for g in LEGS)),
                      "talos": ("talos_data/robots/talos_reduced.urdf",
                                (("left_sole_link", "6d"), ("right_sole_link", "6d")))}[label]
    robot = symgen.load_urdf(erd_path(path), floating_base=True)
    return robot, pin.buildModelFromUrdf(str(erd_path(path)), pin.JointModelFreeFlyer()), contacts


def _check(pin, label, seeds):
    robot, model, contacts = _robot(pin, label)
    assert applies(robot)
    opts = Q.SweepOptions(frames=tuple(name for name, _ in contacts), contacts=contacts)
    frames, kinds = zip(*Q.contact.contacts_of(robot, opts))
    oracle = with_contacts(PinOracle(robot, model, pin, frames=tuple(f.name for f in frames)), contacts)
    for seed in seeds:
        s = Q.random_state(np.random.default_rng(seed), robot.nq, robot.nv, layout=robot.joint_layout)
        q, qd, qdd = s["q"], s["qd"], s["qdd"]
        Phi, I = ground_frames(robot, q, NUMERIC)
        a0 = base_acceleration(robot, q, GRAVITY, NUMERIC)
        v, Phid, a, _, _ = forward_pass(robot, Phi, I, qd, qdd, NUMERIC, a0)
        got = contact_acceleration_partials(robot, q, frames, kinds, (Phi, v, Phid, a, a0), NUMERIC)
        got = [np.asarray(x, dtype=float) for x in got]
        for name, ref, value in zip(("Aq", "Av"), ocd.contact_acceleration_derivatives(oracle, q, qd, qdd), got[2:]):
            err = np.max(np.abs(ref - value)) / max(1.0, np.max(np.abs(ref)))
            assert err <= 1e-9, f"{label} {name} against Pinocchio, seed={seed}: {err:.2e}"
        for name, ref, value in zip(("Jc", "dJ", "Aq", "Av"), cd._complex_step(robot, q, qd, qdd, frames, kinds), got):
            err = np.max(np.abs(ref - value)) / max(1.0, np.max(np.abs(ref)))
            assert err <= 1e-12, f"{label} {name} against the complex step, seed={seed}: {err:.2e}"


@pytest.mark.pinocchio
@pytest.mark.parametrize("label", ["biped3d", "biped6d", "arm", "solo12", "talos"])
def test_contact_acceleration_derivatives_match_pinocchio_and_the_complex_step(pin, label):
    _check(pin, label, seeds=(4100, 4101))

