"""The C batch (NAME_<function>_batch_threads: groups of LANES states on GCC's vector type, their
sin and cos by lanes_sincos) gives what one-state calls give: M, C, tau and FD on panda, solo12
with its free-flyer and a 20-DoF chain (whose C and FD are printed in parts), with 2, 4 (AVX2) and
8 (AVX-512) lanes, batch sizes 0, 1, around the lanes and past the threads' minimum, with a joint
angle past lanes_sincos's range in the batch, and nothing written past the batch's outputs. The
one-state functions are libm's sin and cos and the scalar code: the oracle here. And lanes_sincos
itself against libm. Speed is not tested here (``symgen bench`` reports the batch per state)."""
from __future__ import annotations

import json
import math
import shutil
import subprocess
from pathlib import Path

import pytest

import support
from symgen import robots
from symgen.codegen.build import BuildOptions, build
from symgen.codegen.lanes import HELPERS
from symgen.codegen.render import render
from symgen.urdf import load_urdf

RTOL = 1e-13                          # per state, relative to the largest entry of the one-state output
FUNCTIONS = ("mass_matrix", "coriolis_matrix", "inverse_dynamics", "forward_dynamics")
COUNTS = (0, 1, 2, 3, 4, 5, 7, 8, 9, 19, 37, 100)      # 100 >= PARALLEL_MIN: the OpenMP path
SEED = 20261126


def _cpu_flags() -> set:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("flags"):
                return set(line.split(":", 1)[1].split())
    except OSError:
        pass
    return set()


#: lanes -> gcc flags: 2 on the baseline x86-64 (SSE2), 4 with AVX2 and no AVX-512, 8 with AVX-512
WIDTHS = {2: "-march=x86-64", 4: "-march=native -mno-avx512f", 8: "-march=native"}
NEEDS = {2: set(), 4: {"avx2", "fma"}, 8: {"avx512f"}}


def _cc():
    cc = shutil.which("gcc") or shutil.which("cc")
    support.require("a C compiler", cc is not None)
    return cc


def _lanes_or_skip(lanes: int):
    missing = NEEDS[lanes] - _cpu_flags()
    if missing:
        pytest.skip(f"{lanes} lanes: this CPU lacks {', '.join(sorted(missing))}")


def _compile_and_run(cc, sources, flags, exe):
    cmd = [cc, *flags.split(), "-O2", "-ffp-contract=fast", "-fopenmp", "-std=gnu99", *map(str, sources),
           "-o", str(exe), "-lm"]
    done = subprocess.run(cmd, capture_output=True, text=True)
    assert done.returncode == 0, f"{' '.join(cmd)}\n{done.stderr[-3000:]}"
    run = subprocess.run([str(exe)], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr[-2000:]
    return run.stdout


# ---------------------------------------------------------------- lanes_sincos against libm

SINCOS_DRIVER = r"""
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "lanes.h"
static unsigned long long st = SEED_;
static double U(void) { st ^= st >> 12; st ^= st << 25; st ^= st >> 27;
                        return (double)((st * 2685821657736338717ULL) >> 11) / 9007199254740992.0; }
static double ulps(double a, double b) {
    if (a == b || (isnan(a) && isnan(b))) return 0;
    return fabs(a - b) / (nextafter(fabs(b), INFINITY) - fabs(b));
}
/* kind 0: uniform in [-range, range]; 1: within 1e-9 of a multiple of pi/2 in it */
static void probe(const char *name, double range, int kind, long n) {
    double ulp = 0, absolute = 0, rel = 0, worst = 0;
    for (long i = 0; i < n; i += T_LANES) {
        lanes_t x;
        for (int l = 0; l < T_LANES; ++l) {
            x[l] = (2 * U() - 1) * range;
            if (kind == 1) x[l] = floor(x[l] / M_PI_2) * M_PI_2 + (U() - 0.5) * 1e-9;
        }
        const lanes_t s = lanes_sin(x), c = lanes_cos(x);
        for (int l = 0; l < T_LANES; ++l) {
            const double e[2] = {s[l] - sin(x[l]), c[l] - cos(x[l])}, ref[2] = {sin(x[l]), cos(x[l])};
            const double u[2] = {ulps(s[l], ref[0]), ulps(c[l], ref[1])};
            for (int j = 0; j < 2; ++j) {
                if (u[j] > ulp) { ulp = u[j]; worst = x[l]; }
                if (fabs(e[j]) > absolute) absolute = fabs(e[j]);
                if (fabs(e[j]) / fabs(ref[j]) > rel) rel = fabs(e[j]) / fabs(ref[j]);
            }
        }
    }
    printf("%s\"%s\": {\"ulp\": %g, \"abs\": %g, \"rel\": %g, \"worst_x\": %.17g}", kind || range > 1 ? ", " : "",
           name, ulp, absolute, rel, worst);
}
int main(void) {
    printf("{");
    probe("small", 0.5, 0, 200000);
    probe("joint", 10.0, 0, 400000);
    probe("wide", 131072.0, 0, 400000);
    probe("near_zeros", 1000.0, 1, 200000);
    probe("libm_path", 1e12, 0, 20000);
    {   /* one big lane among small ones, inf and nan: libm's values for the group */
        lanes_t x;
        for (int l = 0; l < T_LANES; ++l) x[l] = 0.25 * l;
        x[T_LANES - 1] = 3e5;
        lanes_t s = lanes_sin(x), c = lanes_cos(x);
        int same = 1;
        for (int l = 0; l < T_LANES; ++l) same &= s[l] == sin(x[l]) && c[l] == cos(x[l]);
        x[0] = INFINITY; x[1] = NAN;
        s = lanes_sin(x); c = lanes_cos(x);
        same &= isnan(s[0]) && isnan(c[0]) && isnan(s[1]) && isnan(c[1]);
        /* the batch's lanes functions: the polynomials alone in range (they test it once first) */
        for (long i = 0; i < 100000; ++i) {
            for (int l = 0; l < T_LANES; ++l) x[l] = (2 * U() - 1) * 131072.0;
            const lanes_t sp = lanes_sin_poly(x), cp = lanes_cos_poly(x);
            s = lanes_sin(x); c = lanes_cos(x);
            for (int l = 0; l < T_LANES; ++l) same &= sp[l] == s[l] && cp[l] == c[l];
        }
        printf(", \"mixed_group_exact\": %d}\n", same);
    }
    return 0;
}
"""


@pytest.mark.parametrize("lanes", sorted(WIDTHS))
def test_lanes_sincos_matches_libm(tmp_path, lanes):
    _lanes_or_skip(lanes)
    lanes_h = render("c_lanes.h.j2", {"PREFIX": "T", "prefix": "t", "lanes_helpers": HELPERS})
    (tmp_path / "lanes.h").write_text("#define T_RESTRICT restrict\n" + lanes_h, encoding="utf-8")
    (tmp_path / "probe.c").write_text(SINCOS_DRIVER.replace("SEED_", f"{SEED}ULL"), encoding="utf-8")
    found = json.loads(_compile_and_run(_cc(), [tmp_path / "probe.c"], f"{WIDTHS[lanes]} -DT_LANES={lanes}",
                                        tmp_path / "probe"))
    context = f"(seed {SEED}, {lanes} lanes: {found})"
    for name in ("small", "joint", "wide", "libm_path"):
        assert found[name]["ulp"] <= 2, f"{name}: {found[name]['ulp']} ulp from libm {context}"
    # near the zeros of sin and cos (x within 1e-9 of k pi/2) the reduction's last bits show as
    # ulps of a tiny value: tens of ulp, far inside 1e-13 relative, and 1e-16 absolute
    assert found["near_zeros"]["rel"] <= 1e-13, context
    for name in ("small", "joint", "wide", "near_zeros", "libm_path"):
        assert found[name]["abs"] <= 2.3e-16, f"{name} {context}"
    # libm's values for a group with a big lane, nan for inf and nan, and lanes_sin_poly/lanes_cos_poly
    # (the batch's, in range) the bits of lanes_sin/lanes_cos
    assert found["mixed_group_exact"] == 1, context


# ---------------------------------------------------------------- batch == one state

BATCH_DRIVER = r"""
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include "NAME_.h"
#define SENTINEL 12345.678
static unsigned long long st = SEED_;
static double U(void) { st ^= st >> 12; st ^= st << 25; st ^= st >> 27;
                        return (double)((st * 2685821657736338717ULL) >> 11) / 9007199254740992.0; }
static void draw(double *x, size_t count, int size, double lo, double hi, int quaternion) {
    for (size_t s = 0; s < count; ++s) {
        double *v = x + s * size;
        for (int k = 0; k < size; ++k) v[k] = lo + (hi - lo) * U();
        if (quaternion) {
            double n = sqrt(v[3] * v[3] + v[4] * v[4] + v[5] * v[5] + v[6] * v[6]);
            for (int k = 3; k < 7; ++k) v[k] /= n;
        }
    }
    if (quaternion >= 0 && count > 1) x[size + size - 1] = 3.0e5;   /* state 1: an angle past 2^17 */
}
CHECKS_
int main(void) {
    const size_t counts[] = {COUNTS_};
    printf("{");
    for (int threads = 1; threads <= 2; ++threads)
        for (size_t c = 0; c < sizeof counts / sizeof counts[0]; ++c) {
RUNS_
        }
    printf("\"done\": 1}\n");
    return 0;
}
"""

CHECK = r"""
static double check_FN_(size_t count, int threads) {
    const size_t pad = 64;                        /* outputs past the batch's: must stay untouched */
ALLOC_
    double *out = malloc(sizeof(double) * (count + pad) * OUT_), *one = malloc(sizeof(double) * OUT_);
    for (size_t k = 0; k < (count + pad) * OUT_; ++k) out[k] = SENTINEL;
    NAME__FN__batch_threads(count, threads, ARGS_, out);
    double worst = 0;
    for (size_t s = 0; s < count; ++s) {
        NAME__FN_(ONE_ARGS_, one);
        double scale = 0, err = 0;
        for (int k = 0; k < OUT_; ++k) {
            if (fabs(one[k]) > scale) scale = fabs(one[k]);
            if (!(fabs(out[s * OUT_ + k] - one[k]) <= err)) err = fabs(out[s * OUT_ + k] - one[k]);
        }
        if (scale > 0) err /= scale;
SENSITIVITY_
        if (!(err <= worst)) worst = err;            /* a nan stays */
    }
    for (size_t k = count * OUT_; k < (count + pad) * OUT_; ++k)
        if (out[k] != SENTINEL) worst = INFINITY;    /* written past the batch */
FREE_
    free(out); free(one);
    return worst;
}
"""

#: forward dynamics solves with M, which can be ill-conditioned (panda's fingers weigh grams): its
#: batch is checked against how far one state moves itself when its inputs move by one ulp, in
#: NUDGES random directions; the error may be SENSITIVITY times that (its ulps of sin, cos and
#: FMA contraction are moves of that kind), else RTOL
NUDGES, SENSITIVITY = 8, 4.0
FD_SENSITIVITY = r"""
        {
            double sens = 0, *nudged[3], *moved = malloc(sizeof(double) * OUT_);
            const double *inputs[3] = {INPUTS_};
            const int sizes[3] = {SIZES_};
            for (int j = 0; j < 3; ++j) nudged[j] = malloc(sizeof(double) * sizes[j]);
            for (int t = 0; t < NUDGES_; ++t) {
                for (int j = 0; j < 3; ++j)
                    for (int k = 0; k < sizes[j]; ++k)
                        nudged[j][k] = nextafter(inputs[j][s * sizes[j] + k], U() < 0.5 ? -INFINITY : INFINITY);
                NAME__FN_(nudged[0], nudged[1], nudged[2], moved);
                for (int k = 0; k < OUT_; ++k)
                    if (fabs(moved[k] - one[k]) / scale > sens) sens = fabs(moved[k] - one[k]) / scale;
            }
            for (int j = 0; j < 3; ++j) free(nudged[j]);
            free(moved);
            if (SENSITIVITY_ * sens > RTOL_) err *= RTOL_ / (SENSITIVITY_ * sens);   /* in units of RTOL */
        }
"""
#: per argument: its size, its range, whether it holds a quaternion
ARG_RANGES = {"q": (-4.0, 4.0), "qd": (-5.0, 5.0), "qdd": (-10.0, 10.0), "tau": (-20.0, 20.0)}


def _driver(manifest: dict) -> str:
    name, nq, nv = manifest["name"], manifest["nq"], manifest["nv"]
    checks, runs = [], []
    for fn in FUNCTIONS:
        info = manifest["functions"][fn]
        size = sum(math.prod(shape) for _, shape in info["outputs"])
        alloc, free, args, one_args = [], [], [], []
        for a in info["inputs"]:
            n = nq if a == "q" else nv
            lo, hi = ARG_RANGES[a]
            quaternion = 1 if (a == "q" and manifest["floating_base"]) else (0 if a == "q" else -1)
            alloc.append(f"    double *{a} = malloc(sizeof(double) * (count + 1) * {n});\n"
                         f"    draw({a}, count, {n}, {lo}, {hi}, {quaternion});")
            free.append(f"    free({a});")
            args.append(a)
            one_args.append(f"{a} + s * {n}")
        sensitivity = "" if fn != "forward_dynamics" else (
            FD_SENSITIVITY.replace("INPUTS_", ", ".join(info["inputs"]))
            .replace("SIZES_", ", ".join(str(nq if a == "q" else nv) for a in info["inputs"]))
            .replace("NUDGES_", str(NUDGES)).replace("SENSITIVITY_", repr(SENSITIVITY)).replace("RTOL_", repr(RTOL)))
        checks.append(CHECK.replace("SENSITIVITY_", sensitivity).replace("ALLOC_", "\n".join(alloc)).replace("FREE_", "\n".join(free))
                      .replace("ONE_ARGS_", ", ".join(one_args)).replace("ARGS_", ", ".join(args))
                      .replace("OUT_", str(size)).replace("FN_", fn))
        runs.append(f'            {{ const double e = check_{fn}(counts[c], threads);\n'
                    f'              printf("\\"{fn} %d %zu\\": %.3g, ", threads, counts[c], isfinite(e) ? e : 1e300); }}')
    return (BATCH_DRIVER.replace("CHECKS_", "\n".join(checks)).replace("RUNS_", "\n".join(runs))
            .replace("COUNTS_", ", ".join(map(str, COUNTS))).replace("SEED_", f"{SEED}ULL")
            .replace("NAME_", name))


def _package(tmp_path_factory, label):
    out = tmp_path_factory.mktemp(f"lanes-{label}")
    if label == "panda":
        robot = load_urdf(support.erd_path("panda_description/urdf/panda.urdf"))
    elif label == "solo12":
        robot = load_urdf(support.erd_path("solo_description/robots/solo12.urdf"), floating_base=True)
    else:
        robot = robots.make("serial", 20, seed=0)
    opts = BuildOptions(quantities=("M", "C", "tau", "qdd"), compile=False, jobs=2)
    return build(robot, out, name=label, opts=opts).path


@pytest.fixture(scope="module")
def packages(tmp_path_factory):
    return {}


#: in CI a sample (every width on panda and solo12, 44 s each for serial20); all of them with -m slow
ROBOT_LANES = [pytest.param("panda", 2, marks=pytest.mark.slow), ("panda", 4), pytest.param("panda", 8, marks=pytest.mark.slow),
               ("solo12", 2), pytest.param("solo12", 4, marks=pytest.mark.slow), ("solo12", 8),
               pytest.param("serial20", 4, marks=pytest.mark.slow), pytest.param("serial20", 8, marks=pytest.mark.slow)]


@pytest.mark.parametrize("label,lanes", ROBOT_LANES)
def test_batch_equals_one_state(packages, tmp_path_factory, tmp_path, label, lanes):
    _lanes_or_skip(lanes)
    if label not in packages:
        packages[label] = _package(tmp_path_factory, label)
    path = Path(packages[label])
    manifest = json.loads((path / "manifest.json").read_text())
    if label == "serial20":     # the chain's C and FD are printed in parts: their lanes copy too
        assert manifest["functions"]["coriolis_matrix"]["c_shape"]["parts"] > 1
    if label == "solo12":       # its M: the lanes function inlined into the batch loop (mostly output entries)
        assert "SOLO12_LANES_INLINE int solo12_mass_matrix_lanes(" in (path / "solo12.c").read_text()
    (tmp_path / "driver.c").write_text(_driver(manifest), encoding="utf-8")
    flags = f"{WIDTHS[lanes]} -I{path} -D{manifest['name'].upper()}_LANES={lanes}"
    found = json.loads(_compile_and_run(_cc(), [tmp_path / "driver.c", path / f"{manifest['name']}.c"], flags,
                                        tmp_path / "driver"))
    found.pop("done")
    assert len(found) == len(FUNCTIONS) * len(COUNTS) * 2
    bad = {k: v for k, v in found.items() if not v <= RTOL}
    assert not bad, (f"{label}, {lanes} lanes (seed {SEED}): batch against one state, relative error per "
                     f"'function threads count' (1e300: nan, or written past the batch): {bad}")
