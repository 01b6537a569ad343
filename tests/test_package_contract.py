"""Every attribute /work/shared/API.md lists for a generated package (nq, nv, joint_names,
floating_base, link_names, parameters, frames, gravity_vector) exists at the top level, in
``numpy`` and in the compiled ``c``, with the same value, on a fixed, a free-flyer and a
``--mimic`` package, and means what the contract says: checked against the URDF's text and
against Pinocchio (rnea in joint_names order, the inertias of link_names' joints, the placements
of frames, gravity_vector as the model's gravity) and the identity regressor @ parameters == tau."""
from __future__ import annotations

import xml.etree.ElementTree as ET
import zlib
from pathlib import Path

import numpy as np
import pytest

import support
import symgen
from symgen import quantities as Q
from symgen.codegen.build import BuildOptions, build, import_package
from symgen.pinocchio_oracle import EmbeddedPinOracle, PinOracle
from test_mimic import REDUCED, gripper

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "symgen" / "examples" / "arm4.urdf"
ATTRIBUTES = ("nq", "nv", "joint_names", "floating_base", "link_names", "parameters", "frames", "gravity_vector")
MARS = (0.0, 0.0, -3.72)
#: kind -> (floating base, mimic, gravity)
KINDS = {"fixed": (False, False, (0.0, 0.0, -9.81)), "free_flyer": (True, False, MARS), "mimic": (False, True, (0.5, 0.0, -9.81))}


@pytest.fixture(scope="module")
def packages(tmp_path_factory):
    """{kind: (urdf path, robot, package)}: arm4 fixed, arm4 with a free-flyer under Mars' gravity,
    test_mimic's gripper with --mimic under a tilted gravity; compiled at -O0."""
    tmp = tmp_path_factory.mktemp("contract")
    urdfs = {"fixed": EXAMPLE, "free_flyer": EXAMPLE, "mimic": tmp / "gripper.urdf"}
    urdfs["mimic"].write_text(gripper())
    out = {}
    for kind, (floating, mimic, gravity) in KINDS.items():
        robot = symgen.load_urdf(urdfs[kind], floating_base=floating, mimic=mimic)
        opts = BuildOptions(quantities=("tau", "Y", "oMf"), copt="-O0", gravity=gravity)
        out[kind] = (urdfs[kind], robot, import_package(build(robot, tmp, name=kind, opts=opts).path))
    return out


def _urdf_facts(urdf: Path):
    """(movable joint names, mimicking joint names, leaf links) from the URDF's text."""
    root = ET.parse(urdf).getroot()
    joints = [j for j in root.iter("joint") if j.get("type") != "fixed"]
    parents = {j.find("parent").get("link") for j in root.iter("joint")}
    leaves = [link.get("name") for link in root.iter("link") if link.get("name") not in parents]
    return ([j.get("name") for j in joints], [j.get("name") for j in joints if j.find("mimic") is not None], leaves)


@pytest.mark.parametrize("kind", KINDS)
def test_every_attribute_of_the_contract_is_on_the_package_and_its_backends(packages, kind):
    _, _, pkg = packages[kind]
    assert pkg.c is not None, f"{kind}: not compiled"
    for name in ATTRIBUTES:
        top = getattr(pkg, name)
        for backend in (pkg.numpy, pkg.c):
            assert np.array_equal(np.asarray(getattr(backend, name)), np.asarray(top)), f"{kind}: {backend.__name__}.{name}"
    assert type(pkg.nq) is int and type(pkg.nv) is int, kind
    assert type(pkg.floating_base) is bool and pkg.floating_base == KINDS[kind][0], kind
    assert pkg.nq == pkg.nv + (1 if pkg.floating_base else 0), kind          # a free-flyer: 7 q, 6 v
    assert len(pkg.joint_names) == pkg.nv - (5 if pkg.floating_base else 0), kind   # its root joint: one name
    assert all(type(x) is str for x in (*pkg.joint_names, *pkg.link_names, *pkg.frames)), kind
    assert pkg.parameters.shape == (10 * len(pkg.link_names),) and pkg.parameters.dtype == np.float64, kind
    assert pkg.gravity_vector.shape == (3,) and tuple(pkg.gravity_vector) == KINDS[kind][2], kind


@pytest.mark.parametrize("kind", KINDS)
def test_the_names_are_the_urdfs(packages, kind):
    urdf, _, pkg = packages[kind]
    movable, mimicking, leaves = _urdf_facts(urdf)
    expected = [j for j in movable if not (KINDS[kind][1] and j in mimicking)]
    assert sorted(pkg.joint_names) == sorted((["root_joint"] if pkg.floating_base else []) + expected), kind
    if pkg.floating_base:
        assert pkg.joint_names[0] == "root_joint", kind
    if KINDS[kind][1]:
        assert tuple(pkg.joint_names) == REDUCED                # test_mimic's order, written by hand
    assert sorted(pkg.frames) == sorted(leaves), kind         # default: every link that is no joint's parent
    # one link per moving body, the base link for a free-flyer, the mimicking joints' links included
    assert len(pkg.link_names) == len(movable) + (1 if pkg.floating_base else 0), kind


@pytest.mark.pinocchio
@pytest.mark.parametrize("kind", KINDS)
def test_the_attributes_mean_what_pinocchio_computes(packages, kind, pin):
    """joint_names is the order of q and v (rnea), gravity_vector the gravity used, parameters
    the inertias of the joints moving link_names (about the joint frame), frames the placements."""
    urdf, robot, pkg = packages[kind]
    model = pin.buildModelFromUrdf(str(urdf), pin.JointModelFreeFlyer()) if pkg.floating_base else \
        pin.buildModelFromUrdf(str(urdf))
    assert tuple(pkg.joint_names) == robot.joint_names
    gravity = tuple(pkg.gravity_vector)
    oracle = (EmbeddedPinOracle if KINDS[kind][1] else PinOracle)(robot, model, pin, frames=pkg.frames, gravity=gravity)
    for k, link in enumerate(pkg.link_names):
        joint = model.frames[model.getFrameId(link, pin.FrameType.BODY)].parentJoint
        support.assert_close(pkg.parameters[10 * k:10 * k + 10], model.inertias[joint].toDynamicParameters(),
                             f"{kind}: parameters of {link}")
    seed = zlib.crc32(kind.encode())
    state = Q.random_state(np.random.default_rng(seed), pkg.nq, pkg.nv)
    q, v, a = state["q"], state["qd"], state["qdd"]
    context = f"{kind} seed={seed}"
    for backend in (pkg.numpy, pkg.c):
        tau = backend.inverse_dynamics(q, v, a)
        support.assert_close(tau, oracle.inverse_dynamics(q, v, a), "inverse_dynamics", context)
        support.assert_close(backend.regressor(q, v, v, a) @ pkg.parameters, tau, "regressor @ parameters", context)
        support.assert_close(backend.frame_placement(q), oracle.frame_placement(q), "frame_placement", context)
