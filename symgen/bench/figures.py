"""Figures 2-4 of ``symgen tables``: time per call vs DoF of the generated C (in a C loop) and of
Pinocchio C++, per kind of system, with fitted log-log slopes beside the paper's."""
from __future__ import annotations

from pathlib import Path

import numpy as np

from ..errors import OptionError
from .cloop import c_loop
from .harness import BenchError
from .paper import KIND_LABEL, PAPER_SLOPES, QUANTITIES
from .pin import pinocchio_cpp
from .steps import built_package, merged


def figure_data(plan, work: Path, log=print) -> dict:
    """Time per call vs DoF of the generated C (C loop) and of Pinocchio C++, per kind."""
    from .. import robots

    series = {}
    for kind, sizes in plan.figures.items():
        pts = []
        for n in sizes:
            robot = robots.make(kind, n)
            point = {"n": n, "dof": robot.n}
            msgs, done = built_package(kind, n, work, plan.build_timeout)
            if done:
                got = merged(msgs)
                try:
                    loop = c_loop(got["path"], QUANTITIES, flags=plan.flags, repeats=plan.repeats,
                                  min_time=plan.min_time, timeout=plan.compile_timeout)
                    point.update({f"symgen_{q}": round(loop[q].us, 4) for q in QUANTITIES})
                except BenchError as exc:
                    point["note"] = str(exc)
                if plan.pin_cpp != "off":
                    try:
                        cpp = pinocchio_cpp(got["urdf"], QUANTITIES, repeats=plan.repeats,
                                            min_time=plan.min_time, build=plan.pin_cpp == "build")
                        point.update({f"pin_{q}": round(cpp[q].us, 4) for q in QUANTITIES})
                    except BenchError as exc:
                        point["pin_note"] = str(exc)
            else:
                point["note"] = f"symgen build took more than {plan.build_timeout:g} s"
            pts.append(point)
            log(f"figures {kind} {n}: {point}")
        series[kind] = {"points": pts, "slopes": slopes(pts), "paper": PAPER_SLOPES.get(kind, "")}
    return series


def slopes(points) -> dict:
    """Least-squares slope of log(time) vs log(DoF) for each measured series."""
    out = {}
    keys = sorted({k for p in points for k in p if k.startswith(("symgen_", "pin_")) and not k.endswith("note")})
    for k in keys:
        xs = [p["dof"] for p in points if isinstance(p.get(k), (int, float))]
        ys = [p[k] for p in points if isinstance(p.get(k), (int, float))]
        if len(xs) >= 2 and len(set(xs)) >= 2:
            out[k] = round(float(np.polyfit(np.log(xs), np.log(ys), 1)[0]), 2)
    return out


def plot_figures(series: dict, out: Path) -> list[Path]:
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise OptionError("--figures needs matplotlib: pip install 'symgen[plots]'") from None
    files = []
    groups = [("fig2_serial.png", ["serial"]), ("fig3_tree.png", ["tree"]), ("fig4_legged.png", ["biped", "quadruped"])]
    for fname, kinds in groups:
        fig, axes = plt.subplots(1, 2, figsize=(10, 4))
        for ax, qty in zip(axes, QUANTITIES):
            for kind in kinds:
                if kind not in series:
                    continue
                s = series[kind]
                for prefix, style, who in (("symgen", "o-", "symgen C"), ("pin", "s--", "Pinocchio C++")):
                    key = f"{prefix}_{qty}"
                    pts = [(p["dof"], p[key]) for p in s["points"] if isinstance(p.get(key), (int, float))]
                    if not pts:
                        continue
                    slope = s["slopes"].get(key)
                    label = f"{who}, {KIND_LABEL[kind]}" + (f" (slope {slope:.2f})" if slope is not None else "")
                    ax.loglog(*zip(*pts), style, label=label)
            ax.set_xlabel("degrees of freedom" + (" (incl. 6 of the floating base)" if "biped" in kinds else ""))
            ax.set_ylabel(f"time per {qty} (µs)")
            paper = "; ".join(f"paper, {KIND_LABEL[k]}: {PAPER_SLOPES[k]}" for k in kinds if k in ("serial", "tree"))
            ax.set_title(f"{qty} — {paper or 'biped vs quadruped (paper Fig. 4)'}", fontsize=9)
            ax.grid(True, which="both", alpha=0.3)
            ax.legend(fontsize=7)
        fig.tight_layout()
        path = out / fname
        fig.savefig(path, dpi=120)
        plt.close(fig)
        files.append(path)
    return files

