"""examples/torsion.py: the paper's point mass (Wensing & Slotine, Sec. IV-A2, Figs. 4-7) and the
same contrast on the generated arm - torsion twists the trajectory out of the plane and shakes the
torque, but leaves the Lyapunov function's evolution alone (issue #22, example c)."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from test_examples import load_example

EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "torsion.py"
pytestmark = pytest.mark.timeout(300)


def test_contorsion_is_totally_antisymmetric_so_the_twisted_C_is_admissible():
    """D(v) = T v is skew (Mdot = C + C^T still holds with C + D) and D(v) v = 0 (same dynamics)."""
    example = load_example(EXAMPLE)
    T = example.contorsion(5, joints=(1, 3, 4), beta=2.5)
    rng = np.random.default_rng(0)
    v = rng.normal(size=5)
    D = T @ v
    assert np.allclose(D, -D.T) and np.allclose(D @ v, 0.0)
    assert np.allclose(T, -T.transpose(1, 0, 2)) and np.allclose(T, -T.transpose(2, 1, 0))
    assert np.abs(T).max() == 2.5


def test_point_mass_and_arm_with_and_without_torsion(tmp_path, capsys):
    example = load_example(EXAMPLE)
    out = example.main(["--seconds", "10", "--arm-seconds", "3", "--out", str(tmp_path), "--plot",
                        str(tmp_path / "torsion.png")])
    printed = capsys.readouterr().out
    assert "point mass" in printed and "arm" in printed
    free, twisted = out["runs"]["free"], out["runs"]["twisted"]
    # Fig. 4: C = 0 decouples the axes, z stays exactly 0; Fig. 5/6: -5 (v x) lifts the mass out of the plane
    assert np.abs(free["q"][:, 2]).max() == 0.0
    assert np.abs(twisted["q"][:, 2]).max() > 0.05
    # higher-frequency content: the torque moves far more with torsion
    pm = out["point_mass"]
    assert pm["torsion"]["tau_variation"] > 3 * pm["torsion_free"]["tau_variation"], pm
    # Fig. 7 / the Lyapunov argument: torsion does not change V' (s^T D(s) v_r = 0), V falls in both
    for run in (free, twisted):
        assert run["V"][-1] < run["V"][0] / 100
    assert np.allclose(free["V"], twisted["V"], rtol=0.5, atol=1e-3)
    assert abs(pm["torsion"]["final_error"] - pm["torsion_free"]["final_error"]) < 1e-2
    # the arm: both controllers track (error bounded by the model's 10% error), the twisted torque shakes more
    arm_free, arm_twisted = out["runs"]["arm_free"], out["runs"]["arm_twisted"]
    for run in (arm_free, arm_twisted):
        assert run["error"][-1000:].max() < 0.2
        assert np.isfinite(run["tau"]).all()
    assert out["arm"]["torsion"]["tau_variation"] > 1.5 * out["arm"]["christoffel"]["tau_variation"], out["arm"]
    assert (tmp_path / "torsion.png").stat().st_size > 10_000
