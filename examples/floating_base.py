"""A legged robot with Pinocchio's free-flyer: build, import, one call of each function.

    python examples/floating_base.py                      # solo12 (quadruped), from example-robot-data
    python examples/floating_base.py --robot talos        # the TALOS humanoid (38 velocities; longer build)
    python examples/floating_base.py --urdf my_robot.urdf --out build

q = [x, y, z, qx, qy, qz, qw, joints...] and v = [base linear, base angular velocity in the base
frame, joint speeds...], Pinocchio's JointModelFreeFlyer layout, so the arrays pass between the
generated functions and Pinocchio unchanged. The example prints what the conventions imply and
checks two of them on the generated code: a robot at rest with no torque falls freely (the base
accelerates with gravity seen in the base frame, the joints not at all), and C v is the velocity
part of inverse dynamics. With Pinocchio installed it also compares with Pinocchio's own model.
``main`` returns those checks (largest absolute errors).
"""
from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROBOTS = {"solo12": "solo_description/robots/solo12.urdf", "talos": "talos_data/robots/talos_full_v2.urdf"}
QUANTITIES = "M,C,g,tau,qdd,J"


def robot_urdf(name: str) -> Path:
    """The URDF of an example-robot-data robot (pip install example-robot-data), found as
    `symgen tables` finds it."""
    from symgen.bench.tables import robot_urdf as find

    return find(f"erd:{ROBOTS[name]}")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--robot", choices=sorted(ROBOTS), default="solo12")
    ap.add_argument("--urdf", help="any URDF instead of --robot")
    ap.add_argument("--out", help="build folder (default: a temporary one)")
    ap.add_argument("--quantities", default=QUANTITIES)
    ap.add_argument("--no-compile", action="store_true", help="NumPy only")
    args = ap.parse_args(argv)

    import symgen
    from symgen.codegen.build import BuildOptions, build, import_package

    urdf = Path(args.urdf) if args.urdf else robot_urdf(args.robot)
    robot = symgen.load_urdf(urdf, floating_base=True)
    out = Path(args.out) if args.out else Path(tempfile.mkdtemp(prefix="symgen_floating_"))
    t0 = time.perf_counter()
    built = build(robot, out, opts=BuildOptions(quantities=tuple(args.quantities.split(",")),
                                                compile=not args.no_compile))
    pkg = import_package(built.path)
    print(f"{robot.name}: built {built.path} in {time.perf_counter() - t0:.1f} s (backend {pkg.backend}); "
          f"nq = {pkg.nq}, nv = {pkg.nv}, joints {pkg.joint_names[:3]}...")

    rng = np.random.default_rng(0)
    quat = rng.normal(size=4)
    q = np.concatenate([[0.1, -0.2, 0.4], quat / np.linalg.norm(quat), rng.uniform(-1, 1, pkg.nq - 7)])
    v = rng.uniform(-1, 1, pkg.nv)
    zero = np.zeros(pkg.nv)

    M = pkg.mass_matrix(q)
    print(f"M[:3, :3] = total mass x identity: {np.allclose(M[:3, :3], M[0, 0] * np.eye(3))} "
          f"(total mass {M[0, 0]:.3f} kg)")
    a = pkg.forward_dynamics(q, zero, zero)               # at rest, no torque: free fall
    x, y, z, w = q[3:7]
    R = np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
                  [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
                  [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)]])
    checks = {"free_fall": float(np.abs(np.r_[a[:3] - R.T @ pkg.gravity_vector, a[3:]]).max())}
    print(f"free fall: base linear acceleration {np.round(a[:3], 6)} = R^T g {np.round(R.T @ pkg.gravity_vector, 6)}, "
          f"max |angular, joint accelerations| {np.abs(a[3:]).max():.1e}")
    C, g = pkg.coriolis_matrix(q, v), pkg.gravity(q)
    tau = pkg.inverse_dynamics(q, v, zero)
    checks["C v + g - tau"] = float(np.abs(C @ v + g - tau).max())
    print(f"C v + g == inverse_dynamics(q, v, 0): max error {checks['C v + g - tau']:.1e}")
    J = pkg.frame_jacobian(q)
    print(f"frame_jacobian: {J.shape} for frames {pkg.frames} (LOCAL_WORLD_ALIGNED)")

    try:
        import pinocchio as pin
    except ImportError:
        print("Pinocchio not installed: no comparison")
        return checks
    model = pin.buildModelFromUrdf(str(urdf), pin.JointModelFreeFlyer())
    data = model.createData()
    Cp = pin.computeCoriolisMatrix(model, data, q, v)
    ap_ = pin.aba(model, data, q, zero, zero)
    checks.update({"C - Pinocchio": float(np.abs(C - Cp).max()), "qdd - Pinocchio": float(np.abs(a - ap_).max())})
    print(f"Pinocchio (same q, v, no re-indexing): C differs by {checks['C - Pinocchio']:.1e}, "
          f"forward dynamics by {checks['qdd - Pinocchio']:.1e}")
    return checks


if __name__ == "__main__":
    main()
