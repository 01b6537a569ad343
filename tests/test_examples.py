"""examples/adaptive_control.py: the Slotine-Li adaptive controller on arm4 (NumPy backend) tracks
its reference and learns the torque its model predicts, as the Lyapunov argument says.
examples/floating_base.py: solo12 with the free-flyer, built and called, agrees with physics and
Pinocchio. examples/momentum_observer.py: a momentum observer on panda estimates a push's torque.
examples/operational_space_control.py: a task-space controller on panda moves its flange as the
ideal closed loop."""
from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import numpy as np

EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "adaptive_control.py"


def load_example(path=EXAMPLE):
    spec = importlib.util.spec_from_file_location(f"{path.stem}_example", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module              # dataclasses look their module up there
    try:
        spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[spec.name]
        raise
    return module


def test_adaptive_control_tracks_and_learns(tmp_path, capsys):
    """Tracking error down by > 5x, torque prediction error along the reference down by > 3x,
    V = 1/2 s^T M s + 1/2 theta~^T Gamma theta~ non-increasing (V' = -s^T K_D s) and down by > 5x.
    With the sign of the adaptation law (eq. 37) flipped, V grows from the first steps and the
    prediction error does not fall."""
    example = load_example()
    result = example.main(["--seconds", "3", "--no-compile", "--out", str(tmp_path)]).arrays()
    printed = capsys.readouterr().out
    assert "relative error" in printed and "mean |q - q_d|" in printed, printed

    t, e, pred, V = result["t"], result["tracking_error"], result["prediction_error"], result["lyapunov"]
    last = t >= 0.9 * t[-1]
    assert e[last].max() < e[0] / 5, f"tracking error {e[0]:.2e} at t = 0, up to {e[last].max():.2e} at the end"
    assert pred[-1] < pred[0] / 3, f"torque prediction error {pred[0]:.3f} at t = 0, {pred[-1]:.3f} at the end"
    assert V[-1] < V[0] / 5, f"V {V[0]:.3e} at t = 0, {V[-1]:.3e} at the end"
    # V' = -s^T K_D s <= 0 in continuous time; the discrete run may wobble at rounding level only
    rises = np.diff(V)
    assert rises.max() <= 1e-6 * V[0], f"V rises by {rises.max():.2e} at t = {t[1:][rises.argmax()]:.3f} s"


def test_floating_base_example_falls_freely_and_matches_pinocchio(tmp_path, capsys):
    """At rest with no torque the quadruped falls freely (base acceleration R^T g, nothing else),
    C v + g is inverse dynamics at zero acceleration, and Pinocchio's free-flyer model agrees on
    the same q and v arrays (NumPy backend; no seed: the example's state is fixed, seed 0)."""
    example = load_example(EXAMPLE.parent / "floating_base.py")
    checks = example.main(["--out", str(tmp_path), "--no-compile", "--quantities", "M,C,g,tau,qdd,J"])
    assert "free fall" in capsys.readouterr().out
    assert set(checks) == {"free_fall", "C v + g - tau", "C - Pinocchio", "qdd - Pinocchio"}
    assert max(checks.values()) < 1e-9, checks


def test_momentum_observer_estimates_the_push(capsys, tmp_path):
    """examples/momentum_observer.py --quick (panda, NumPy): the observer's r, from the generated
    momentum, coriolis_transpose_product and gravity only, follows the external torque J^T F of a
    20 N push (computed apart, from the hand's Jacobian) to 1% over the push's last 80 ms, and is
    zero to rounding before the push."""
    example = load_example(EXAMPLE.parent / "momentum_observer.py")
    result = example.main(["--quick", "--no-compile", "--plot", str(tmp_path / "observer.png")])
    assert "estimate vs true" in capsys.readouterr().out
    assert (tmp_path / "observer.png").stat().st_size > 10_000          # the plot, written in CI too
    assert np.abs(result["true"]).max() > 1.0, "the push moved no joint"
    assert result["error"] < 0.01, f"estimate off by {100 * result['error']:.2f}% of the push's torque"
    assert result["before"] < 1e-9, result["before"]


def test_closed_chain_control_tracks_with_a_passive_law(tmp_path, capsys):
    """examples/closed_chain_control.py (0.5 s): Slotine-Li on the four-bar (loop, G(q)) and the
    belt leg (geared rotors): the tracking error down by > 100x, V = 1/2 s^T M̄ s down by 1e5 and
    never rising by more than 1e-9 of V(0) in a step (V' = -s^T K_D s with the Christoffel-consistent
    C̄; the torque held over a step adds the rest)."""
    example = load_example(EXAMPLE.parent / "closed_chain_control.py")
    runs = example.run(0.5, str(tmp_path / "plot.png"), tmp_path)
    assert (tmp_path / "plot.png").stat().st_size > 10_000
    for name, (t, e, V) in runs.items():
        assert np.abs(e[-1]).max() < 0.01 * np.abs(e[0]).max(), name
        assert np.max(np.diff(V)) <= 1e-9 * V[0] and V[-1] < 1e-5 * V[0], name
    assert "four-bar" in capsys.readouterr().out


def test_operational_space_control_moves_the_flange_as_the_ideal_task_loop(tmp_path, capsys):
    """examples/operational_space_control.py --quick (panda, NumPy): with F = Lambda (Kp e - Kd xdot)
    + mu + p and the posture in Jbar's null space, the flange's error follows the critically damped
    e'' = -Kp e - Kd e' of the generated operational_space_inertia, _bias and
    dynamically_consistent_inverse to 1% of the step (the torques held over each 1 ms period
    make the rest), and falls below 3% of it in 0.4 s; the plot is written (in CI too)."""
    example = load_example(EXAMPLE.parent / "operational_space_control.py")
    result = example.main(["--quick", "--no-compile", "--plot", str(tmp_path / "osc.png")])
    assert "ideal closed loop" in capsys.readouterr().out
    assert (tmp_path / "osc.png").stat().st_size > 10_000
    assert result["deviation"] < 0.01, f"off the ideal task loop by {100 * result['deviation']:.3f}% of the step"
    assert result["final"] < 0.03, result["final"]
