"""The results pages' tables and plots, written when the site is built (``docs/hooks.py``) from the
JSON files of ``docs/results/``: one file per run, named ``RIVAL_ROBOT[_WHAT].json``, each what
``symgen bench --json`` writes (``python -m symgen.bench.jax_batch --json`` for JAX) with the run's
``command``, ``date`` and ``machine``.

For each rival and robot, a function's figure comes from the newest run that timed it, and names
that run. A ratio is the rival's time over ours (above 1: ours is faster).
"""
from __future__ import annotations

import io
import json
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "docs" / "results"

#: the rivals, each with its column of ``us`` (per registry quantity) or its own section of a run
RIVALS = {
    "pinocchio": "Pinocchio C++",
    "cppadcg": "Pinocchio's CppADCodeGen code",
    "casadi": "CasADi's generated C",
    "mujoco": "MuJoCo's C library",
    "drake": "Drake from Python",
    "jax": "adam-robotics and jaxsim (JAX)",
    "batch": "one-state calls (the C batch)",
}

#: the contact functions' rivals in ``symgen bench``'s contact harness (symgen/bench/contact.py)
_CONTACT_RIVAL = {"contact_dynamics": "constraintDynamics", "impulse_dynamics": "impulseDynamics",
                  "whole_body_terms": "whole_body_sequence",
                  "contact_dynamics_derivatives": "constraintDynamicsDerivatives"}
_CONTACT_NAMES = {"constraintDynamics": "constraintDynamics", "impulseDynamics": "impulseDynamics",
                  "whole_body_sequence": "computeAllTerms + getFrameJacobian + getFrameClassicalAcceleration + ccrba + dccrba",
                  "constraintDynamicsDerivatives": "constraintDynamics + computeConstraintDynamicsDerivatives"}
_CPPADCG_CONTACT = {"constraint_dynamics": ("contact_dynamics", "CodeGenConstraintDynamics"),
                    "constraint_dynamics_derivatives": ("contact_dynamics_derivatives",
                                                        "CodeGenConstraintDynamicsDerivatives")}
_CPPADCG_CLASS = {"tau": "CodeGenRNEA", "Minv": "CodeGenMinv", "qdd": "CodeGenABA", "dtau": "CodeGenRNEADerivatives",
                  "dqdd": "CodeGenABADerivatives"}


@dataclass
class Run:
    path: Path
    rival: str
    robot: str
    data: dict

    @property
    def command(self) -> str:
        return self.data["command"]

    @property
    def date(self) -> str:
        return self.data["date"]


@dataclass
class Row:
    function: str
    rival_name: str
    ours: float
    theirs: float
    run: Run
    extra: dict = field(default_factory=dict)

    @property
    def ratio(self) -> float:
        return self.theirs / self.ours


def runs(directory: Path = RESULTS) -> list[Run]:
    """Every run of ``directory``, checked: a name ``RIVAL_ROBOT[_WHAT].json`` of a known rival,
    and the command, date and machine recorded."""
    out = []
    for path in sorted(directory.glob("*.json")):
        parts = path.stem.split("_")
        if len(parts) < 2 or parts[0] not in RIVALS:
            raise ValueError(f"{path.name}: expected RIVAL_ROBOT[_WHAT].json with RIVAL one of {', '.join(RIVALS)}")
        data = json.loads(path.read_text(encoding="utf-8"))
        for key in ("command", "date", "machine"):
            if not data.get(key):
                raise ValueError(f"{path.name}: no {key!r} recorded")
        out.append(Run(path, parts[0], parts[1], data))
    return out


def _function(key: str) -> str:
    from . import quantities as Q

    return Q.QUANTITIES[key].function if key in Q.QUANTITIES else key


def _pin_name(key: str, run: Run) -> str:
    from . import quantities as Q

    x = Q.QUANTITIES.get(key)
    if x is None or x.pin_call is None:
        return "?"
    return x.pin_call.python[-1] if key == "Gamma" else x.pin_call.python[0]


def rows(rival: str, robot_runs: list[Run]) -> list[Row]:
    """The rows of one rival on one robot: per function, the newest run's figure."""
    found: dict[str, Row] = {}
    for run in sorted(robot_runs, key=lambda r: r.date):            # later runs replace earlier figures
        d = run.data
        if rival == "pinocchio":
            for key, us in d.get("us", {}).items():
                if "pin_cpp" in us and "c_loop" in us:
                    found[key] = Row(_function(key), _pin_name(key, run), us["c_loop"], us["pin_cpp"], run)
            for name, c in d.get("contacts", {}).items():
                rival_key = _CONTACT_RIVAL[name]
                found[name] = Row(name, _CONTACT_NAMES[rival_key], c["symgen_us"], c["pinocchio_us"][rival_key], run)
        elif rival == "cppadcg":
            for key, us in d.get("us", {}).items():
                if "cppadcg" in us:
                    found[key] = Row(_function(key), _CPPADCG_CLASS.get(key, "CodeGen"), us["c_loop"], us["cppadcg"], run,
                                     {"Pinocchio C++": us.get("pin_cpp")})
            for section, (name, cls) in _CPPADCG_CONTACT.items():
                c = d.get("cppadcg", {}).get(section)
                if c:
                    found[name] = Row(name, cls, c["us"]["symgen"], c["us"]["cppadcg"], run,
                                      {"Pinocchio C++": c["us"].get("pinocchio")})
        elif rival == "casadi":
            for key, us in d.get("us", {}).items():
                if "casadi_pin_c" in us:
                    found[key] = Row(_function(key), "Pinocchio's algorithms taped (casadi_kin_dyn)", us["c_loop"],
                                     us["casadi_pin_c"], run, {"symgen's algorithms taped": us.get("casadi_c")})
        elif rival == "mujoco":
            names = {"M": "mj_crb + mj_fullM", "tau": "mj_rne: C v + g (ours: inverse_dynamics at q̈ = 0)",
                     "qdd": "contact-free forward dynamics"}
            for key, us in d.get("us", {}).items():
                if "mujoco_c" in us:
                    found[key] = Row(_function(key), names.get(key, "MuJoCo"), us["c_loop"], us["mujoco_c"], run)
        elif rival == "drake":
            names = {"M": "CalcMassMatrix", "g": "CalcGravityGeneralizedForces",
                     "tau": "CalcForceElementsContribution + CalcInverseDynamics",
                     "qdd": "the generalized-acceleration output port"}
            for key, us in d.get("us", {}).items():
                if "drake_py" in us and "c_py_single" in us:
                    found[key] = Row(_function(key), names.get(key, "Drake"), us["c_py_single"], us["drake_py"], run,
                                     {"Pinocchio from Python": us.get("pin_py")})
        elif rival == "batch":
            for key, us in d.get("us", {}).items():
                if "c_loop_batch" in us:
                    tag = run.path.stem.split("_", 2)[2] if run.path.stem.count("_") >= 2 else ""
                    found[f"{key}/{tag}"] = Row(_function(key), f"batch, {tag}", us["c_loop_batch"] * 1e3,
                                                us["c_loop"] * 1e3, run)
        elif rival == "jax":
            for name, us in d.get("us_per_state", {}).items():
                for column, label in (("adam-robotics jax", "adam-robotics"), ("jaxsim", "jaxsim")):
                    if column in us:
                        found[f"{name}/{label}"] = Row(name, label, us["jax"], us[column], run,
                                                       {"own jax code": us.get("jax (own code)"),
                                                        "C binding, 1 thread": us.get("c (1 thread)")})
    return list(found.values())


def _fmt(x) -> str:
    if x is None:
        return "-"
    return f"{x:.3g}" if x < 100 else f"{x:.0f}"


def _run_note(run: Run, number: int) -> str:
    m = run.data["machine"]
    what = ", ".join(f"{label}{m[k]}" for k, label in (("cpu", ""), ("cc", ""), ("pinocchio", "Pinocchio "))
                     if m.get(k))
    extra = f"; {run.data['conditions']}" if run.data.get("conditions") else ""
    return (f"{number}. `{run.command}`, {run.date}{extra}. Machine: {what}, {m.get('cores', '?')} cores. "
            f"Robot: {run.data.get('robot_file', run.robot)}. Data: `docs/results/{run.path.name}`.")


def page(rival: str, directory: Path = RESULTS) -> str:
    """A rival's tables (one per robot) and its plot, or a line that no run of it is recorded."""
    mine = [r for r in runs(directory) if r.rival == rival]
    if not mine:
        return (f"No run against {RIVALS[rival]} is recorded in `docs/results/` yet: there is no figure to show. "
                "A run's JSON named `" + rival + "_ROBOT.json` there would appear on this page.")
    unit = "ns per state" if rival == "batch" else "µs per state" if rival == "jax" else "µs per call"
    theirs_head = "one state" if rival == "batch" else "the rival" if rival == "jax" else RIVALS[rival]
    ours_head = "batch, per state" if rival == "batch" else "symgen"
    out = [f"![{RIVALS[rival]} / symgen per function]({rival}.svg)", ""]
    if _by_dof(rival, directory):
        out += [f"![time per call against the robot's nv, symgen and {RIVALS[rival]}]({rival}_dof.svg)", "",
                "Time per call against the robots' number of velocities (log-log), from the same runs as the tables.", ""]
    out += [
           f"Times in {unit}, medians; ratio = {theirs_head} / {ours_head}, in bold when 3x or more. "
           "Each row names its run [n], listed under the table with its command, date and machine.", ""]
    for robot in dict.fromkeys(r.robot for r in mine):
        robot_runs = [r for r in mine if r.robot == robot]
        table = rows(rival, robot_runs)
        numbers = {id(r): i + 1 for i, r in enumerate(sorted(robot_runs, key=lambda r: r.date))}
        extras = list(dict.fromkeys(k for row in table for k in row.extra))
        out += [f"## {robot}", "",
                f"| function | rival | {ours_head} ({unit}) | {theirs_head} ({unit}) | ratio | "
                + "".join(f"{k} | " for k in extras) + "run |",
                "|---|---|---|---|---|" + "---|" * len(extras) + "---|"]
        for row in table:
            ratio = f"**{row.ratio:.2f}x**" if row.ratio >= 3 else f"{row.ratio:.2f}x"
            out.append(f"| `{row.function}` | {row.rival_name} | {_fmt(row.ours)} | {_fmt(row.theirs)} | {ratio} | "
                       + "".join(f"{_fmt(row.extra.get(k))} | " for k in extras) + f"[{numbers[id(row.run)]}] |")
        out += ["", "Runs:", ""]
        out += [_run_note(r, numbers[id(r)]) for r in sorted(robot_runs, key=lambda r: r.date)]
        out.append("")
    return "\n".join(out)


def plot(rival: str, directory: Path = RESULTS) -> bytes | None:
    """An SVG of the ratios (rival / symgen), bars per function, one group per robot; None without runs."""
    mine = [r for r in runs(directory) if r.rival == rival]
    if not mine:
        return None
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    robots = list(dict.fromkeys(r.robot for r in mine))
    tables = {robot: rows(rival, [r for r in mine if r.robot == robot]) for robot in robots}
    count = sum(len(t) for t in tables.values())
    fig, ax = plt.subplots(figsize=(7, 0.9 + 0.22 * count + 0.3 * len(robots)))
    y, ticks, labels = 0.0, [], []
    colours = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    for i, robot in enumerate(robots):
        for row in tables[robot]:
            ax.barh(y, row.ratio, color=colours[i % len(colours)], height=0.8)
            ticks.append(y)
            labels.append(f"{robot}: {row.function}" + (f" ({row.rival_name})" if rival == "batch" else ""))
            y += 1
        y += 0.6
    ax.axvline(1.0, color="black", linewidth=0.8)
    ax.set_yticks(ticks, labels, fontsize=7)
    ax.invert_yaxis()
    ax.set_xscale("log")
    ax.set_xlabel(f"{RIVALS[rival]} time / symgen time (above 1: symgen faster)" if rival != "batch"
                  else "one-state time / batch time per state")
    return _svg(fig)


def _by_dof(rival: str, directory: Path) -> dict:
    """``{function: [(nv, robot, ours, theirs), ...]}`` of the functions of ``rival`` timed on robots
    of three or more sizes (each robot's newest figures), in order of nv."""
    if rival == "batch":                       # (its rows are one robot's variants, not rivals' times)
        return {}
    mine = [r for r in runs(directory) if r.rival == rival and r.data.get("nv")]
    found: dict[str, dict] = {}
    for robot in dict.fromkeys(r.robot for r in mine):
        robot_runs = [r for r in mine if r.robot == robot]
        nv = robot_runs[0].data["nv"]
        for row in rows(rival, robot_runs):
            found.setdefault(row.function, {})[robot] = (nv, robot, row.ours, row.theirs)
    return {f: sorted(points.values()) for f, points in found.items() if len({p[0] for p in points.values()}) >= 3}


def dof_plot(rival: str, directory: Path = RESULTS) -> bytes | None:
    """An SVG of time per call against the robots' nv (log-log), symgen and the rival, one panel per
    function timed on robots of three or more sizes (a marker per robot: robots of one size but
    other shapes, a 20-DoF chain and tree, are not joined by a line); None without such a function."""
    series = _by_dof(rival, directory)
    if not series:
        return None
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = list(series)
    cols = min(4, len(names))
    grid = (len(names) + cols - 1) // cols
    fig, axes = plt.subplots(grid, cols, figsize=(2.6 * cols, 2.3 * grid), squeeze=False)
    for ax, name in zip(axes.flat, names):
        nv = [p[0] for p in series[name]]
        ax.plot(nv, [p[2] for p in series[name]], "o", label="symgen")
        ax.plot(nv, [p[3] for p in series[name]], "s", mfc="none", label=RIVALS[rival])
        for x, robot, ours, _ in series[name]:
            ax.annotate(robot, (x, ours), fontsize=6, textcoords="offset points", xytext=(2, -8))
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xticks(sorted(set(nv)), [str(x) for x in sorted(set(nv))])
        ax.minorticks_off()
        ax.set_title(name, fontsize=8)
        ax.tick_params(labelsize=6)
        ax.set_xlabel("nv", fontsize=7)
    for ax in list(axes.flat)[len(names):]:
        ax.set_visible(False)
    axes.flat[0].set_ylabel("µs per call", fontsize=7)
    axes.flat[0].legend(fontsize=6)
    return _svg(fig)


def _svg(fig) -> bytes:
    """A figure as SVG bytes that do not change from build to build (text as text, stable ids, no
    date), the figure closed."""
    import matplotlib.pyplot as plt

    fig.tight_layout()
    buffer = io.StringIO()
    with plt.rc_context({"svg.fonttype": "none", "svg.hashsalt": "symgen"}):
        fig.savefig(buffer, format="svg", metadata={"Date": None})
    plt.close(fig)
    return buffer.getvalue().encode("utf-8")
