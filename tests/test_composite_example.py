"""examples/composite_adaptive.py: Slotine-Li's composite adaptation (Y^T s from
``adaptation_term`` plus a momentum-based prediction error from Algorithm 4's regressors Y_p, Y_c,
Y_g) learns the torque the model predicts much sooner than the direct law, with V still
non-increasing (issue #22, example b)."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from test_examples import load_example

EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "composite_adaptive.py"
pytestmark = pytest.mark.timeout(300)


def test_composite_adaptation_learns_sooner_and_keeps_V_falling(tmp_path, capsys):
    example = load_example(EXAMPLE)
    runs = example.main(["--seconds", "3", "--out", str(tmp_path), "--plot", str(tmp_path / "composite.png")])
    printed = capsys.readouterr().out
    assert "momentum_regressor(q, v) @ parameters == M v" in printed
    direct, composite = runs["direct"].arrays(), runs["composite"].arrays()
    assert np.array_equal(direct["t"], composite["t"])
    assert direct["prediction_error"][0] == composite["prediction_error"][0]        # the same wrong model

    def first_below(r, level=0.1):
        below = np.flatnonzero(r["prediction_error"] < level)
        return r["t"][below[0]] if len(below) else np.inf

    # the momentum equation's torques are information the direct law never sees
    assert first_below(composite) < first_below(direct) / 3, (first_below(composite), first_below(direct))
    at_1s = int(np.argmin(np.abs(direct["t"] - 1.0)))
    assert composite["prediction_error"][at_1s] < direct["prediction_error"][at_1s] / 3
    # V' = -s^T K_D s - kappa |W theta~|^2 <= 0 for both laws (rounding-level wobbles only)
    for r in (direct, composite):
        assert np.diff(r["lyapunov"]).max() <= 1e-6 * r["lyapunov"][0]
        assert r["tracking_error"][-1] < r["tracking_error"][0] / 20
    assert (tmp_path / "composite.png").stat().st_size > 10_000


def test_the_filtered_momentum_equation_is_exact_along_a_motion(tmp_path):
    """W theta = u holds with the true theta along the closed-loop motion (the prediction error
    of the true model is rounding plus the Euler filters' O(dt) error): what makes e = W theta~."""
    example = load_example(EXAMPLE)
    robot, pkg = example.load_package(example.direct.default_urdf(), tmp_path)
    dt, lam_f, n = 1e-4, 20.0, pkg.nv
    rng = np.random.default_rng(4)
    q, qd = rng.uniform(-1, 1, n), rng.uniform(-1, 1, n)
    F_p = pkg.momentum_regressor(q, qd)
    F_c, F_g, u = np.zeros_like(F_p), np.zeros_like(F_p), np.zeros(n)
    theta = np.asarray(pkg.parameters)
    wrong = theta * np.where(np.arange(len(theta)) % 10 == 0, 1.2, 1.0)       # 20% heavier links
    worst = worst_wrong = 0.0
    for k in range(3000):
        tau = np.sin(3 * k * dt + np.arange(n))
        W = lam_f * (pkg.momentum_regressor(q, qd) - F_p) - F_c + F_g
        worst = max(worst, float(np.abs(W @ theta - u).max()))
        worst_wrong = max(worst_wrong, float(np.abs(W @ wrong - u).max()))
        F_p = F_p + dt * lam_f * (pkg.momentum_regressor(q, qd) - F_p)
        F_c = F_c + dt * lam_f * (pkg.coriolis_transpose_regressor(q, qd) - F_c)
        F_g = F_g + dt * lam_f * (pkg.gravity_regressor(q) - F_g)
        u = u + dt * lam_f * (tau - u)
        qdd = pkg.forward_dynamics(q, qd, tau)
        q, qd = q + dt * qd, qd + dt * qdd
    assert worst < 1e-2 * np.abs(u).max(), (worst, np.abs(u).max())
    assert worst_wrong > 10 * worst, (worst, worst_wrong)
