"""The machine's fused multiply-add rate, to read the C batch against: ``python -m symgen.bench.fma``.

A small C probe (``templates/bench_fma.c.j2``) runs :data:`CHAINS` independent chains of
``a = a * b + c`` (each a dependent chain, so together they cover the FMA units' latency) on
scalars, on 4-double vectors (AVX2, 256 bits) and on 8-double vectors (AVX-512, 512 bits), GCC's
vector extension compiled with :data:`FLAGS` (no auto-vectorizing, so the scalars stay scalar;
a width the CPU lacks is left out). It reports per width the FMA instructions per second and the doubles per second (times
the lanes): the ceiling of straight-line code of one state (scalar) and of a batch (vectors).
"""
from __future__ import annotations

import shlex
import tempfile
from pathlib import Path

from .harness import compile_harness, find_cc, run_harness

#: independent chains per width: more than latency x units (4 cycles x 2 units on current cores)
CHAINS = 12
FLAGS = "-O2 -march=native -ffp-contract=fast -fno-tree-vectorize"   # scalars stay scalar (no SLP)
WIDTHS = {"scalar": 1, "avx2": 4, "avx512": 8}


def fma_rate(cc: str | None = None, flags: str = FLAGS, min_time: float = 0.05, repeats: int = 5,
             timeout: float | None = 120) -> dict:
    """``{width: {"lanes", "fma_per_s", "doubles_per_s"}}`` for the widths this machine runs
    (medians of ``repeats`` runs of at least ``min_time`` s), and ``"flags"``."""
    cc = find_cc(cc)
    context = {"chains": CHAINS}

    def command(source, exe):
        return [cc, *shlex.split(flags), "-std=gnu99", str(source), "-o", str(exe)]

    with tempfile.TemporaryDirectory(prefix="symgen-fma-") as tmp:
        exe = compile_harness("bench_fma.c.j2", context, command, Path(tmp) / "fma", timeout, "the FMA probe")
        found = run_harness(exe, [repeats, min_time], "the FMA probe")
    out = {"flags": flags, "chains": CHAINS}
    for width, lanes in WIDTHS.items():
        if width in found:
            per_s = CHAINS / (found[width].median_ns * 1e-9)     # median_ns: one round of CHAINS FMAs
            out[width] = {"lanes": lanes, "fma_per_s": per_s, "doubles_per_s": per_s * lanes}
    return out


def format_rate(rate: dict) -> str:
    """One line: G FMA instructions/s and G doubles/s per width."""
    parts = [f"{w} {r['fma_per_s'] / 1e9:.2f} G FMA/s ({r['doubles_per_s'] / 1e9:.1f} G doubles/s)"
             for w, r in rate.items() if isinstance(r, dict)]
    return f"FMA rate ({rate['chains']} independent chains, {rate['flags']}): " + ", ".join(parts)


if __name__ == "__main__":  # pragma: no cover
    print(format_rate(fma_rate()))
