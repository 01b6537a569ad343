"""A momentum observer estimating the external torque of a push on panda, from the generated
momentum(q, qd), coriolis_transpose_product(q, qd) and gravity(q).

With an external joint torque tau_ext, M qdd + C qd + g = tau + tau_ext gives the momentum
equation (p = M qd, Mdot = C + C^T):

    p' = tau + tau_ext + C^T qd - g

so De Luca's residual (Wensing & Slotine, Appendix B-B1; De Luca and Mattone, 2003)

    r(t) = K [ p(t) - p(0) - int_0^t (tau + C^T qd - g + r) ds ]

obeys r' = K (tau_ext - r): a first-order filter of the external torque, with no acceleration
measured and no M^-1. C^T qd is the same for every C with Mdot = C + C^T; the generated
``coriolis_transpose_product`` computes it in O(N) without forming C (eq. (38)).

The simulation: panda held at a posture by a PD law with gravity compensation, pushed at its hand
by a force of ``--force`` N along the world y axis from 0.2 s to 0.2 + ``--push`` s (smooth 20 ms
ramps), tau_ext = J^T F with the generated ``frame_jacobian`` of the hand; the true motion by RK4 of
the generated ``forward_dynamics`` (torques held over each 1 ms period), the observer updated once
per period (trapezoid rule for the integral).

    python examples/momentum_observer.py --plot momentum_observer.png
    python examples/momentum_observer.py --quick --no-compile        # 0.6 s of motion, NumPy only

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

#: what the observer and the simulation call
QUANTITIES = ("p", "CTv", "g", "qdd", "J")
HAND = "panda_hand"


def panda_urdf() -> Path:
    """panda's URDF from example-robot-data (the ``test`` extra installs it)."""
    import site
    import sysconfig

    roots = [sysconfig.get_paths()["purelib"], *site.getsitepackages()]
    for root in roots:
        path = Path(root, "cmeel.prefix", "share", "example-robot-data", "robots", "panda_description", "urdf",
                    "panda.urdf")
        if path.is_file():
            return path
    raise SystemExit("momentum_observer: example-robot-data is not installed (pip install example-robot-data), "
                     "or pass --urdf")


def push(t, start, duration, force, ramp=0.02):
    """The push's force along world y at time t: 0, a smooth rise, ``force``, a smooth fall."""
    def step(x):
        x = min(max(x / ramp, 0.0), 1.0)
        return x * x * (3 - 2 * x)

    return force * step(t - start) * step(start + duration - t)


def simulate(pkg, seconds=1.5, start=0.2, duration=0.8, force=20.0, K=50.0, h=1e-3):
    """The pushed, PD-held robot and the observer: arrays over time of the true external torque
    and its estimate r, per joint."""
    c = pkg.c if pkg.c is not None else pkg.numpy
    n = pkg.nv
    hand = list(pkg.frames).index(HAND)
    q0 = np.array([0.0, -0.4, 0.0, -2.0, 0.0, 1.6, 0.8] + [0.02] * (n - 7))
    # gains of a 20 rad/s critically damped joint each, from M_ii = momentum(q0, e_i)_i: a 7 g m^2
    # wrist and 15 g fingers beside 2 kg m^2 at the shoulder, for one 1 ms RK4 step
    Mii = np.array([c.momentum(q0, e)[i] for i, e in enumerate(np.eye(n))])
    Kp, Kd = 20.0 ** 2 * Mii, 2 * 20.0 * Mii
    q, v = q0.copy(), np.zeros(n)

    def external(q, t):
        F = np.array([0.0, push(t, start, duration, force), 0.0])
        return c.frame_jacobian(q)[hand, :3].T @ F                     # tau_ext = J^T F (linear rows)

    def control(q, v):
        return c.gravity(q) + Kp * (q0 - q) - Kd * v

    def known(q, v, tau):                                               # tau + C^T qd - g
        return tau + c.coriolis_transpose_product(q, v) - c.gravity(q)

    steps = int(round(seconds / h))
    p0, integral, r = c.momentum(q, v), np.zeros(n), np.zeros(n)
    ts, true, estimate = [0.0], [np.zeros(n)], [r.copy()]
    for k in range(steps):
        t = k * h
        tau = control(q, v)
        f0 = known(q, v, tau)

        def f(x, s):
            return np.r_[x[n:], c.forward_dynamics(x[:n], x[n:], tau + external(x[:n], s))]

        x = np.r_[q, v]                                                 # RK4, tau held, the push as it is
        k1 = f(x, t)
        k2 = f(x + h / 2 * k1, t + h / 2)
        k3 = f(x + h / 2 * k2, t + h / 2)
        k4 = f(x + h * k3, t + h)
        x = x + h / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
        q, v = x[:n], x[n:]
        integral += h / 2 * (f0 + known(q, v, tau)) + h * r             # the observer's integral
        r = K * (c.momentum(q, v) - p0 - integral)
        ts.append(t + h)
        true.append(external(q, t + h))
        estimate.append(r.copy())
    return np.array(ts), np.array(true), np.array(estimate)


def main(argv=None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--urdf", type=Path, help="panda's URDF (default: example-robot-data's)")
    ap.add_argument("--out", type=Path, help="build the package here (default: a temporary folder)")
    ap.add_argument("--quick", action="store_true", help="0.6 s of motion, a 0.3 s push (CI)")
    ap.add_argument("--force", type=float, default=20.0, help="the push, N along world y (default 20)")
    ap.add_argument("--gain", type=float, default=50.0, help="the observer's K, 1/s (default 50)")
    ap.add_argument("--no-compile", action="store_true", help="NumPy backend only")
    ap.add_argument("--plot", type=Path, help="write the plot here (needs matplotlib)")
    args = ap.parse_args(argv)
    seconds, duration = (0.6, 0.3) if args.quick else (1.5, 0.8)
    robot = symgen.load_urdf(args.urdf or panda_urdf())
    with tempfile.TemporaryDirectory() as tmp:
        out = args.out or Path(tmp)
        result = build(robot, out, opts=BuildOptions(quantities=QUANTITIES, frames=(HAND,), force=True,
                                                     compile=not args.no_compile))
        pkg = import_package(result.path)
        t, true, est = simulate(pkg, seconds=seconds, duration=duration, force=args.force, K=args.gain)
    pushed = (t > 0.2 + duration - 0.1) & (t <= 0.2 + duration - 0.02)   # the push's last 80 ms at full force
    scale = float(np.abs(true[pushed]).max())
    error = float(np.abs(est[pushed] - true[pushed]).max()) / scale
    before = float(np.abs(est[t < 0.2]).max()) / scale
    print(f"push of {args.force:g} N at {HAND}, {duration:g} s: max |tau_ext| {scale:.3f} N m")
    print(f"estimate vs true over the push's last 80 ms: max error {100 * error:.3f}% of max |tau_ext|")
    print(f"estimate before the push: max {100 * before:.2e}% of max |tau_ext|")
    if args.plot:
        try:
            import matplotlib
            matplotlib.use("Agg")
            import matplotlib.pyplot as plt
        except ImportError:
            print("matplotlib is not installed (pip install -e '.[plots]'): no plot")
        else:
            fig, ax = plt.subplots(figsize=(8, 4.5))
            for j in range(7):
                line, = ax.plot(t, true[:, j], lw=2, alpha=0.4)
                ax.plot(t, est[:, j], "--", color=line.get_color(), lw=1, label=f"joint {j + 1}")
            ax.set(xlabel="t [s]", ylabel="torque [N m]",
                   title=f"panda pushed at the hand ({args.force:g} N): tau_ext (solid) and the observer's r (dashed)")
            ax.legend(ncol=4, fontsize=8)
            fig.tight_layout()
            fig.savefig(args.plot, dpi=110)
            print(f"wrote {args.plot}")
    return {"t": t, "true": true, "estimate": est, "error": error, "before": before}


if __name__ == "__main__":
    main(sys.argv[1:])
