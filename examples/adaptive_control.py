"""Slotine-Li direct adaptive control of a simulated arm, with the functions symgen generates.

The true robot is the URDF's model, simulated with the generated ``forward_dynamics(q, qd, tau)``
(RK4 over each control period, torque held). The controller does not know it: it starts from a
wrong parameter vector (masses and first moments scaled by random factors in [0.5, 1.5], and a
payload on the last link that is not there) and learns it online with the direct adaptive law of
Slotine and Li (Wensing & Slotine, "Coriolis factorizations ...", Appendix B-A, eqs. 36-37):

    qd_r  = qd_d  - Lambda (q  - q_d)        reference velocity
    qdd_r = qdd_d - Lambda (qd - qd_d)       its derivative
    s     = qd - qd_r                        sliding variable
    tau   = Y(q, qd, qd_r, qdd_r) theta_hat - K_D s                      (36)
    theta_hat' = -Gamma^-1 Y(q, qd, qd_r, qdd_r)^T s                     (37)

with the generated ``regressor`` Y (n x 10 per body, Pinocchio's parameter order) and the
package's nominal ``parameters`` theta. With Y theta = M qdd_r + C(q, qd) qd_r + g and C the
Christoffel-consistent Coriolis matrix (Mdot - 2C skew), V = 1/2 s^T M s + 1/2 theta~^T Gamma theta~
has V' = -s^T K_D s <= 0: s -> 0, hence q -> q_d, and with a persistently exciting q_d the
torque that theta_hat predicts along the trajectory converges to the true one.

    python examples/adaptive_control.py --plot /tmp/adaptive.png
    python examples/adaptive_control.py --urdf panda.urdf --seconds 10 --out build --force

Without matplotlib (the ``plots`` extra) it prints and skips the plot.
"""
from __future__ import annotations

import argparse
import sys
import tempfile
import time
from dataclasses import dataclass, field
from importlib.resources import files
from pathlib import Path

import numpy as np

import symgen
from symgen.codegen.build import BuildOptions, build
from symgen.codegen.names import identifier
from symgen.codegen.package import import_package

#: what the example calls: M (for the Lyapunov function only), slotine_li, regressor, forward_dynamics
QUANTITIES = ("M", "tau_sl", "Y", "qdd")
FUNCTIONS = ("mass_matrix", "slotine_li", "regressor", "forward_dynamics")


def default_urdf() -> Path:
    return Path(str(files("symgen.examples") / "arm4.urdf"))


def load_package(urdf, out: Path, force: bool = False, compile: bool = True):
    """Import the generated package of ``urdf`` from ``out/NAME``: the one already there (when it
    has the functions the example calls and the URDF's joints) unless ``force``, else a new build."""
    robot = symgen.load_urdf(str(urdf))
    path = Path(out) / identifier(robot.name)
    if path.exists() and not force:
        pkg = import_package(path)
        missing = [f for f in FUNCTIONS if not hasattr(pkg, f)]
        if missing or tuple(pkg.joint_names) != robot.joint_names:
            why = f"lacks {', '.join(missing)}" if missing else "has other joints than the URDF"
            raise SystemExit(f"adaptive_control: {path} {why}; pass --force to rebuild it")
        print(f"reusing {path} ({pkg.backend}); --force rebuilds it")
        return robot, pkg
    t0 = time.perf_counter()
    result = build(robot, out, opts=BuildOptions(quantities=QUANTITIES, compile=compile, force=force))
    pkg = import_package(result.path)
    print(f"built {result.path} ({pkg.backend}) in {time.perf_counter() - t0:.1f} s")
    return robot, pkg


def is_prismatic(robot) -> np.ndarray:
    """Per joint: True for a prismatic one (its reference moves centimetres, not radians)."""
    return np.array([b.joint_type == "prismatic" for b in robot.bodies])


@dataclass(frozen=True)
class Reference:
    """q_d(t) = q0 + sum_k a_jk sin(w_jk t + phi_jk): three incommensurate frequencies per joint,
    different on every joint, so that the regressor along it is persistently exciting."""
    q0: np.ndarray
    amplitude: np.ndarray          # (n, 3)
    omega: np.ndarray              # (n, 3), rad/s
    phase: np.ndarray              # (n, 3)

    @classmethod
    def make(cls, robot, rng) -> "Reference":
        n, prismatic = robot.n, is_prismatic(robot)
        scale = np.where(prismatic, 0.01, 0.25)[:, None]          # m or rad per sine
        omega = np.array([0.7, 1.3, 2.3]) * (1 + 0.45 * np.arange(n) / max(n - 1, 1))[:, None]
        return cls(q0=np.where(prismatic, 0.02, 0.3), amplitude=scale * rng.uniform(0.6, 1.0, (n, 3)),
                   omega=omega * rng.uniform(0.9, 1.1, (n, 3)), phase=rng.uniform(0, 2 * np.pi, (n, 3)))

    def __call__(self, t: float | np.ndarray):
        """q_d, qd_d, qdd_d at time t (a scalar: (n,) each; an array of T times: (T, n) each)."""
        arg = self.omega * np.asarray(t, dtype=float)[..., None, None] + self.phase
        a, w = self.amplitude, self.omega
        return (self.q0 + (a * np.sin(arg)).sum(-1), (a * w * np.cos(arg)).sum(-1),
                -(a * w ** 2 * np.sin(arg)).sum(-1))


def wrong_parameters(robot, theta: np.ndarray, rng, payload: float) -> np.ndarray:
    """The controller's initial model: each body's mass and first moment (m, m c) scaled by a
    random factor in [0.5, 1.5], and a point ``payload`` (kg) that the true robot does not carry at
    the centre of mass of the wrist: the last body moved by a revolute joint (a gripper's
    prismatic fingers come after it)."""
    bodies = theta.reshape(-1, 10).copy()
    bodies[:, :4] *= rng.uniform(0.5, 1.5, (len(bodies), 1))
    turning = np.flatnonzero(~is_prismatic(robot))
    wrist = int(turning[-1]) if len(turning) else len(bodies) - 1
    m, mc = theta.reshape(-1, 10)[wrist, 0], theta.reshape(-1, 10)[wrist, 1:4]
    p = mc / m if m > 0 else np.zeros(3)
    # a point mass at p: [m, m p, m(|p|^2 1 - p p^T)] in the order Ixx, Ixy, Iyy, Ixz, Iyz, Izz
    I = payload * (p @ p * np.eye(3) - np.outer(p, p))
    bodies[wrist] += np.r_[payload, payload * p, I[0, 0], I[0, 1], I[1, 1], I[0, 2], I[1, 2], I[2, 2]]
    return bodies.ravel()


def parameter_scale(theta: np.ndarray) -> np.ndarray:
    """The size of each parameter of a body: m, m l (first moments) and m l^2 (inertias), l its
    radius of gyration about the joint frame's origin. Gamma^-1 = gain * diag(scale^2) adapts
    every parameter at the same relative rate, whether it is a 3 kg mass or a 1e-4 kg m^2 inertia."""
    bodies = theta.reshape(-1, 10)
    m = np.maximum(bodies[:, 0], 1e-3 * bodies[:, 0].max())
    trace = bodies[:, 4] + bodies[:, 6] + bodies[:, 9]
    length = np.sqrt(np.maximum(trace / (2 * m), 1e-6))
    return np.concatenate([m[:, None], np.repeat((m * length)[:, None], 3, 1),
                           np.repeat((m * length ** 2)[:, None], 6, 1)], axis=1).ravel()


def model_mass_diagonal(pkg, q: np.ndarray, theta_hat: np.ndarray) -> np.ndarray:
    """The diagonal of the mass matrix of the model theta_hat at q, from the regressor:
    Y(q, 0, 0, e_j) theta_hat - Y(q, 0, 0, 0) theta_hat = M_hat(q) e_j."""
    n = pkg.nv
    zero = np.zeros((n + 1, n))
    tau = pkg.regressor(np.tile(q, (n + 1, 1)), zero, zero, np.vstack([np.eye(n), np.zeros(n)])) @ theta_hat
    diagonal = np.diag(tau[:n] - tau[n])
    return np.maximum(diagonal, 1e-3 * diagonal.max())


@dataclass
class Result:
    """Samples of the run every ``log_every`` control steps."""
    t: list = field(default_factory=list)
    tracking_error: list = field(default_factory=list)      # |q - q_d|
    prediction_error: list = field(default_factory=list)    # |Y_ref (theta_hat - theta)| / |Y_ref theta|
    parameter_error: list = field(default_factory=list)     # |theta_hat - theta| / |theta|
    lyapunov: list = field(default_factory=list)            # 1/2 s^T M s + 1/2 theta~^T Gamma theta~
    rank: int = 0                                            # rank of Y along the reference
    columns: int = 0

    def arrays(self) -> dict:
        return {k: np.asarray(getattr(self, k)) for k in
                ("t", "tracking_error", "prediction_error", "parameter_error", "lyapunov")}


def simulate(robot, pkg, seconds: float = 10.0, rate: float = 1000.0, seed: int = 0, payload: float = 0.5,
             lam: float = 10.0, kd: float = 50.0, adaptation: float = 1.0, log_every: int = 10) -> Result:
    """Run the adaptive controller on the simulated robot. ``kd`` scales K_D by the diagonal of
    the initial model's M(q_d(0)) (so one value suits a small arm and a big one); Gamma^-1 =
    ``adaptation`` * diag(parameter_scale(theta_hat(0)))^2."""
    rng = np.random.default_rng(seed)
    ref = Reference.make(robot, rng)
    theta = np.asarray(pkg.parameters, dtype=float)
    theta_hat = wrong_parameters(robot, theta, rng, payload)
    dt, steps = 1.0 / rate, int(round(seconds * rate))
    n = pkg.nv
    Lambda = lam * np.eye(n)
    # gains from what the controller knows, its initial model (the true theta and M serve only
    # to measure the errors and V below)
    K_D = kd * np.diag(model_mass_diagonal(pkg, ref(0.0)[0], theta_hat))
    Gamma_inv = adaptation * np.diag(parameter_scale(theta_hat) ** 2)
    Gamma = np.linalg.inv(Gamma_inv) if adaptation > 0 else np.zeros_like(Gamma_inv)

    # Y along the reference (qd = qd_r = qd_d, qdd_r = qdd_d), over its slowest period: the torque
    # error that theta_hat makes there measures what of theta can be learned from this trajectory
    t_ref = np.linspace(0.0, 2 * np.pi / ref.omega.min(), 400)
    q_s, qd_s, qdd_s = ref(t_ref)
    Y_ref = pkg.regressor(q_s, qd_s, qd_s, qdd_s).reshape(-1, len(theta))
    tau_ref = np.linalg.norm(Y_ref @ theta)
    out = Result(rank=int(np.linalg.matrix_rank(Y_ref, tol=1e-9 * np.linalg.norm(Y_ref, 2))), columns=len(theta))

    q_d, qd_d, _ = ref(0.0)
    q, qd = q_d + np.where(is_prismatic(robot), 0.01, 0.2), np.zeros(n)      # off the reference, at rest

    for k in range(steps + 1):
        t = k * dt
        q_d, qd_d, qdd_d = ref(t)
        e, ed = q - q_d, qd - qd_d
        qd_r, qdd_r = qd_d - Lambda @ e, qdd_d - Lambda @ ed
        s = qd - qd_r
        Y = pkg.regressor(q, qd, qd_r, qdd_r)
        if k % log_every == 0:
            err = theta_hat - theta
            out.t.append(t)
            out.tracking_error.append(float(np.linalg.norm(e)))
            out.prediction_error.append(float(np.linalg.norm(Y_ref @ err) / tau_ref))
            out.parameter_error.append(float(np.linalg.norm(err) / np.linalg.norm(theta)))
            out.lyapunov.append(float(0.5 * s @ pkg.mass_matrix(q) @ s + 0.5 * err @ Gamma @ err))
        if k == steps:
            break
        tau = Y @ theta_hat - K_D @ s                                    # (36)
        theta_hat = theta_hat - dt * (Gamma_inv @ (Y.T @ s))            # (37), Euler
        q, qd = rk4_step(pkg, q, qd, tau, dt, t)                       # the true robot, tau held
    return out


def rk4_step(pkg, q, qd, tau, dt, t=0.0):
    """(q, qd) after one control period of the true robot (the generated forward_dynamics, RK4,
    tau held); FloatingPointError if it diverged."""
    def fd(q, qd):
        return qd, pkg.forward_dynamics(q, qd, tau)

    k1 = fd(q, qd)
    k2 = fd(q + dt / 2 * k1[0], qd + dt / 2 * k1[1])
    k3 = fd(q + dt / 2 * k2[0], qd + dt / 2 * k2[1])
    k4 = fd(q + dt * k3[0], qd + dt * k3[1])
    q = q + dt / 6 * (k1[0] + 2 * k2[0] + 2 * k3[0] + k4[0])
    qd = qd + dt / 6 * (k1[1] + 2 * k2[1] + 2 * k3[1] + k4[1])
    if not (np.all(np.isfinite(q)) and np.all(np.isfinite(qd))):
        raise FloatingPointError(f"the simulation diverged at t = {t:.3f} s")
    return q, qd


def check_identity(pkg, seed: int = 0) -> float:
    """max |slotine_li - Y theta| / max |slotine_li| at a random state, with the true theta."""
    rng = np.random.default_rng(seed)
    q, qd, qd_r, qdd_r = (rng.uniform(-2, 2, pkg.nv) for _ in range(4))
    tau = pkg.slotine_li(q, qd, qd_r, qdd_r)
    return float(np.abs(tau - pkg.regressor(q, qd, qd_r, qdd_r) @ pkg.parameters).max() / np.abs(tau).max())


def report(result: Result, times=None) -> None:
    r = result.arrays()
    times = times if times is not None else np.linspace(0.0, r["t"][-1], 6)
    print(f"Y along the reference has rank {result.rank} of {result.columns} columns: only {result.rank} "
          f"combinations of theta can be learned from it, so |theta_hat - theta| need not go to 0")
    print(f"{'t [s]':>7} {'|q - q_d| [rad]':>16} {'torque pred. err':>17} {'|th^ - th|/|th|':>16} {'V':>10}")
    for t in times:
        i = int(np.argmin(np.abs(r["t"] - t)))
        print(f"{r['t'][i]:7.2f} {r['tracking_error'][i]:16.2e} {r['prediction_error'][i]:17.2e} "
              f"{r['parameter_error'][i]:16.3f} {r['lyapunov'][i]:10.2e}")


def plot(result: Result, path, title: str, fixed: Result | None = None) -> bool:
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib is not installed (pip install 'symgen[plots]'): no plot")
        return False
    r = result.arrays()
    fig, axes = plt.subplots(3, 1, figsize=(7, 7.5), sharex=True)
    axes[0].semilogy(r["t"], r["tracking_error"], label="adaptive (Slotine-Li)")
    if fixed is not None:
        f = fixed.arrays()
        axes[0].semilogy(f["t"], f["tracking_error"], ":", color="grey", label="same gains, initial model kept")
        axes[0].legend(fontsize=8)
    axes[0].set_ylabel("|q - q_d| [rad]")
    axes[0].set_title(title)
    axes[1].semilogy(r["t"], r["prediction_error"], label="torque prediction error along q_d\n"
                     "|Y_ref (θ̂ - θ)| / |Y_ref θ|")
    axes[1].semilogy(r["t"], r["parameter_error"], "--", label=f"|θ̂ - θ| / |θ| (Y has rank {result.rank} "
                     f"of {result.columns})")
    axes[1].set_ylabel("parameter error")
    axes[1].legend(fontsize=8)
    axes[2].semilogy(r["t"], r["lyapunov"])
    axes[2].set_ylabel("V = ½ sᵀMs + ½ θ̃ᵀΓθ̃")
    axes[2].set_xlabel("t [s]")
    for ax in axes:
        ax.grid(True, which="both", alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=80)
    plt.close(fig)
    print(f"plot: {path}")
    return True


def main(argv=None) -> Result:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--urdf", type=Path, default=None, help="robot (default: symgen's bundled arm4.urdf)")
    ap.add_argument("--out", type=Path, default=None,
                    help="folder of the generated package (default: a temporary folder); reused when it is there")
    ap.add_argument("--force", action="store_true", help="rebuild the package in --out even if it is there")
    ap.add_argument("--no-compile", action="store_true", help="NumPy backend only (no C compiler needed)")
    ap.add_argument("--seconds", type=float, default=10.0, help="simulated time (default 10)")
    ap.add_argument("--rate", type=float, default=1000.0, help="control and integration rate in Hz (default 1000)")
    ap.add_argument("--lambda", dest="lam", type=float, default=10.0, help="Lambda = this * 1, 1/s (default 10)")
    ap.add_argument("--kd", type=float, default=50.0, help="K_D = this * diag(M_model(q_d(0))), 1/s (default 50)")
    ap.add_argument("--adaptation", type=float, default=1.0,
                    help="adaptation gain: Gamma^-1 = this * diag(parameter scale)^2, 1/s (default 1)")
    ap.add_argument("--payload", type=float, default=0.5, help="payload error of the initial model, kg (default 0.5)")
    ap.add_argument("--seed", type=int, default=0, help="seed of the reference and the initial model error")
    ap.add_argument("--plot", type=Path, default=None, help="save the plot to this PNG")
    args = ap.parse_args(argv)

    urdf = args.urdf or default_urdf()
    with tempfile.TemporaryDirectory(prefix="symgen-adaptive-") as tmp:
        robot, pkg = load_package(urdf, args.out or Path(tmp), args.force, not args.no_compile)
        print(f"slotine_li(q, qd, qd_r, qdd_r) == regressor(...) @ parameters: relative error "
              f"{check_identity(pkg, args.seed):.1e}")
        t0 = time.perf_counter()
        result = simulate(robot, pkg, args.seconds, args.rate, args.seed, args.payload, args.lam, args.kd, args.adaptation)
        print(f"simulated {args.seconds:g} s of {robot.name} ({pkg.nv} joints, {pkg.backend}) at {args.rate:g} Hz "
              f"in {time.perf_counter() - t0:.1f} s")
        # the same run without adaptation (theta_hat kept at the wrong initial model), for comparison
        fixed = simulate(robot, pkg, args.seconds, args.rate, args.seed, args.payload, args.lam, args.kd, 0.0)
    report(result)
    last = result.arrays()["t"] >= 0.9 * args.seconds
    print(f"mean |q - q_d| over the last 10%: {np.mean(np.asarray(result.tracking_error)[last]):.2e} rad adaptive, "
          f"{np.mean(np.asarray(fixed.tracking_error)[last]):.2e} rad with the initial model kept")
    if args.plot:
        plot(result, args.plot, f"Slotine-Li adaptive control of {robot.name}, generated by symgen", fixed)
    return result


if __name__ == "__main__":
    main(sys.argv[1:])
