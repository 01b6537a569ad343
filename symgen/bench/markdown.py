"""``tables.md``: the results of ``symgen tables`` as Markdown, ours beside the paper's."""
from __future__ import annotations

from pathlib import Path

from .paper import KIND_LABEL, QUANTITIES
from .report import grouped_notes


def _fmt(v, digits=3):
    if isinstance(v, float):
        return f"{v:.{digits}g}" if abs(v) < 1000 else f"{v:,.0f}"
    if isinstance(v, int):
        return f"{v:,}"
    return str(v)


def markdown(results: dict) -> str:
    m = results["machine"]
    lines = ["# symgen tables", "", f"Command: `{results['command']}`  ", f"Date: {results['date']}  ",
             f"Machine: {m['cpu']}, {m['cores']} cores; Python {m['python']}, NumPy {m['numpy']}, SymPy {m['sympy']}, "
             f"{m['cc']}, Pinocchio {m['pinocchio']}; symgen {m.get('symgen_commit') or 'n/a'}", ""]
    if "table2" in results:
        t2 = results["table2"]
        lines += ["## Table 2 — all Gamma_ijk symbolically (s; ops after CSE)", "",
                  f"Each cell in its own process, timeout {t2['timeout_s']:g} s. {t2['paper_note']}.", "",
                  "| system | route | run (s) | run + CSE (s) | ops after CSE | paper (s) |", "|---|---|---:|---:|---:|---:|"]
        for r in t2["rows"]:
            lines.append(f"| {KIND_LABEL[r['kind']]} N={r['n']} | {r['label']} | {_fmt(r['run_s'])} | "
                         f"{_fmt(r['run_cse_s'])} | {_fmt(r['ops'])} | {_fmt(r['paper_s'])} |")
        for k, v in t2["notes"].items():
            lines.append(f"- {k}: {v}")
        lines.append("")
    if "table1" in results:
        t1 = results["table1"]
        lines += ["## Table 1 — numeric, µs per call: median (min–max) over the repeats", "",
                  f"C loop flags `{t1['c_loop_flags']}`; Python binding `{t1['binding_copt']}`; batch {t1['batch']} "
                  f"(NumPy batch {t1['numpy_batch']}).", ""]
        head = "| method | " + " | ".join(f"{s['name']} ({s['dof']} DoF) C | Gamma" for s in t1["systems"]) + " |"
        lines += [head, "|---|" + "---:|---:|" * len(t1["systems"])]
        for method, label in t1["methods"].items():
            cells = []
            for s in t1["systems"]:
                for qty in QUANTITIES:
                    value = s["cells"].get(method, {}).get(qty, "n/a")
                    lo_hi = s["spread_us"].get(method, {}).get(qty)
                    cells.append(_fmt(value) + (f" ({_fmt(lo_hi[0])}–{_fmt(lo_hi[1])})" if lo_hi else ""))
            lines.append(f"| {label} | " + " | ".join(cells) + " |")
        lines += ["", "How many times faster the generated C is, median / min of the repeats (Pinocchio C++ "
                  "and the paper against the C loop, Pinocchio from Python against the Python call):", ""]
        for s in t1["systems"]:
            c, spread = s["cells"], s["spread_us"]
            parts = []
            for qty in QUANTITIES:
                for ref, ours, name in (("pin_cpp", "c_loop", "Pinocchio C++"), ("pin_cpp_n_c", "c_loop", "Pinocchio C++ n x C"),
                                        ("pin_py", "c_py_single", "Pinocchio Python"), ("paper", "c_loop", "paper")):
                    a, b = c.get(ours, {}).get(qty), c.get(ref, {}).get(qty)
                    if isinstance(a, (int, float)) and isinstance(b, (int, float)) and a > 0:
                        text = f"{qty} vs {name} {b / a:.1f}x"
                        if ref in spread and qty in spread.get(ref, {}):
                            text += f" / {spread[ref][qty][0] / spread[ours][qty][0]:.1f}x"
                        parts.append(text)
            lines.append(f"- {s['name']}: " + ("; ".join(parts) or "n/a"))
        notes = ((f"{s['name']} {k}", v) for s in t1["systems"] for k, v in s["notes"].items())
        for v, where in grouped_notes(notes).items():
            lines.append(f"- {', '.join(where)}: {v}")
        lines.append("")
    if "table3" in results:
        lines += table3_markdown(results["table3"])
    if "figures" in results:
        lines += ["## Figures 2–4 — time vs DoF (µs, generated C in a C loop and Pinocchio C++)", ""]
        for kind, s in results["figures"].items():
            lines.append(f"- {KIND_LABEL[kind]}: slopes {s['slopes']} (paper: {s['paper']})")
            for p in s["points"]:
                lines.append(f"  - {p}")
        for f in results.get("figure_files", []):
            lines.append(f"- ![{Path(f).stem}]({Path(f).name})")
        lines.append("")
    return "\n".join(lines) + "\n"



def _timed(s: dict, method: str, qty: str) -> str:
    value = s["cells"].get(method, {}).get(qty, "n/a")
    lo_hi = s["spread_us"].get(method, {}).get(qty)
    return _fmt(value) + (f" ({_fmt(lo_hi[0])}–{_fmt(lo_hi[1])})" if lo_hi else "")


def _ratio(r) -> str:
    return f"{r[0]:.1f}x / {r[1]:.1f}x" if isinstance(r, list) else _fmt(r)


def table3_markdown(t3: dict) -> list[str]:
    """Table 3: one row per (robot, function), ours beside Pinocchio here and the seed's Table I."""
    p = t3["paper"]
    lines = ["## Table 3 — forward dynamics, M^-1 and derivatives (seed 003, Table I), µs per call: median "
             "(min–max) over the repeats", "",
             f"C loop flags `{t3['c_loop_flags']}`; Python binding `{t3['binding_copt']}`; batch {t3['batch']}; "
             f"{t3['repeats']} repeats. x faster = Pinocchio's time / ours, of medians / of minima. "
             f"Seed: {p['machine']}; its robots "
             + ", ".join(f"{k} ({v} DoF)" for k, v in p["robots"].items()) + f"; {p['note']}.", "",
             "| robot | function (Pinocchio; seed row) | ops | generated C, C loop | Pinocchio C++ | x faster (C++) "
             "| generated C from Python | Pinocchio from Python | x faster (Python) | generated C, per state in a batch "
             "| seed, Table I |",
             "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for s in t3["systems"]:
        robot = f"{s['name']} ({s['dof']} DoF{', floating' if s.get('floating_base') else ''})" if "dof" in s else s["name"]
        for qty in t3["quantities"]:
            row = t3["rows"][qty]
            paper = _fmt(s["cells"].get("paper", {}).get(qty, "n/a"))
            if s.get("paper_robot"):
                paper += f" ({s['paper_robot']})"
            lines.append(f"| {robot} | `{row['function']}` ({row['pinocchio']}; {row['paper_row']}) | "
                         f"{_fmt(s.get('ops', {}).get(qty, 'n/a'))} | {_timed(s, 'c_loop', qty)} | {_timed(s, 'pin_cpp', qty)} | "
                         f"{_ratio(s['ratios'][qty]['pin_cpp/c_loop'])} | {_timed(s, 'c_py_single', qty)} | "
                         f"{_timed(s, 'pin_py', qty)} | {_ratio(s['ratios'][qty]['pin_py/c_py_single'])} | "
                         f"{_timed(s, 'c_py_batch', qty)} | {paper} |")
    lines.append("")
    notes = ((f"{s['name']} {k}", v) for s in t3["systems"] for k, v in s["notes"].items())
    for v, where in grouped_notes(notes).items():
        lines.append(f"- {', '.join(where)}: {v}")
    lines.append("- seed rows without a generated function (µs): " + "; ".join(
        f"{row} " + ", ".join(f"{k} {_fmt(v)}" for k, v in vals.items()) for row, vals in p["other_rows_us"].items()))
    lines.append("")
    return lines
