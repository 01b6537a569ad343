"""The timing record every harness reports, and the timer of Python callables.

:class:`Timing` holds the median, min and max time per call over ``repeats`` repeats, each repeat
a loop of ``inner`` calls, with ``inner`` calibrated so that one repeat lasts at least
``min_time`` seconds (as ``timeit.Timer.autorange`` does). Medians over repeats are what a
shared, noisy machine can report honestly; min-max shows the noise. The C and C++ harnesses
calibrate the same way (see ``templates/bench_*.j2``).
"""
from __future__ import annotations

import gc
import time
from dataclasses import asdict, dataclass

import numpy as np


@dataclass
class Timing:
    median_ns: float
    min_ns: float
    max_ns: float
    inner: int
    repeats: int

    @property
    def us(self) -> float:
        return self.median_ns / 1e3

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_samples(cls, ns_per_call, inner) -> "Timing":
        s = sorted(ns_per_call)
        return cls(float(np.median(s)), float(s[0]), float(s[-1]), int(inner), len(s))

    def scaled(self, factor: float) -> "Timing":
        """Per-item time of a call that handles ``1/factor`` items (a batch)."""
        return Timing(self.median_ns * factor, self.min_ns * factor, self.max_ns * factor, self.inner, self.repeats)


def time_callable(fn, repeats: int = 7, min_time: float = 0.05, max_inner: int = 10**7) -> Timing:
    """Median/min/max ns per call of ``fn()`` over ``repeats`` repeats of an auto-calibrated loop
    (``timeit``-style, garbage collection off)."""
    gc_was = gc.isenabled()
    gc.disable()
    try:
        inner = 1
        while True:                       # calibrate: 1, 2, 5, 10, 20, 50, ... calls per repeat
            dt = _loop(fn, inner)
            if dt >= min_time or inner >= max_inner:
                break
            inner = _next_inner(inner, dt, min_time)
        samples = [_loop(fn, inner) * 1e9 / inner for _ in range(repeats)]
    finally:
        if gc_was:
            gc.enable()
    return Timing.from_samples(samples, inner)


def _loop(fn, inner: int) -> float:
    it = range(inner)
    t0 = time.perf_counter()
    for _ in it:
        fn()
    return time.perf_counter() - t0


def _next_inner(inner: int, dt: float, min_time: float) -> int:
    if dt <= 0:
        return inner * 10
    return max(inner + 1, min(inner * 10, int(inner * 1.2 * min_time / dt) + 1))
