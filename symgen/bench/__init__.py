"""Timing: ``symgen bench`` (one generated package beside Pinocchio) and ``symgen tables`` (the
paper's Tables 1-2 and Figures 2-4). Rooms:

    timing     the Timing record and the timer of Python callables (calibrated loops)
    harness    the one way C/C++ harnesses (templates/bench_*.j2) are compiled and run
    cloop      a generated package's C timed in a compiled C loop
    mujoco     MuJoCo's C library as a rival in that loop (symgen bench --mujoco)
    pin        Pinocchio timed from Python and in C++ (which call per quantity)
    measure    one package measured beside Pinocchio: shared by symgen bench and symgen tables
    report     symgen bench's JSON and text, ratios, the machine
    paper      the paper's numbers; steps: what tables runs in a child under a timeout
    tables     Tables 1 and 2 and the run; figures: Figures 2-4; markdown: tables.md
"""
from __future__ import annotations

from .cloop import DEFAULT_FLAGS, c_loop
from .harness import BenchError
from .measure import bench_package
from .pin import pinocchio_cpp, pinocchio_python
from .report import format_report, machine_info
from .timing import Timing, time_callable

__all__ = ["BenchError", "DEFAULT_FLAGS", "Timing", "bench_package", "c_loop", "format_report", "machine_info",
           "pinocchio_cpp", "pinocchio_python", "time_callable"]
