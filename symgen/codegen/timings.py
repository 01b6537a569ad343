"""Where a build's time goes (``symgen build --timings``).

A :class:`Timings` records the wall time of each phase of a build, one after the other, so
that the phases add up to the build's wall time:

- ``startup``: the command's interpreter starting and importing symgen, NumPy and SymPy (the
  CLI's, on Linux, from the process's start time),
- ``load``: reading and parsing the model file (the CLI's; a build from Python starts after it),
- ``prepare``: checking the options and the output folder, hashing the source,
- ``symbolic``: the symbolic runs (one per sweep: tracing, the program passes, printing),
- ``generate``: rendering the package's files from the printed functions,
- ``write``: writing them to the temporary package folder,
- ``compile`` and ``link``: the C compiler's steps (several units side by side),

and beside them the details, whose times overlap when they run in parallel: per sweep (on
which worker, its tracing, passes and printing, or ``cached``), per compile unit and per link
(its size, seconds, ``cached`` or not). :meth:`Timings.as_dict` is what ``timings.json`` in the
package holds; :meth:`Timings.table` the short table printed at the end of the build.

(The timings go to a file of their own, not to ``manifest.json``: the manifest of two identical
builds must be byte-identical, and two builds never take the same time.)
"""
from __future__ import annotations

import contextlib
import os
import time

#: the sweeps and compile units the table lists one by one (the slowest); the others in a line
TOP = 6
#: the phases of a build, in the order they run
PHASES = ("startup", "load", "prepare", "symbolic", "generate", "write", "compile", "link")


def process_start() -> float:
    """When this process started, on the :func:`time.perf_counter` clock (Linux: from
    /proc/self/stat, to 10 ms); elsewhere now."""
    now = time.perf_counter()
    try:
        with open("/proc/self/stat", encoding="ascii") as f:
            ticks = int(f.read().rsplit(")", 1)[1].split()[19])
        with open("/proc/uptime", encoding="ascii") as f:
            uptime = float(f.read().split()[0])
        ago = uptime - ticks / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError, AttributeError):
        return now
    return now - ago if 0 <= ago < 3600 else now


class Timings:
    """The phases (seconds, in order), the sweeps, compile units and links of one build."""

    def __init__(self, start: float | None = None):
        self.start = time.perf_counter() if start is None else start
        self.phases: dict = {}
        self.sweeps: list = []          # {"sweep", "quantities", "trace", "passes", "print", "seconds", "cache", "worker"}
        self.units: list = []           # {"unit", "bytes", "seconds", "cache"}
        self.links: list = []           # {"output", "seconds"}
        self.cache: dict = {}           # {"folder": ..., "sweeps": "hits/looked up", ...}
        self.end: float | None = None

    def add(self, phase: str, seconds: float) -> None:
        self.phases[phase] = round(self.phases.get(phase, 0.0) + seconds, 4)

    @contextlib.contextmanager
    def phase(self, name: str):
        t = time.perf_counter()
        try:
            yield
        finally:
            self.add(name, time.perf_counter() - t)

    def stop(self) -> None:
        self.end = time.perf_counter()

    @property
    def wall(self) -> float:
        return (self.end if self.end is not None else time.perf_counter()) - self.start

    def as_dict(self) -> dict:
        return {"wall": round(self.wall, 4), "phases": dict(self.phases), "sweeps": list(self.sweeps),
                "compile_units": list(self.units), "links": list(self.links), "cache": dict(self.cache)}

    def table(self) -> str:
        """The short table of ``symgen build --timings``."""
        wall = self.wall
        rows = [f"  {'phase':<34s} {'seconds':>8s} {'share':>6s}"]
        for name in [p for p in PHASES if p in self.phases] + [p for p in self.phases if p not in PHASES]:
            s = self.phases[name]
            rows.append(f"  {name:<34s} {s:8.2f} {100 * s / max(wall, 1e-9):5.0f}%")
            if name == "symbolic":
                run = sorted((sw for sw in self.sweeps if sw.get("cache") != "hit"), key=lambda r: -r["seconds"])
                for sw in run[:TOP]:
                    what = f"{sw['sweep']} ({','.join(sw['quantities'])})"
                    detail = f"trace {sw['trace']:.2f} ({sw['runs']} runs), passes {sw['passes']:.2f}, " \
                             f"print {sw['print']:.2f}" + (f", worker {sw['worker']}" if sw.get("worker") else "")
                    rows.append(f"    {what[:32]:<32s} {sw['seconds']:8.2f}  {detail}")
                rows += _rest(run[TOP:], "sweeps", [sw for sw in self.sweeps if sw.get("cache") == "hit"])
            elif name == "compile":
                run = sorted((u for u in self.units if u["cache"] != "hit"), key=lambda u: -u["seconds"])
                for u in run[:TOP]:
                    rows.append(f"    {u['unit'][:32]:<32s} {u['seconds']:8.2f}  {u['bytes'] / 1e3:.0f} kB")
                rows += _rest(run[TOP:], "units", [u for u in self.units if u["cache"] == "hit"])
            elif name == "link":
                for link in self.links:
                    rows.append(f"    {link['output'][:32]:<32s} {link['seconds']:8.2f}")
        rows.append(f"  {'total (wall)':<34s} {wall:8.2f}")
        if self.cache:
            rows.append("  cache: " + ", ".join(f"{k} {v}" for k, v in self.cache.items()))
        return "\n".join(rows)


def _rest(more: list, what: str, cached: list) -> list:
    """The table's lines for the sweeps or units not listed one by one."""
    rows = []
    if more:
        s = sum(r["seconds"] for r in more)
        rows.append(f"    {f'{len(more)} more {what}':<32s} {s:8.2f}  (each < {more[0]['seconds']:.2f})")
    if cached:
        s = sum(r["seconds"] for r in cached)
        rows.append(f"    {f'{len(cached)} {what} cached':<32s} {s:8.2f}")
    return rows
