"""solo12 standing, then trotting in place, simulated with the generated contact dynamics.

    python examples/quadruped_contacts.py --plot quadruped_contacts.png
    python examples/quadruped_contacts.py --seconds 1 --no-compile        # NumPy only

The package is built with ``--contacts FL_FOOT,FR_FOOT,HL_FOOT,HR_FOOT`` (point contacts at the
feet). Each control tick calls only the generated package: ``whole_body_terms`` gives M, the
nonlinear effects, the feet's Jacobians, A_G and the CoM, and a TSID-style balance law sets the
joint torques, tau = S (nle - Jc^T lambda_ref) + PD on the joints, with lambda_ref the weight shared
by the feet on the ground. The simulator advances with ``contact_dynamics`` over the feet that are
on the ground (the mask changes at run time: no rebuild), ``impulse_dynamics`` at each touchdown
(restitution 0: the landing foot stops) and after each step (the feet on the ground stay at rest),
and the package's generated ``integrate`` (the free-flyer's exponential map, Pinocchio's
integrate). After ``--stand`` seconds the diagonal pairs (FL, HR) and (FR, HL) take turns in the air (``--period`` per step).

It prints and returns the base height, the vertical contact forces and the energy T + V over time;
``--plot`` draws them.
"""
from __future__ import annotations

import argparse
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

FEET = ("FL_FOOT", "FR_FOOT", "HL_FOOT", "HR_FOOT")
#: example-robot-data's standing posture of solo12 (HAA, HFE, KFE per leg)
STANCE = np.array([0.0, 0.8, -1.6, 0.0, 0.8, -1.6, 0.0, -0.8, 1.6, 0.0, -0.8, 1.6])
PAIRS = ((0, 3), (1, 2))                 # trot: FL with HR, FR with HL


def robot_urdf() -> Path:
    from symgen.bench.tables import robot_urdf as find

    return find("erd:solo_description/robots/solo12.urdf")


@dataclass
class Run:
    t: np.ndarray
    height: np.ndarray
    forces: np.ndarray                   # (steps, 4) vertical contact forces, 0 in the air
    energy: np.ndarray
    rest: np.ndarray                     # largest speed of a foot on the ground after each step
    weight: float


def build_package(out, compile_: bool):
    import symgen
    from symgen.codegen.build import BuildOptions, build, import_package

    robot = symgen.load_urdf(robot_urdf(), floating_base=True)
    opts = BuildOptions(quantities=("oMf", "contact_terms", "impulse_terms", "whole_body_terms"),
                        contacts=tuple((f, "3d") for f in FEET), compile=compile_, jobs=2)
    return import_package(build(robot, out, name="solo12_contacts", opts=opts).path)


def standing_state(pkg):
    """The stance posture with the base level and the feet on the ground (z = 0)."""
    q = np.r_[0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0, STANCE]
    q[2] = -pkg.frame_placement(q)[:, 2, 3].min()
    return q, np.zeros(pkg.nv)


def tick(pkg, q, v, q_ref, on, kp=6.0, kd=0.3):
    """The balance law, from one call of the package: tau for the 12 joints."""
    M, nle, g, Jc, dJv, Ag, dhg, com = pkg.whole_body_terms(q, v)
    weight = M[0, 0] * -pkg.gravity_vector[2]
    lam = np.zeros((len(FEET), 3))
    lam[on, 2] = weight / max(1, on.sum())                          # the weight shared by the feet down
    tau = nle - np.einsum("cij,ci->j", Jc[:, :3], lam)              # S (nle - Jc^T lambda_ref)
    return tau[6:] + kp * (q_ref - q[7:]) - kd * v[6:], M, com


def swing(t, stand, period, lift=0.35):
    """(feet in the air, joint offsets) at time t: each diagonal pair in turn for ``period`` s."""
    if t < stand:
        return (), np.zeros(12)
    k, phase = divmod((t - stand) / period, 1.0)
    legs = PAIRS[int(k) % 2]
    offset = np.zeros(12)
    for leg in legs:
        s = np.sin(np.pi * phase) * lift
        sign = 1.0 if leg < 2 else -1.0                           # front knees bend the other way
        offset[3 * leg + 1] += sign * s
        offset[3 * leg + 2] -= 2 * sign * s
    return legs, offset


def simulate(pkg, seconds=3.0, stand=1.0, period=0.25, dt=1e-3) -> Run:
    q, v = standing_state(pkg)
    on = np.ones(len(FEET), bool)
    steps = int(round(seconds / dt))
    out = {k: [] for k in ("t", "height", "forces", "energy", "rest")}
    weight = None
    for k in range(steps):
        t = k * dt
        air, offset = swing(t, stand, period)
        for c in range(len(FEET)):
            if c in air and on[c] and np.sin(np.pi * ((t - stand) / period % 1.0)) > 0.05:
                on[c] = False                                     # lift-off
        z = pkg.frame_placement(q)[:, 2, 3]
        landing = ~on & (z <= 0.0) & np.array([c not in air or (t - stand) / period % 1.0 > 0.5
                                                for c in range(len(FEET))])
        if landing.any():                                         # touchdown: the impulse stops the foot
            on |= landing
            v, _ = pkg.impulse_dynamics(q, v, on.astype(float))
        tau, M, com = tick(pkg, q, v, STANCE + offset, on)
        qdd, lam = pkg.contact_dynamics(q, v, np.r_[np.zeros(6), tau], on.astype(float))
        v = v + dt * qdd
        v, _ = pkg.impulse_dynamics(q, v, on.astype(float))       # the feet on the ground stay at rest
        q = pkg.integrate(q, v * dt)                              # the generated q (+) v dt
        weight = M[0, 0] * -pkg.gravity_vector[2]
        vf = np.einsum("cij,j->ci", pkg.whole_body_terms(q, v)[3][:, :3], v)
        out["t"].append(t + dt)
        out["height"].append(q[2])
        out["forces"].append(np.where(on, lam[:, 2], 0.0))
        out["energy"].append(0.5 * v @ M @ v - M[0, 0] * pkg.gravity_vector @ com)
        out["rest"].append(np.abs(vf[on]).max(initial=0.0))
    return Run(*(np.array(out[k]) for k in ("t", "height", "forces", "energy", "rest")), weight=weight)


def plot(run: Run, path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(3, 1, figsize=(7, 7), sharex=True)
    ax[0].plot(run.t, run.height)
    ax[0].set_ylabel("base height (m)")
    for c, name in enumerate(FEET):
        ax[1].plot(run.t, run.forces[:, c], label=name, lw=0.8)
    ax[1].axhline(run.weight / 4, color="k", lw=0.5, ls=":")
    ax[1].set_ylabel("vertical contact force (N)")
    ax[1].legend(ncol=4, fontsize=8)
    ax[2].plot(run.t, run.energy - run.energy[0])
    ax[2].set_ylabel("T + V - (T + V)(0) (J)")
    ax[2].set_xlabel("t (s)")
    fig.suptitle("solo12: standing, then trotting in place (generated contact and impulse dynamics)")
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=3.0)
    ap.add_argument("--stand", type=float, default=1.0, help="seconds of standing before the trot")
    ap.add_argument("--period", type=float, default=0.25, help="seconds per trot step")
    ap.add_argument("--out", help="build folder (default: a temporary one)")
    ap.add_argument("--no-compile", action="store_true", help="NumPy only")
    ap.add_argument("--plot", help="write the figure to this file (needs matplotlib)")
    args = ap.parse_args(argv)
    out = Path(args.out) if args.out else Path(tempfile.mkdtemp(prefix="symgen_contacts_"))
    t0 = time.perf_counter()
    pkg = build_package(out, not args.no_compile)
    print(f"built in {time.perf_counter() - t0:.1f} s (backend {pkg.backend}); contacts {pkg.contacts}")
    t0 = time.perf_counter()
    run = simulate(pkg, args.seconds, args.stand, args.period)
    print(f"simulated {args.seconds:g} s in {time.perf_counter() - t0:.1f} s: base height {run.height.min():.3f}-"
          f"{run.height.max():.3f} m; standing, sum of vertical forces / weight "
          f"{run.forces[run.t < args.stand].sum(axis=1).mean() / run.weight:.3f}; feet on the ground at rest to "
          f"{run.rest.max():.1e} m/s")
    if args.plot:
        plot(run, args.plot)
        print(f"wrote {args.plot}")
    return run


if __name__ == "__main__":
    main()
