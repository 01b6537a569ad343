"""How a batch's lanes copy moves an output back to the caller's packed states.

The lanes function leaves each computed entry of an output in a lanes vector (state l in lane l);
the batch writes them to LANES packed states through LANES x LANES transposes. An output's
structural zeros (solo12's M: 128 of 324 entries, whole 3 x 3 blocks where legs do not couple) need
no vector: :func:`store_plan` says, for one width, which aligned groups of LANES entries are
computed throughout (one transpose loop over the run of them), which mix computed and zero entries
(a transpose with a zero register in place of each zero entry, so nothing is written to the lanes
output first), which stretches are zero only (each state's stretch zeroed with stores, no
shuffles), and which computed entries past the last whole group go one by one.
"""
from __future__ import annotations

import re

#: the widths the printed C plans for (NAME_LANES; any other width takes the generic path)
WIDTHS = (2, 4, 8)

#: a whole lanes function with at least this many output entries a temp, and at most
#: INLINE_MAX_ENTRIES of them, is inlined into its batch loop: its work is mostly moving entries
#: back, and inlined the transposes take them from registers. Measured with 8 lanes, where gcc left
#: these out of line (docs/RESULTS.md in the git history, simd5): solo12's M (196 entries, 306 temps) 12-20 % faster;
#: less output-bound functions lost inlined (solo12's C, 0.20 an entry a temp: 5-9 %), and so did
#: a bigger one (panda's regressor, 402 entries: 8 %; the body's and the transposes' values then
#: compete for the registers).
INLINE_ENTRIES_A_TEMP = 0.5
INLINE_MAX_ENTRIES = 256

_TRIG = re.compile(r"^lanes_(sin|cos)\(")

#: the names of templates/c_lanes.h.j2's types and helpers: NAME.c defines each as NAME_<name> (so
#: that two packages' .c files compile in one translation unit) and undefines them at its end
HELPERS = ("lanes_t", "lanes_i", "lanes_sincos_libm", "lanes_sincos_poly", "lanes_big", "lanes_any", "lanes_sincos",
           "lanes_sin", "lanes_cos", "lanes_sincos_pinned", "lanes_sin_poly", "lanes_cos_poly", "lanes_sincos_n",
           "lanes_transpose", "lanes_transpose_out", "lanes_load", "lanes_store", "lanes_store_range",
           "lanes_store_mask", "lanes_zero", "lanes_store_one", "lanes_splat")


def unchecked_trig(c: str) -> str:
    """A lanes line ``lanes_sin(q[k])`` (a joint angle's sin or cos) as the polynomials alone,
    ``lanes_sin_poly(q[k])``: the lanes function tests its angles' range once, at its top."""
    return _TRIG.sub(r"lanes_\1_poly(", c)


def inline_lanes(entries: int, temps: int) -> bool:
    """Whether a whole lanes function of ``entries`` output entries and ``temps`` temps is printed
    always-inline (:data:`INLINE_ENTRIES_A_TEMP`, :data:`INLINE_MAX_ENTRIES`)."""
    return INLINE_ENTRIES_A_TEMP * max(temps, 1) <= entries <= INLINE_MAX_ENTRIES


def store_plan(size: int, nonzero, lanes: int) -> list[tuple]:
    """Steps, in order of the output's entries, that write ``size`` entries of LANES states from
    lanes vectors whose computed entries are ``nonzero`` (flat indices): ``("full", start, stop)``
    transposes the groups of ``[start, stop)``, ``("mask", start, mask)`` one group with entry
    ``start + j`` read when bit j of mask is set and zero otherwise, ``("zero", start, count)``
    zeros entries ``[start, start + count)`` of every state, ``("one", k)`` copies entry k lane
    by lane."""
    nonzero = set(nonzero)
    steps: list[tuple] = []

    def add(step):
        last = steps[-1] if steps else None
        if step[0] == "full" and last and last[0] == "full" and last[2] == step[1]:
            steps[-1] = ("full", last[1], step[2])
        elif step[0] == "zero" and last and last[0] == "zero" and last[1] + last[2] == step[1]:
            steps[-1] = ("zero", last[1], last[2] + step[2])
        else:
            steps.append(step)

    whole = size - size % lanes
    for start in range(0, whole, lanes):
        mask = sum(1 << j for j in range(lanes) if start + j in nonzero)
        if mask == (1 << lanes) - 1:
            add(("full", start, start + lanes))
        elif mask == 0:
            add(("zero", start, lanes))
        else:
            add(("mask", start, mask))
    for k in range(whole, size):
        add(("one", k) if k in nonzero else ("zero", k, 1))
    return steps


def store_plans(size: int, nonzero) -> list[dict]:
    """The plan of every width of :data:`WIDTHS`, as the C template prints them."""
    return [{"lanes": lanes, "steps": store_plan(size, nonzero, lanes)} for lanes in WIDTHS]
