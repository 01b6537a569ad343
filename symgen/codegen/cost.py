"""What a build will cost, before it runs (issue #38 item 3): operations and seconds per function
from the tree's shape, and the budget past which ``symgen build`` refuses (``--budget``).

The shape: n joints (velocities) and the supports of the joints, d_i = the joints from the root
to joint i (itself included). M has S1 = Σ d_i entries below its diagonal; the entries of Γ, of
Ṁ and of the derivatives grow with S2 = Σ d_i² (on a chain S1 ≈ n²/2, S2 ≈ n³/3; on a humanoid,
a few short branches, both stay near n). Each function's operations are estimated as

    ops ≈ a n + b S1 + c S2          (a, b, c >= 0 per quantity, :data:`FIT`)

fitted (non-negative least squares, :func:`fit`, from the builds' ``BuildResult.ops``) on the
default builds of three robots of :mod:`symgen.robots`: the 6- and 12-joint chains and the
14-joint binary tree; on them the total is within 8 %, on the 20-joint chain's Γ (45,000
operations, docs/RESULTS.md) about 20 % low. The seconds are the operations times the measured
seconds per operation of the symbolic run (:data:`SECONDS_PER_OP`: tracing, variants, passes and
printing, one process) and of the C compiler (:data:`COMPILE_SECONDS_PER_OP`, gcc -O2), on an idle
core (what the budget is compared with, so that a build's fate does not depend on the machine's
load) and, printed beside, times the load per core now (:func:`load_factor`). A quantity not in
the fit (contacts, loops) counts as M's.

:func:`check_budget` refuses (one line, BuildError) a build whose estimate exceeds the budget
(:data:`BUDGET_SECONDS`, ``BuildOptions.budget``, ``--budget``), naming the costliest functions,
so that a robot of any size builds when what was asked for is affordable.
"""
from __future__ import annotations

import os
from dataclasses import dataclass

import numpy as np

from ..errors import BuildError

#: estimated seconds on one idle core past which a build is refused unless --budget is raised: two
#: hours (the 100-joint chain's default build is estimated at about 80 minutes, the 150-joint
#: chain's at 3.1 hours; a 100-joint binary tree's at 18 minutes)
BUDGET_SECONDS = 7200.0
#: off a terminal, ``symgen build`` prints the estimate when it is at least this many seconds
NOTE_SECONDS = 60.0
#: per quantity key: (a, b, c) of ops ≈ a n + b S1 + c S2 (see the module docstring)
FIT: dict[str, tuple[float, float, float]] = {
    "M": (221.1, 8.865, 0.0), "Mdot": (498.6, 17.46, 0.0), "C": (470.6, 23.27, 0.0), "Gamma": (0.0, 170.6, 0.1031),
    "tau": (357.0, 0.4038, 0.0), "g": (66.84, 0.0, 0.0), "tau_sl": (419.4, 0.0, 0.0), "Y": (0.0, 139.2, 2.736),
    "qdd": (516.6, 1.462, 0.0), "Minv": (103.4, 65.69, 0.0), "MCg": (495.0, 33.06, 0.0), "dtau": (769.7, 56.73, 0.0),
    "dqdd": (811.4, 182.1, 0.0), "oMf": (73.57, 0.0, 0.0), "J": (62.7, 0.8077, 0.0), "com": (85.03, 0.0, 0.0),
    "Jcom": (112.6, 0.0, 0.0), "Ag": (239.4, 0.0, 0.0), "Ig": (170.2, 0.0, 0.0), "hg": (243.5, 0.0, 0.0),
    "dhg": (369.8, 0.0, 0.0), "vf": (67.0, 1.269, 0.0), "af": (120.0, 0.0, 0.0), "dJ": (134.2, 0.0, 0.0),
    "Yts": (363.9, 0.0, 0.0), "p": (206.4, 0.3462, 0.0), "CTv": (220.2, 1.038, 0.0), "T": (172.2, 0.0, 0.0),
    "V": (46.57, 0.0, 0.0), "Y_g": (212.8, 25.73, 0.0), "Y_T": (141.9, 0.0, 0.0), "Y_V": (42.65, 0.0, 0.0),
    "Y_Vdot": (147.2, 0.0, 0.0), "tau_p": (3.0, 0.0, 0.0),
}
#: seconds of the symbolic run (trace, every variant, passes, print) per operation of the output on
#: one idle core: measured 2.5-4.0 ms at a load of 10-11 on 2 cores (a process's share ~0.19 of a
#: core): chain 6, 58,681 operations in 144 s; chain 12, 153,659 in 538 s; tree 14, 147,092 in 590 s
SECONDS_PER_OP = 6.3e-4
#: seconds of gcc -O2 -march=native per generated operation on one idle core (chain 6's package: 78 s
#: at the same load)
COMPILE_SECONDS_PER_OP = 2.5e-4


def shape(robot) -> tuple[int, int, int]:
    """(n, S1, S2) of the tree the algorithms run on (an embedded robot's full tree)."""
    full = robot.full
    depths = []
    for i, body in enumerate(full.bodies):
        d, p = 1, body.parent
        while p >= 0:
            d, p = d + 1, full.bodies[p].parent
        depths.append(d)
    depths = np.array(depths, dtype=float)
    return len(depths), int(depths.sum()), int((depths ** 2).sum())


@dataclass(frozen=True)
class Estimate:
    """Per quantity key, the estimated operations; the seconds of the symbolic run and the compile
    on one idle core, and ``load``, how much slower the machine runs now (:func:`load_factor`)."""
    ops: dict
    symbolic_seconds: float
    compile_seconds: float
    load: float = 1.0

    @property
    def total_ops(self) -> int:
        return int(sum(self.ops.values()))

    @property
    def seconds(self) -> float:
        """On one idle core (what the budget is compared with)."""
        return self.symbolic_seconds + self.compile_seconds

    def lines(self, functions: dict | None = None) -> list[str]:
        """One line per function (its name from ``functions``: key -> name), costliest first."""
        order = sorted(self.ops, key=lambda k: -self.ops[k])
        per_op = self.seconds / max(self.total_ops, 1)
        return [f"{(functions or {}).get(k, k)}: ~{_round(self.ops[k]):,} operations, "
                f"~{self.ops[k] * per_op:.1f} s" for k in order]

    def summary(self) -> str:
        now = f", ~{self.seconds * self.load:.0f} s at this machine's load now" if self.load > 1.05 else ""
        return (f"estimated {_round(self.total_ops):,} operations, ~{self.seconds:.0f} s on one idle core "
                f"({self.symbolic_seconds:.0f} s symbolic, {self.compile_seconds:.0f} s compiling){now}")


def _round(x) -> int:
    x = int(round(x))
    if x < 1000:
        return x
    digits = len(str(x)) - 2
    return int(round(x, -digits))


def load_factor() -> float:
    """How much slower than an idle core a process runs now: the 1-minute load per core, at least 1."""
    try:
        return max(1.0, os.getloadavg()[0] / (os.cpu_count() or 1))
    except (AttributeError, OSError):           # (no load average on this system)
        return 1.0


def estimate(robot, quantities, compile: bool = True) -> Estimate:
    """The estimated cost of building ``quantities`` (keys) of ``robot``."""
    n, s1, s2 = shape(robot)
    ops = {}
    for key in dict.fromkeys(quantities):
        a, b, c = FIT.get(key, FIT.get("M", (0.0, 10.0, 0.0)))
        ops[key] = a * n + b * s1 + c * s2
    total = sum(ops.values())
    return Estimate(ops, total * SECONDS_PER_OP, total * COMPILE_SECONDS_PER_OP if compile else 0.0, load_factor())


def check_budget(robot, est: Estimate, budget: float, name: str) -> None:
    """A BuildError (one line) when the estimate exceeds ``budget`` seconds on one idle core (0: no
    limit)."""
    if budget and est.seconds > budget:
        worst = sorted(est.ops, key=lambda k: -est.ops[k])[:3]
        raise BuildError(f"robot {name!r} ({robot.n} joints): {est.summary()}, more than the budget of "
                         f"{budget:.0f} s; the costliest: {', '.join(worst)}; pass --budget {est.seconds * 1.5:.0f} "
                         f"to build anyway, or leave those out (--quantities)")


def fit(measured) -> dict:
    """(a, b, c) per quantity key from ``measured``: [(robot, {key: ops}), ...] (non-negative
    least squares over the shapes)."""
    from scipy.optimize import nnls

    keys = sorted({k for _, ops in measured for k in ops})
    out = {}
    for key in keys:
        rows = [(shape(r), ops[key]) for r, ops in measured if key in ops]
        A = np.array([s for s, _ in rows], dtype=float)
        y = np.array([o for _, o in rows], dtype=float)
        coef, _ = nnls(A, y)
        out[key] = tuple(float(f"{c:.4g}") for c in coef)
    return out
