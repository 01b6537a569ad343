"""``symgen build --gravity``: the gravity reaches every sweep that uses it, is recorded in the
manifest, the header and the package (``gravity_vector``), and verify compares with Pinocchio
under the same gravity."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

import support
from symgen import quantities as Q, robots
from symgen.cli import main
from symgen.codegen.build import BuildOptions, build, import_package
from symgen.errors import OptionError
from symgen.pinocchio_oracle import PinOracle
from symgen.urdf import urdf_string, write_urdf
from symgen.verify import verify_package

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "symgen" / "examples" / "arm4.urdf"
#: the Moon's 1.62 m/s^2 along a slanted axis (a tilted base frame)
MOON = tuple(float(x) for x in 1.62 * np.array([0.3, -0.5, -0.8]) / np.linalg.norm([0.3, -0.5, -0.8]))
KEYS = ("tau", "g", "tau_sl", "qdd")


@pytest.fixture(scope="module")
def moon(tmp_path_factory):
    """(robot, package) of a random tree built with the Moon's slanted gravity."""
    robot = robots.make("tree", 6, 4)
    pkg = import_package(build(robot, tmp_path_factory.mktemp("moon"),
                               opts=BuildOptions(quantities=KEYS, gravity=MOON, copt="-O0")).path)
    return robot, pkg


def test_tilted_gravity_matches_pinocchio_with_that_gravity(moon):
    pin = support.require_pinocchio()
    robot, pkg = moon
    oracle = PinOracle(robot, pin.buildModelFromXML(urdf_string(robot)), pin, gravity=MOON)
    assert np.allclose(oracle.model.gravity.linear, MOON)
    rng = np.random.default_rng(3)
    for _ in range(3):
        s = Q.random_state(rng, robot.nq, robot.nv)
        for key in KEYS:
            x = Q.QUANTITIES[key]
            expected = x.pinocchio(oracle, s)
            for backend in (pkg.numpy, pkg.c):
                got = getattr(backend, x.function)(*(s[a] for a in x.arguments))
                support.assert_close(got, expected, f"{x.function} under the Moon's gravity", rtol=1e-8)
            ref = Q.evaluate(robot, key, s, Q.SweepOptions(frame="body", gravity=MOON))
            support.assert_close(ref, expected, f"reference {x.function} under the Moon's gravity", rtol=1e-8)
    # and it differs from the Earth's: the option did something
    s = Q.random_state(rng, robot.nq, robot.nv)
    assert not np.allclose(pkg.gravity(s["q"]), PinOracle(robot, pin.buildModelFromXML(urdf_string(robot)), pin)
                           .gravity(s["q"]))


def test_gravity_is_recorded(moon):
    robot, pkg = moon
    for module in (pkg, pkg.numpy, pkg.c):
        assert np.array_equal(module.gravity_vector, MOON)
    folder = Path(pkg.__file__).parent
    manifest = json.loads((folder / "manifest.json").read_text())
    assert manifest["options"]["gravity"] == list(MOON)
    header = (folder / f"{manifest['name']}.h").read_text()
    assert f"gravity={Q.gravity_text(MOON)}" in header and "_gravity_vector[3]" in header


def test_verify_uses_the_manifest_gravity(tmp_path):
    support.require_pinocchio()
    robot = robots.make("serial", 3, 2)
    urdf = tmp_path / "s3.urdf"
    write_urdf(robot, urdf)
    path = build(robot, tmp_path / "out", opts=BuildOptions(quantities=("tau", "g", "qdd"), gravity=MOON,
                                                              copt="-O0")).path
    report, ok = verify_package(path, trials=3, urdf=urdf)
    assert ok, report
    assert "vs Pinocchio: gravity" in report


def test_cli_gravity(tmp_path):
    runner = CliRunner()
    out = tmp_path / "out"
    result = runner.invoke(main, ["build", str(EXAMPLE), "--out", str(out), "--quantities", "g", "--no-compile",
                                  "--gravity", "0, 1.62 ,0", "--quiet"])
    assert result.exit_code == 0, result.output
    text = (out / "arm4" / "arm4_numpy.py").read_text()
    assert "--gravity 0,1.62,0" in text and "gravity=0,1.62,0" in text
    assert json.loads((out / "arm4" / "manifest.json").read_text())["options"]["gravity"] == [0.0, 1.62, 0.0]
    for bad in ("0,0", "a,b,c", "0,0,-9.81,1", "0,0,inf", ""):
        result = runner.invoke(main, ["build", str(EXAMPLE), "--out", str(out), "--gravity", bad, "--force"])
        assert result.exit_code == 2, (bad, result.output)
        assert result.output.count("\n") == 1 and "--gravity" in result.output, result.output


def test_parse_gravity():
    assert Q.parse_gravity("0,0,-9.81") == (0.0, 0.0, -9.81)
    assert Q.gravity_text((0.0, 0.0, -9.81)) == "0,0,-9.81"
    with pytest.raises(OptionError, match="--gravity"):
        Q.parse_gravity("1,2,nan")
    with pytest.raises(OptionError, match="--gravity"):
        Q.check_options(Q.SweepOptions(gravity=(1.0, 2.0)))
