"""Composite adaptive control (Slotine & Li): the tracking error and a momentum-based prediction
error drive the adaptation together, with the functions of seed 002's Appendix B.

The direct law of ``adaptive_control.py`` (Wensing & Slotine, eqs. 36-37) learns only from the
sliding variable s, through ``adaptation_term`` = Y^T s (Algorithm 3, line 9: O(N), Y never
formed). A composite law adds what the measured torques say about theta. The generalized momentum
obeys p-dot = tau + C^T v - g (Appendix B-B1), linear in theta through Algorithm 4's regressors:

    Y_p(q, v) theta = p,   Y_c(q, v) theta = C^T v,   Y_g(q) theta = g.

Through a first-order filter H = lam_f / (s + lam_f) this needs no acceleration: H[p-dot] =
lam_f (p - H[p]) (with H[p] started at p(0)), so

    W theta = u,   W = lam_f (Y_p - F_p) - F_c + F_g,   u = H[tau]

with F_p, F_c, F_g the filtered regressors, started at Y_p(q(0), v(0)), 0, 0. The prediction error
e = W theta_hat - u = W theta~ then enters the law

    theta_hat' = -Gamma^-1 (Y^T s + kappa W^T e),

and V = 1/2 s^T M s + 1/2 theta~^T Gamma theta~ has V' = -s^T K_D s - kappa |W theta~|^2 <= 0:
the same stability as the direct law, with every measured torque now a direct source of parameter
information, so theta_hat reaches the identifiable parameters faster. This example runs both laws
from the same wrong model on the same reference and prints (and plots) the torque prediction error
along the reference, |Y_ref (theta_hat - theta)| / |Y_ref theta|.

    python examples/composite_adaptive.py --plot composite_adaptive.png
    python examples/composite_adaptive.py --urdf panda.urdf --seconds 10
"""
from __future__ import annotations

import argparse
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import adaptive_control as direct  # noqa: E402  (the reference, the wrong model, the scales)

#: what this example calls: Y and Y^T s, Algorithm 4's Y_p, Y_c, Y_g, forward dynamics, M (for V)
QUANTITIES = ("Y", "Yts", "Y_p", "Y_c", "Y_g", "qdd", "M")


def load_package(urdf, out: Path, compile: bool = True):
    import symgen
    from symgen.codegen.build import BuildOptions, build
    from symgen.codegen.package import import_package

    robot = symgen.load_urdf(str(urdf))
    result = build(robot, out, opts=BuildOptions(quantities=QUANTITIES, compile=compile, force=True))
    return robot, import_package(result.path)


@dataclass
class Run:
    t: list = field(default_factory=list)
    tracking_error: list = field(default_factory=list)
    prediction_error: list = field(default_factory=list)
    lyapunov: list = field(default_factory=list)

    def arrays(self) -> dict:
        return {k: np.asarray(v) for k, v in vars(self).items()}


def simulate(robot, pkg, composite: bool, seconds: float = 10.0, rate: float = 1000.0, seed: int = 0,
             payload: float = 0.5, lam: float = 10.0, kd: float = 50.0, adaptation: float = 1.0,
             kappa: float = 0.3, lam_f: float = 20.0, log_every: int = 10) -> Run:
    """The adaptive controller on the simulated robot; ``composite`` adds kappa W^T e. The gains,
    the reference and the initial model are adaptive_control.py's, so the two laws differ only in
    the prediction term. kappa is scaled by the initial model's mass-matrix diagonal, so one value
    suits a small arm and a big one (W theta has units of torque)."""
    rng = np.random.default_rng(seed)
    ref = direct.Reference.make(robot, rng)
    theta = np.asarray(pkg.parameters, dtype=float)
    theta_hat = direct.wrong_parameters(robot, theta, rng, payload)
    dt, steps, n = 1.0 / rate, int(round(seconds * rate)), pkg.nv
    Lambda = lam * np.eye(n)
    mdiag = direct.model_mass_diagonal(pkg, ref(0.0)[0], theta_hat)
    K_D = kd * np.diag(mdiag)
    Gamma_inv = adaptation * np.diag(direct.parameter_scale(theta_hat) ** 2)
    Gamma = np.linalg.inv(Gamma_inv)
    weight = kappa / float(np.mean(mdiag))              # W theta ~ M-sized torques

    t_ref = np.linspace(0.0, 2 * np.pi / ref.omega.min(), 400)
    q_s, qd_s, qdd_s = ref(t_ref)
    Y_ref = pkg.regressor(q_s, qd_s, qd_s, qdd_s).reshape(-1, len(theta))
    tau_ref = np.linalg.norm(Y_ref @ theta)

    q_d, _, _ = ref(0.0)
    q, qd = q_d + np.where(direct.is_prismatic(robot), 0.01, 0.2), np.zeros(n)
    F_p = pkg.momentum_regressor(q, qd)                 # H[Y_p] started at Y_p(q(0), v(0))
    F_c, F_g, u = np.zeros_like(F_p), np.zeros_like(F_p), np.zeros(n)
    out = Run()

    for k in range(steps + 1):
        t = k * dt
        q_d, qd_d, qdd_d = ref(t)
        qd_r, qdd_r = qd_d - Lambda @ (q - q_d), qdd_d - Lambda @ (qd - qd_d)
        s = qd - qd_r
        W = lam_f * (pkg.momentum_regressor(q, qd) - F_p) - F_c + F_g
        if k % log_every == 0:
            err = theta_hat - theta
            out.t.append(t)
            out.tracking_error.append(float(np.linalg.norm(q - q_d)))
            out.prediction_error.append(float(np.linalg.norm(Y_ref @ err) / tau_ref))
            out.lyapunov.append(float(0.5 * s @ pkg.mass_matrix(q) @ s + 0.5 * err @ Gamma @ err))
        if k == steps:
            break
        tau = pkg.regressor(q, qd, qd_r, qdd_r) @ theta_hat - K_D @ s
        update = pkg.adaptation_term(q, qd, qd_r, qdd_r)            # Y^T s, O(N)
        if composite:
            update = update + weight * (W.T @ (W @ theta_hat - u))
        theta_hat = theta_hat - dt * (Gamma_inv @ update)
        # the filters H = lam_f / (s + lam_f) on Y_p, Y_c, Y_g and tau (Euler, one control period)
        F_p = F_p + dt * lam_f * (pkg.momentum_regressor(q, qd) - F_p)
        F_c = F_c + dt * lam_f * (pkg.coriolis_transpose_regressor(q, qd) - F_c)
        F_g = F_g + dt * lam_f * (pkg.gravity_regressor(q) - F_g)
        u = u + dt * lam_f * (tau - u)
        q, qd = direct.rk4_step(pkg, q, qd, tau, dt, t)               # the true robot, tau held
    return out


def momentum_identity(pkg, seed: int = 0) -> float:
    """max relative |Y_p theta - M v|: the regressor this law trusts, at a random state."""
    rng = np.random.default_rng(seed)
    q, v = rng.uniform(-2, 2, pkg.nv), rng.uniform(-2, 2, pkg.nv)
    p = pkg.mass_matrix(q) @ v
    return float(np.abs(pkg.momentum_regressor(q, v) @ pkg.parameters - p).max() / np.abs(p).max())


def plot(runs: dict, path) -> bool:
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib is not installed (pip install -e '.[plots]'): no plot")
        return False
    fig, axes = plt.subplots(3, 1, figsize=(7, 7.5), sharex=True)
    for name, run in runs.items():
        r = run.arrays()
        axes[0].semilogy(r["t"], r["tracking_error"], label=name)
        axes[1].semilogy(r["t"], r["prediction_error"], label=name)
        axes[2].semilogy(r["t"], r["lyapunov"], label=name)
    axes[0].set_ylabel("|q - q_d| [rad]")
    axes[1].set_ylabel("|Y_ref (θ̂ - θ)| / |Y_ref θ|")
    axes[2].set_ylabel("V")
    axes[2].set_xlabel("t [s]")
    axes[0].set_title("direct (Y^T s) vs composite (Y^T s + κ W^T e, momentum-based) adaptation")
    for ax in axes:
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=80)
    plt.close(fig)
    return True


def main(argv=None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--urdf", type=Path, default=None, help="robot (default: symgen's bundled arm4.urdf)")
    ap.add_argument("--out", type=Path, default=None, help="package folder (default: a temporary folder)")
    ap.add_argument("--seconds", type=float, default=10.0)
    ap.add_argument("--kappa", type=float, default=0.3, help="weight of the prediction error (default 0.3)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--plot", type=Path, default=None)
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="symgen-composite-") as tmp:
        robot, pkg = load_package(args.urdf or direct.default_urdf(), args.out or Path(tmp))
        print(f"momentum_regressor(q, v) @ parameters == M v: relative error {momentum_identity(pkg):.1e}")
        t0 = time.perf_counter()
        runs = {name: simulate(robot, pkg, composite, args.seconds, seed=args.seed, kappa=args.kappa)
                for name, composite in (("direct", False), ("composite", True))}
        print(f"simulated 2 x {args.seconds:g} s of {robot.name} in {time.perf_counter() - t0:.1f} s")
    print(f"{'t [s]':>7} {'direct: pred. err':>18} {'composite: pred. err':>21} {'|q - q_d| composite':>20}")
    d, c = runs["direct"].arrays(), runs["composite"].arrays()
    for t in np.linspace(0.0, d["t"][-1], 6):
        i = int(np.argmin(np.abs(d["t"] - t)))
        print(f"{d['t'][i]:7.2f} {d['prediction_error'][i]:18.2e} {c['prediction_error'][i]:21.2e} "
              f"{c['tracking_error'][i]:20.2e}")
    if args.plot:
        plot(runs, args.plot)
    return runs


if __name__ == "__main__":
    main()
