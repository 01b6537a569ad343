"""An operational-space controller on panda (Khatib, 1987): the flange's position driven to a target
by a task-space PD law through the generated operational_space_inertia (Lambda),
operational_space_bias (mu + p) and dynamically_consistent_inverse (Jbar), with a joint-space
posture task in the null space of the flange's.

For the point task x (the flange origin, 3 rows: ``--frames flange=panda_link8@0,0,0``),

    F   = Lambda (Kp (x_d - x) - Kd xdot) + mu + p          the force that gives xdd = Kp e - Kd xdot
    tau = J^T F + (1 - J^T Jbar^T) tau_0                    tau_0 = M-free posture PD + gravity

(mu + p = Lambda (J M^-1 (C v + g) - J_dot v); the null-space projector 1 - J^T Jbar^T leaves the
task's acceleration alone because Jbar is the dynamically consistent inverse). The motion: RK4 of
the generated ``forward_dynamics`` (torques held over each 1 ms period). The flange's error then
decays as the critically damped x'' = -Kp x - Kd x' prescribes, whatever the arm's inertia.

    python examples/operational_space_control.py --plot operational_space_control.png
    python examples/operational_space_control.py --quick --no-compile        # 0.4 s, NumPy only

Without matplotlib (the ``plots`` extra) it prints and skips the plot.
"""
from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

import numpy as np

import symgen
from symgen.codegen.build import BuildOptions, build
from symgen.codegen.package import import_package

#: what the controller and the simulation call
QUANTITIES = ("Lambda", "Jbar", "mu_p", "J", "vf", "oMf", "g", "qdd")
FLANGE = "flange=panda_link8@0,0,0"


def panda_urdf() -> Path:
    """panda's URDF from example-robot-data (the ``test`` extra installs it)."""
    import site
    import sysconfig

    for root in [sysconfig.get_paths()["purelib"], *site.getsitepackages()]:
        path = Path(root, "cmeel.prefix", "share", "example-robot-data", "robots", "panda_description", "urdf",
                    "panda.urdf")
        if path.is_file():
            return path
    raise SystemExit("operational_space_control: example-robot-data is not installed (pip install "
                     "example-robot-data), or pass --urdf")


def simulate(pkg, seconds=1.0, step=(0.1, -0.05, -0.12), wn=15.0, h=1e-3):
    """The controlled arm from rest at a posture, the target ``step`` metres away: arrays over
    time of the flange's position error (3,) and of the error of the ideal closed loop."""
    c = pkg.c if pkg.c is not None else pkg.numpy
    n = pkg.nv
    q0 = np.array([0.0, -0.4, 0.0, -2.0, 0.0, 1.6, 0.8] + [0.02] * (n - 7))
    x_d = c.frame_placement(q0)[0, :3, 3] + np.array(step)
    Kp, Kd = wn ** 2, 2 * wn                                    # critically damped task, per axis
    Kq, Dq = 25.0, 10.0                                         # the posture's PD (per joint, N m/rad)

    def control(q, v):
        J = c.frame_jacobian(q)[0, :3]
        Lam, Jbar, mu_p = c.operational_space_inertia(q)[0, :3, :3], c.dynamically_consistent_inverse(q)[0, :, :3], \
            c.operational_space_bias(q, v)[0, :3]
        e, xdot = x_d - c.frame_placement(q)[0, :3, 3], c.frame_velocity(q, v)[0, :3]
        F = Lam @ (Kp * e - Kd * xdot) + mu_p
        tau0 = Kq * (q0 - q) - Dq * v + c.gravity(q)
        return J.T @ F + tau0 - J.T @ (Jbar.T @ tau0)

    q, v = q0.copy(), np.zeros(n)
    steps = int(round(seconds / h))
    ts, error = [0.0], [x_d - c.frame_placement(q)[0, :3, 3]]
    for k in range(steps):
        tau = control(q, v)

        def f(x):
            return np.r_[x[n:], c.forward_dynamics(x[:n], x[n:], tau)]

        x = np.r_[q, v]
        k1 = f(x)
        k2 = f(x + h / 2 * k1)
        k3 = f(x + h / 2 * k2)
        k4 = f(x + h * k3)
        x = x + h / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
        q, v = x[:n], x[n:]
        ts.append((k + 1) * h)
        error.append(x_d - c.frame_placement(q)[0, :3, 3])
    t = np.array(ts)
    ideal = np.outer((1 + wn * t) * np.exp(-wn * t), np.array(step))    # e(t) of x'' = -Kp x - Kd x'
    return t, np.array(error), ideal


def main(argv=None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--urdf", type=Path, help="panda's URDF (default: example-robot-data's)")
    ap.add_argument("--out", type=Path, help="build the package here (default: a temporary folder)")
    ap.add_argument("--quick", action="store_true", help="0.4 s of motion (CI)")
    ap.add_argument("--no-compile", action="store_true", help="NumPy backend only")
    ap.add_argument("--plot", type=Path, help="write the plot here (needs matplotlib)")
    args = ap.parse_args(argv)
    seconds = 0.4 if args.quick else 1.0
    robot = symgen.load_urdf(args.urdf or panda_urdf())
    with tempfile.TemporaryDirectory() as tmp:
        result = build(robot, args.out or Path(tmp), opts=BuildOptions(quantities=QUANTITIES, frames=(FLANGE,),
                                                                        force=True, compile=not args.no_compile))
        t, error, ideal = simulate(import_package(result.path), seconds=seconds)
    norm, ideal_norm = np.linalg.norm(error, axis=1), np.linalg.norm(ideal, axis=1)
    deviation = float(np.abs(error - ideal).max() / norm[0])
    print(f"flange error {1000 * norm[0]:.1f} mm at t = 0, {1000 * norm[-1]:.3f} mm at t = {t[-1]:g} s")
    print(f"largest deviation from the ideal closed loop x'' = -Kp x - Kd x': {100 * deviation:.3f}% of the step")
    if args.plot:
        try:
            import matplotlib
            matplotlib.use("Agg")
            import matplotlib.pyplot as plt
        except ImportError:
            print("matplotlib is not installed (pip install -e '.[plots]'): no plot")
        else:
            fig, ax = plt.subplots(figsize=(8, 4.5))
            for i, axis in enumerate("xyz"):
                line, = ax.plot(t, 1000 * error[:, i], lw=2, alpha=0.5, label=f"{axis} error")
                ax.plot(t, 1000 * ideal[:, i], "--", color=line.get_color(), lw=1)
            ax.set(xlabel="t [s]", ylabel="flange position error [mm]",
                   title="panda, operational-space control of the flange: simulated (solid), ideal (dashed)")
            ax.legend()
            fig.tight_layout()
            fig.savefig(args.plot, dpi=110)
            print(f"wrote {args.plot}")
    return {"t": t, "error": error, "ideal": ideal, "deviation": deviation, "final": float(norm[-1] / norm[0])}


if __name__ == "__main__":
    main(sys.argv[1:])
