"""Why the Christoffel-consistent Coriolis matrix: passivity-based tracking with and without torsion
(Wensing & Slotine, "Coriolis Factorizations and their Connections to Riemannian Geometry",
Sec. IV-A2, Figures 4-7), then the same contrast on a robot arm with the generated functions.

Every factorization C with Mdot = C + C^T and C(q, v) v = the Coriolis forces serves the
Slotine-Li controller

    v_r = qd_d - Lambda (q - q_d),   s = v - v_r,
    tau = M_hat(q) vd_r + C_hat(q, v) v_r + g_hat(q) - K_D s                  (12)

and its Lyapunov function V = 1/2 s^T M s (V' = -s^T K_D s + s^T Y theta~: with a wrong model the
error does not vanish, whatever C). But for n >= 3 there are infinitely many such C: any
C + D(v) with D_ij(v) = sum_k T_ijk v_k, T totally antisymmetric (a contorsion), gives the same
dynamics and the same skew property. Only the Christoffel one is torsion-free.

1. The paper's point mass (m = 1 kg, model m_hat = 0.9 kg, q = position, Lambda = K_D = 1,
   q_d(t) = [t + sin t, 0, 0], starting at the origin moving sideways, v(0) = [0, 1, 0]): with the
   torsion-free C = 0 each axis settles on its own and z stays 0; with the admissible
   C = -5 (v x) the term -5 v x v_r pushes the mass up and out of the plane, and the state
   oscillates (the paper's Figs. 4-7: states, 3D paths, V).
2. The generated arm (arm4 by default, ``--urdf`` another; a ``--parametric`` build, so the
   controller's model is the URDF's parameters scaled by 0.9): ``slotine_li(q, v, v_r, vd_r,
   theta_hat)`` is (12) with the Christoffel-consistent C; the twisted controller adds
   D(v) v_r with T = beta epsilon on three joints (the Levi-Civita symbol, beta = 5 x the mean of
   M_hat's diagonal at the start). The true arm is simulated with the generated
   ``forward_dynamics`` (RK4 at 1 kHz). Both track; the twisted one with a torque that varies more.

    python examples/torsion.py --plot torsion.png
    python examples/torsion.py --urdf panda.urdf --seconds 10 --plot panda_torsion.png
"""
from __future__ import annotations

import argparse
import tempfile
from importlib.resources import files
from pathlib import Path

import numpy as np


def skew(v: np.ndarray) -> np.ndarray:
    """(v x) as a matrix."""
    return np.array([[0.0, -v[2], v[1]], [v[2], 0.0, -v[0]], [-v[1], v[0], 0.0]])


def rk4(f, x, t, dt):
    k1 = f(t, x)
    k2 = f(t + dt / 2, x + dt / 2 * k1)
    k3 = f(t + dt / 2, x + dt / 2 * k2)
    k4 = f(t + dt, x + dt * k3)
    return x + dt / 6 * (k1 + 2 * k2 + 2 * k3 + k4)


# ------------------------------------------------------------------------------ the point mass

def point_mass(beta: float, seconds: float = 10.0, dt: float = 1e-3, m: float = 1.0, m_hat: float = 0.9,
               lam: float = 1.0, kd: float = 1.0) -> dict:
    """The paper's example with C_hat = beta (v x) (beta = 0: torsion-free; -5: Fig. 5).
    Returns t, q, v, q_d, tau and V = 1/2 s^T M s at each step."""
    def reference(t):
        return np.array([t + np.sin(t), 0, 0]), np.array([1 + np.cos(t), 0, 0]), np.array([-np.sin(t), 0, 0])

    def control(t, q, v):
        q_d, qd_d, qdd_d = reference(t)
        v_r, vd_r = qd_d - lam * (q - q_d), qdd_d - lam * (v - qd_d)
        s = v - v_r
        return m_hat * vd_r + beta * skew(v) @ v_r - kd * s, s

    def f(t, x):                       # the true point mass: m vd = tau (its Coriolis forces are zero)
        q, v = x[:3], x[3:]
        tau, _ = control(t, q, v)
        return np.concatenate([v, tau / m])

    steps = int(round(seconds / dt))
    x = np.concatenate([np.zeros(3), [0.0, 1.0, 0.0]])
    out = {k: [] for k in ("t", "q", "v", "q_d", "tau", "V")}
    for k in range(steps + 1):
        t = k * dt
        tau, s = control(t, x[:3], x[3:])
        for key, value in (("t", t), ("q", x[:3]), ("v", x[3:]), ("q_d", reference(t)[0]), ("tau", tau),
                           ("V", 0.5 * m * s @ s)):
            out[key].append(np.copy(value))
        x = rk4(f, x, t, dt)
    return {k: np.asarray(v) for k, v in out.items()}


# ------------------------------------------------------------------------------- the robot arm

def default_urdf() -> Path:
    return Path(str(files("symgen.examples") / "arm4.urdf"))


def build_arm(urdf: Path, out: Path):
    """A --parametric package of ``urdf`` with what the example calls."""
    import symgen
    from symgen.codegen.build import BuildOptions, build
    from symgen.codegen.package import import_package

    robot = symgen.load_urdf(str(urdf))
    result = build(robot, out, opts=BuildOptions(quantities=("M", "C", "tau_sl", "qdd"), parametric=True, force=True))
    return import_package(result.path)


def contorsion(n: int, joints=(0, 1, 2), beta: float = 1.0) -> np.ndarray:
    """T (n, n, n), totally antisymmetric: beta times the Levi-Civita symbol on ``joints``."""
    T = np.zeros((n, n, n))
    i, j, k = joints
    for (a, b, c), sign in (((i, j, k), 1), ((j, k, i), 1), ((k, i, j), 1),
                            ((j, i, k), -1), ((i, k, j), -1), ((k, j, i), -1)):
        T[a, b, c] = beta * sign
    return T


def arm(pkg, twisted: bool, seconds: float = 5.0, rate: float = 1000.0, lam: float = 5.0, kd: float = 10.0,
        scale: float = 0.9) -> dict:
    """Slotine-Li tracking of sines by the generated arm, with the point mass's gains in the arm's
    units (Lambda = 1, K_D = diag(M_hat(q_d(0))), beta = 5 x its mean), the controller's model
    theta_hat = ``scale`` theta; with ``twisted``, C_hat + D(v), D from :func:`contorsion`. Like
    the point mass, the arm starts on the reference but moving across it (1 rad/s on the second
    joint), where v x v_r is large."""
    n, theta = pkg.nv, np.asarray(pkg.parameters, dtype=float)
    theta_hat = scale * theta
    w = np.array([0.9, 1.7, 2.3, 3.1, 1.3, 2.9, 0.7])[np.arange(n) % 7]

    def reference(t):
        return 0.3 + 0.4 * np.sin(w * t), 0.4 * w * np.cos(w * t), -0.4 * w ** 2 * np.sin(w * t)

    M0 = pkg.mass_matrix(reference(0.0)[0], theta_hat)
    K_D = kd * np.diag(np.diag(M0))
    T = contorsion(n, beta=5.0 * kd * float(np.mean(np.diag(M0)))) if twisted and n >= 3 else np.zeros((n, n, n))

    def control(t, q, v):
        q_d, qd_d, qdd_d = reference(t)
        v_r, vd_r = qd_d - lam * (q - q_d), qdd_d - lam * (v - qd_d)
        s = v - v_r
        D = T @ v                                           # D_ij = sum_k T_ijk v_k: skew, D v = 0
        return pkg.slotine_li(q, v, v_r, vd_r, theta_hat) + D @ v_r - K_D @ s, s

    def f(t, x):
        q, v = x[:n], x[n:]
        tau, _ = control(t, q, v)
        return np.concatenate([v, pkg.forward_dynamics(q, v, tau, theta)])

    dt = 1.0 / rate
    x = np.concatenate([reference(0.0)[0], np.eye(n)[1]])
    out = {k: [] for k in ("t", "error", "tau", "V")}
    for k in range(int(round(seconds * rate)) + 1):
        t = k * dt
        q, v = x[:n], x[n:]
        tau, s = control(t, q, v)
        out["t"].append(t)
        out["error"].append(np.linalg.norm(q - reference(t)[0]))
        out["tau"].append(tau)
        out["V"].append(0.5 * s @ pkg.mass_matrix(q, theta) @ s)
        x = rk4(f, x, t, dt)
    return {k: np.asarray(v) for k, v in out.items()}


def total_variation(t: np.ndarray, x: np.ndarray) -> float:
    """The integral of |dx/dt| over the run, summed over components: how much a signal moves."""
    return float(np.abs(np.diff(x, axis=0)).sum())


def plot(path: Path, free: dict, twisted: dict, arm_free: dict | None, arm_twisted: dict | None) -> bool:
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib is not installed (pip install -e '.[plots]'): no plot")
        return False
    fig = plt.figure(figsize=(15, 9))
    for col, (name, run) in enumerate((("torsion-free, C = 0 (Fig. 4)", free), ("C = -5 (v x) (Fig. 5)", twisted))):
        ax = fig.add_subplot(2, 4, col + 1)
        for i, label in enumerate("xyz"):
            ax.plot(run["t"], run["q"][:, i] - run["q_d"][:, i], label=f"{label} - {label}_d")
            ax.plot(run["t"], run["v"][:, i], "--", label=f"v_{label}")
        ax.set_title(name, fontsize=9)
        ax.set_xlabel("t (s)")
        ax.legend(fontsize=7)
    ax = fig.add_subplot(2, 4, 3, projection="3d")
    for name, run in (("torsion-free", free), ("with torsion", twisted)):
        ax.plot(run["q"][:, 0], run["q"][:, 1], run["q"][:, 2], label=name)
    ax.set_title("paths in 3D (Fig. 6)", fontsize=9)
    ax.legend(fontsize=7)
    ax = fig.add_subplot(2, 4, 4)
    for name, run in (("torsion-free", free), ("with torsion", twisted)):
        ax.semilogy(run["t"], run["V"] + 1e-12, label=name)
    ax.set_title("V = 1/2 s^T M s (Fig. 7)", fontsize=9)
    ax.set_xlabel("t (s)")
    ax.legend(fontsize=7)
    if arm_free is not None:
        for col, (key, title) in enumerate((("error", "arm: |q - q_d|"), ("V", "arm: V = 1/2 s^T M s"))):
            ax = fig.add_subplot(2, 4, 5 + col)
            for name, run in (("Christoffel C", arm_free), ("C + D(v), torsion", arm_twisted)):
                ax.semilogy(run["t"], run[key] + 1e-12, label=name)
            ax.set_title(title, fontsize=9)
            ax.set_xlabel("t (s)")
            ax.legend(fontsize=7)
        for col, (name, run) in enumerate((("arm torque, Christoffel C", arm_free), ("arm torque, with torsion", arm_twisted))):
            ax = fig.add_subplot(2, 4, 7 + col)
            ax.plot(run["t"], run["tau"])
            ax.set_title(name, fontsize=9)
            ax.set_xlabel("t (s)")
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)
    return True


def main(argv=None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=10.0, help="point-mass run [default: 10 s]")
    ap.add_argument("--arm-seconds", type=float, default=5.0, help="arm run [default: 5 s; 0: no arm]")
    ap.add_argument("--urdf", type=Path, default=None, help="the arm [default: symgen's bundled arm4]")
    ap.add_argument("--out", type=Path, default=None, help="package folder [default: a temporary folder]")
    ap.add_argument("--plot", type=Path, default=None, help="write the figure here (PNG)")
    args = ap.parse_args(argv)

    free, twisted = point_mass(0.0, args.seconds), point_mass(-5.0, args.seconds)
    result = {"point_mass": {}}
    for name, run in (("torsion_free", free), ("torsion", twisted)):
        stats = {"max_out_of_plane": float(np.abs(run["q"][:, 2]).max()),
                 "final_error": float(np.linalg.norm(run["q"][-1] - run["q_d"][-1])),
                 "max_V": float(run["V"].max()), "tau_variation": total_variation(run["t"], run["tau"])}
        result["point_mass"][name] = stats
        print(f"point mass, {name:12s}: max |z| {stats['max_out_of_plane']:.3f} m, final |q - q_d| "
              f"{stats['final_error']:.3f} m, max V {stats['max_V']:.3f}, torque variation {stats['tau_variation']:.1f} N")
    arm_free = arm_twisted = None
    if args.arm_seconds > 0:
        with tempfile.TemporaryDirectory(prefix="symgen-torsion-") as tmp:
            pkg = build_arm(args.urdf or default_urdf(), args.out or Path(tmp))
            arm_free, arm_twisted = arm(pkg, False, args.arm_seconds), arm(pkg, True, args.arm_seconds)
        result["arm"] = {}
        for name, run in (("christoffel", arm_free), ("torsion", arm_twisted)):
            stats = {"initial_error": float(run["error"][0]), "final_error": float(run["error"][-1]),
                     "tau_variation": total_variation(run["t"], run["tau"]), "max_V": float(run["V"].max())}
            result["arm"][name] = stats
            print(f"arm, {name:12s}: |q - q_d| {stats['initial_error']:.3f} -> {stats['final_error']:.4f} rad, "
                  f"torque variation {stats['tau_variation']:.1f} N m, max V {stats['max_V']:.3f}")
    if args.plot:
        plot(args.plot, free, twisted, arm_free, arm_twisted)
    result["runs"] = {"free": free, "twisted": twisted, "arm_free": arm_free, "arm_twisted": arm_twisted}
    return result


if __name__ == "__main__":
    main()
