"""Panda point-to-point minimum-torque trajectory in CasADi with IPOPT, through symgen's CasADi externals.

    python examples/casadi_trajectory.py                  # 40 shooting nodes
    python examples/casadi_trajectory.py --quick          # 10 nodes (CI)
    python examples/casadi_trajectory.py --nodes 80 --package build/panda_cas   # a package built before

Direct multiple shooting: states x_k = (q_k, v_k) at N + 1 nodes over T seconds, torques u_k held over
each interval, x_{k+1} = RK4(x_k, u_k) on q'' = forward_dynamics(q, v, u), the start and goal at
rest, cost h sum |u_k|^2. The same NLP is solved twice, differing only in the dynamics function:

  external  ``casadi.external("forward_dynamics", "panda_cas_casadi.so")`` from ``symgen build
            --target numpy,c,casadi``: the generated C; its Jacobian is ``jac_forward_dynamics``
            (the generated d qdd/dq, d qdd/dv and M^-1), so CasADi's AD through it is exact;
  SX tape   the articulated-body algorithm (symgen's body-frame ABA, the algorithm of Pinocchio's
            ``aba``) taped on ``casadi.SX`` and differentiated by CasADi (``symgen.bench.casadi``'s
            SX backend), called in the same MX graph (``--expand``: the whole NLP expanded to SX,
            which was twice slower here);
  Pinocchio Pinocchio's own ``aba`` taped on ``casadi.SX`` (casadi_kin_dyn: Pinocchio 2.6 on
            CasADi's scalar, what CasADi users call; ``symgen.bench.casadi_pinocchio`` makes its
            environment once under $SYMGEN_CACHE; ``--no-pinocchio`` leaves it out; without the
            environment the run says why and goes on).

IPOPT runs with the limited-memory Hessian in both (the externals give first derivatives only),
from the same initial guess, so both take the same steps: the optima agree to round-off, and the
time per iteration compares the dynamics and their derivatives. ``main`` returns the numbers.
"""
from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

import numpy as np

PANDA = "panda_description/urdf/panda.urdf"
#: panda's usual neutral pose (fingers 2 cm open), and the goal relative to it (rad; fingers still)
START = np.array([0.0, -0.785, 0.0, -2.356, 0.0, 1.571, 0.785, 0.02, 0.02])
MOVE = np.array([0.8, 0.4, -0.5, 0.5, 0.3, -0.4, 0.6, 0.0, 0.0])
#: panda's limits (its URDF and datasheet): positions, speeds (rad/s, m/s), torques (N m, N)
LOWER = np.array([-2.8973, -1.7628, -2.8973, -3.0718, -2.8973, -0.0175, -2.8973, 0.0, 0.0])
UPPER = np.array([2.8973, 1.7628, 2.8973, -0.0698, 2.8973, 3.7525, 2.8973, 0.04, 0.04])
SPEED = np.array([2.175, 2.175, 2.175, 2.175, 2.61, 2.61, 2.61, 0.2, 0.2])
TORQUE = np.array([87.0, 87.0, 87.0, 87.0, 12.0, 12.0, 12.0, 20.0, 20.0])


def panda_urdf() -> Path:
    """panda.urdf from example-robot-data (pip install example-robot-data), found as `symgen
    tables` finds it."""
    from symgen.bench.tables import robot_urdf

    return robot_urdf(f"erd:{PANDA}")


def build_package(out: Path, copt: str) -> Path:
    """The panda package with forward dynamics, its derivatives and M^-1, and the casadi target."""
    import symgen
    from symgen.codegen.build import BuildOptions, build

    robot = symgen.load_urdf(panda_urdf())
    opts = BuildOptions(quantities=("qdd", "dqdd", "Minv"), targets=("numpy", "c", "casadi"), copt=copt, force=True)
    return build(robot, out, name="panda_cas", opts=opts).path


def taped_forward_dynamics(n: int):
    """forward_dynamics(q, v, tau) of panda as a CasADi SX function: ABA taped, CasADi's cse."""
    import casadi as ca

    import symgen
    from symgen.algorithms.aba import aba
    from symgen.bench import casadi as cas

    robot = symgen.load_urdf(panda_urdf())
    assert robot.n == n
    q, qs = cas._symbols(ca, "q", n)
    v, vs = cas._symbols(ca, "qd", n)
    tau, taus = cas._symbols(ca, "tau", n)
    qdd = cas._sx(ca, aba(robot, qs, vs, taus, cas.SXBackend()))
    return ca.Function("forward_dynamics_sx", [q, v, tau], [qdd], ["q", "qd", "tau"], ["qdd"], {"cse": True})


def transcription(fd, n: int, nodes: int, horizon: float):
    """The multiple-shooting NLP ({x, f, g}) and its bounds and initial guess, with dynamics ``fd``."""
    import casadi as ca

    h = horizon / nodes
    x, u = ca.MX.sym("x", 2 * n), ca.MX.sym("u", n)

    def rate(s):
        return ca.vertcat(s[n:], fd(s[:n], s[n:], u))
    k1 = rate(x)
    k2 = rate(x + h / 2 * k1)
    k3 = rate(x + h / 2 * k2)
    k4 = rate(x + h * k3)
    step = ca.Function("rk4", [x, u], [x + h / 6 * (k1 + 2 * k2 + 2 * k3 + k4)])
    X, U = ca.MX.sym("X", 2 * n, nodes + 1), ca.MX.sym("U", n, nodes)
    gaps = step.map(nodes)(X[:, :-1], U) - X[:, 1:]
    nlp = {"x": ca.vertcat(ca.vec(X), ca.vec(U)), "f": h * ca.sumsqr(U), "g": ca.vec(gaps)}
    goal = START + MOVE
    # the robot's limits (they also keep IPOPT's trial steps where the dynamics are finite)
    lbx = np.r_[np.tile(np.r_[LOWER, -SPEED], nodes + 1), np.tile(-TORQUE, nodes)]
    ubx = np.r_[np.tile(np.r_[UPPER, SPEED], nodes + 1), np.tile(TORQUE, nodes)]
    for k, state in ((0, np.r_[START, np.zeros(n)]), (nodes, np.r_[goal, np.zeros(n)])):
        lbx[2 * n * k:2 * n * (k + 1)] = ubx[2 * n * k:2 * n * (k + 1)] = state
    s = np.linspace(0.0, 1.0, nodes + 1)
    guess_X = np.vstack([START[:, None] + MOVE[:, None] * s, np.tile((MOVE / horizon)[:, None], nodes + 1)])
    x0 = np.r_[guess_X.T.ravel(), np.zeros(n * nodes)]
    return nlp, {"lbx": lbx, "ubx": ubx, "lbg": 0.0, "ubg": 0.0, "x0": x0}


def solve(name: str, fd, n: int, nodes: int, horizon: float, expand: bool, tol: float) -> dict:
    import casadi as ca

    nlp, bounds = transcription(fd, n, nodes, horizon)
    solver = ca.nlpsol(name, "ipopt", nlp, {
        "expand": expand, "print_time": False,
        "ipopt": {"hessian_approximation": "limited-memory", "tol": tol, "print_level": 0, "max_iter": 3000, "acceptable_iter": 0,
                  "sb": "yes"}})
    t0 = time.perf_counter()
    result = solver(**bounds)
    wall = time.perf_counter() - t0
    stats = solver.stats()
    iterations = int(stats["iter_count"])
    return {"x": np.array(result["x"]).ravel(), "f": float(result["f"]), "iterations": iterations,
            "success": bool(stats["success"]), "status": stats["return_status"], "wall": wall,
            "per_iteration": wall / max(iterations, 1),
            "derivatives": sum(stats.get(f"t_wall_{k}", 0.0) for k in ("nlp_grad_f", "nlp_jac_g")),
            "jac_g": stats["t_wall_nlp_jac_g"] / max(stats["n_call_nlp_jac_g"], 1),
            "max_gap": float(np.abs(np.array(result["g"])).max())}


def main(argv=None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--nodes", type=int, default=None, help="shooting intervals [default: 40; 10 with --quick]")
    ap.add_argument("--quick", action="store_true", help="a short horizon for CI: 10 nodes, -O1")
    ap.add_argument("--horizon", type=float, default=1.0, help="seconds from start to goal")
    ap.add_argument("--tol", type=float, default=1e-10, help="IPOPT's tolerance")
    ap.add_argument("--expand", action="store_true", help="expand the SX tape's NLP to SX (nlpsol's expand)")
    ap.add_argument("--no-pinocchio", action="store_true", help="leave out Pinocchio's aba taped by casadi_kin_dyn")
    ap.add_argument("--out", help="build folder (default: a temporary one)")
    ap.add_argument("--package", help="a panda package built before with --target numpy,c,casadi "
                    "(and forward_dynamics, its derivatives, mass_matrix_inverse)")
    args = ap.parse_args(argv)
    import casadi as ca

    nodes = args.nodes or (10 if args.quick else 40)
    if args.package:
        package = Path(args.package)
    else:
        out = Path(args.out) if args.out else Path(tempfile.mkdtemp(prefix="symgen_casadi_"))
        t0 = time.perf_counter()
        package = build_package(out, "-O1" if args.quick else "-O2")
        print(f"built {package} in {time.perf_counter() - t0:.1f} s")
    n = len(START)
    name = json.loads((package / "manifest.json").read_text())["name"]
    external = ca.external("forward_dynamics", str(package / f"{name}_casadi.so"), {"enable_fd": False})
    runs = {"external": solve("external", external, n, nodes, args.horizon, False, args.tol),
            "sx_tape": solve("sx_tape", taped_forward_dynamics(n), n, nodes, args.horizon, args.expand,
                                args.tol)}
    if not args.no_pinocchio:
        from symgen.bench.casadi_pinocchio import pinocchio_functions
        from symgen.bench.harness import BenchError

        try:
            import symgen

            aba = pinocchio_functions(panda_urdf(), symgen.load_urdf(panda_urdf()).joint_names)["aba"]
            runs["pinocchio"] = solve("pinocchio", aba, n, nodes, args.horizon, args.expand, args.tol)
        except BenchError as exc:
            print(f"Pinocchio's aba taped by casadi_kin_dyn: not run: {exc}")
    for name, r in runs.items():
        print(f"{name:9s} {r['status']}: cost {r['f']:.10g}, {r['iterations']} iterations, "
              f"{1e3 * r['per_iteration']:.2f} ms per iteration ({r['wall']:.2f} s; gradient and "
              f"constraint Jacobian {r['derivatives']:.2f} s, {1e3 * r['jac_g']:.2f} ms a constraint Jacobian), "
              f"largest gap {r['max_gap']:.1e}")
    a, b = runs["external"], runs["sx_tape"]
    difference = float(np.abs(a["x"] - b["x"]).max() / max(1.0, np.abs(b["x"]).max()))
    speedup = b["per_iteration"] / a["per_iteration"]
    print(f"{nodes} nodes over {args.horizon} s: optima differ by {difference:.1e} (relative), cost by "
          f"{abs(a['f'] - b['f']):.1e}; time per iteration {speedup:.2f}x lower through the externals")
    out = {"nodes": nodes, "runs": runs, "difference": difference, "speedup": speedup}
    if "pinocchio" in runs:
        c = runs["pinocchio"]
        out["difference_pinocchio"] = float(np.abs(a["x"] - c["x"]).max() / max(1.0, np.abs(c["x"]).max()))
        out["speedup_pinocchio"] = c["per_iteration"] / a["per_iteration"]
        print(f"beside Pinocchio's aba taped in CasADi: optima differ by {out['difference_pinocchio']:.1e}, time per "
              f"iteration {out['speedup_pinocchio']:.2f}x lower through the externals")
    return out


if __name__ == "__main__":
    main()
