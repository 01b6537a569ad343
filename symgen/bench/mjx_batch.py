"""MuJoCo MJX beside the JAX target (a benchmark, not a test):
``python -m symgen.bench.mjx_batch PACKAGE --urdf URDF [--floating-base]``.

PACKAGE is built from URDF with ``--target ...,jax``; MJX runs MuJoCo's own compile of the same
URDF (symgen's mesh-free rewrite of it, as tests/test_mjcf.py makes it, with a free joint on the
root body for ``--floating-base``). Per state in one jitted ``vmap`` batch (``--batch``, 4,096):

    M      ours mass_matrix;                 MJX kinematics, com_pos, crb, full_m (dense M)
    bias   ours inverse_dynamics(q, v, 0);   MJX kinematics, com_pos, com_vel, rne: qfrc_bias
    qdd    ours forward_dynamics(q, v, tau); MJX forward (contacts, constraints, passive forces
                                             and actuation off): qacc

Ours is the package's function on the (batch, n) arrays, as in :mod:`.jax_batch`. Before timing,
MJX's M of one state is checked against ours (fixed base; 1e-4 relative: MuJoCo writes the
inertias it compiled with 6 digits). Each figure is the median of ``--repeats`` whole batches.
"""
from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from .jax_batch import _median_seconds

#: MuJoCo's disable flags for the forward dynamics that match ours (no contacts, limits, springs)
_FLAGS = ("CONTACT", "CONSTRAINT", "SPRING", "DAMPER", "ACTUATION", "SENSOR", "EQUALITY", "LIMIT",
          "FRICTIONLOSS")


def mujoco_model(urdf, floating_base: bool):
    """MuJoCo's compile of the URDF (no meshes; static bodies kept; inertias as written)."""
    import mujoco

    from ..urdf import load_urdf, urdf_string

    text = urdf_string(load_urdf(urdf, floating_base=floating_base))
    head = text.index(">", text.index("<robot")) + 1
    text = (text[:head] + '<mujoco><compiler fusestatic="false" balanceinertia="false" boundmass="0" '
            'boundinertia="0"/></mujoco>' + text[head:])
    m = mujoco.MjModel.from_xml_string(text)
    if floating_base:       # MuJoCo's MJCF of it, a free joint opening the first body
        with tempfile.TemporaryDirectory() as folder:
            path = Path(folder) / "robot.xml"
            mujoco.mj_saveLastXML(str(path), m)
            mjcf = path.read_text()
        body = mjcf.index(">", mjcf.index("<body", mjcf.index("<worldbody"))) + 1
        m = mujoco.MjModel.from_xml_string(mjcf[:body] + "<freejoint/>" + mjcf[body:])
    for name in _FLAGS:
        m.opt.disableflags |= int(getattr(mujoco.mjtDisableBit, f"mjDSBL_{name}"))
    return m


def mjx_functions(m) -> dict:
    """{quantity: jax.jit(jax.vmap(...))} of MJX on the model."""
    import jax
    from mujoco import mjx

    mx = mjx.put_model(m)
    d0 = mjx.make_data(mx)

    def mass(qpos):
        d = mjx.crb(mx, mjx.com_pos(mx, mjx.kinematics(mx, d0.replace(qpos=qpos))))
        return mjx.full_m(mx, d)

    def bias(qpos, qvel):
        d = mjx.com_vel(mx, mjx.com_pos(mx, mjx.kinematics(mx, d0.replace(qpos=qpos, qvel=qvel))))
        return mjx.rne(mx, d).qfrc_bias

    def forward(qpos, qvel, qfrc):
        return mjx.forward(mx, d0.replace(qpos=qpos, qvel=qvel, qfrc_applied=qfrc)).qacc

    return {"M": jax.jit(jax.vmap(mass)), "bias": jax.jit(jax.vmap(bias)), "qdd": jax.jit(jax.vmap(forward))}


def compare(pkg, m, batch: int, repeats: int) -> dict:
    """{quantity: {"ours": us, "mjx": us, "first call ours": s, "first call mjx": s}} per state."""
    import jax
    import jax.numpy as jnp

    rng = np.random.default_rng(0)
    floating = pkg.nq != pkg.nv
    if (m.nv, m.nq) != (pkg.nv, pkg.nq):
        raise SystemExit(f"MuJoCo's model has nq, nv = {m.nq}, {m.nv}, the package {pkg.nq}, {pkg.nv}")
    q = rng.uniform(-1.0, 1.0, (batch, pkg.nq))
    if floating:
        q[:, 3:7] /= np.linalg.norm(q[:, 3:7], axis=1, keepdims=True)
    v, tau = rng.uniform(-2.0, 2.0, (2, batch, pkg.nv))
    qpos, qvel = pkg_to_mujoco(pkg, m, q, v)
    mjx_f = mjx_functions(m)
    if not floating:
        M_mjx = np.asarray(mjx_f["M"](jnp.asarray(qpos[:2])))
        M_ours = np.asarray(pkg.jax.mass_matrix(q[:2]))
        err = np.abs(M_mjx - M_ours).max() / np.abs(M_ours).max()
        if err > 1e-4:
            raise SystemExit(f"MJX's M differs from ours by {err:.1e} (relative): not the same robot")
    zero = np.zeros_like(v)
    ours = {"M": lambda: pkg.jax.mass_matrix(q), "bias": lambda: pkg.jax.inverse_dynamics(q, v, zero),
            "qdd": lambda: pkg.jax.forward_dynamics(q, v, tau)}
    theirs = {"M": lambda: mjx_f["M"](qpos), "bias": lambda: mjx_f["bias"](qpos, qvel),
              "qdd": lambda: mjx_f["qdd"](qpos, qvel, tau)}
    out = {}
    for qty in ours:
        row = {}
        for who, fn in (("ours", ours[qty]), ("mjx", theirs[qty])):
            t = time.perf_counter()
            jax.block_until_ready(fn())
            row[f"first call {who} (s)"] = time.perf_counter() - t
            row[who] = _median_seconds(lambda: jax.block_until_ready(fn()), repeats) / batch * 1e6
        row["mjx / ours"] = row["mjx"] / row["ours"]
        out[qty] = row
    return out


def pkg_to_mujoco(pkg, m, q, v):
    """MuJoCo's (qpos, qvel) of the package's (q, v): joints offset by qpos0, the free joint's
    quaternion w first and its linear velocity in the world frame (:mod:`symgen.mjcf_convert`)."""
    from ..mjcf_convert import to_mujoco

    floating = pkg.nq != pkg.nv
    return to_mujoco(q, v, np.asarray(m.qpos0)[7 if floating else 0:], floating)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m symgen.bench.mjx_batch", description=__doc__.splitlines()[0])
    parser.add_argument("package", help="a package folder built from URDF with --target ...,jax")
    parser.add_argument("--urdf", required=True, help="the URDF the package was built from")
    parser.add_argument("--floating-base", action="store_true", help="the package has a free-flyer")
    parser.add_argument("--batch", type=int, default=4096)
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--x64", action="store_true", help="float64 (jax_enable_x64)")
    parser.add_argument("--json", default=None, help="write the results as JSON")
    a = parser.parse_args(argv)
    import jax

    from ..codegen.package import import_package

    if a.x64:
        jax.config.update("jax_enable_x64", True)
    try:
        import mujoco
        from mujoco import mjx  # noqa: F401
    except ImportError:
        print("MJX is not installed (pip install mujoco-mjx)", file=sys.stderr)
        return 2
    pkg = import_package(a.package)
    results = compare(pkg, mujoco_model(a.urdf, a.floating_base), a.batch, a.repeats)
    for qty, row in results.items():
        print(f"{qty:5s} " + "  ".join(f"{k} {v:.3f}" for k, v in row.items()) + "  (us per state)")
    if a.json:
        report = {"jax": jax.__version__, "mujoco": mujoco.__version__, "batch": a.batch, "x64": a.x64,
                  "us_per_state": results}
        Path(a.json).write_text(json.dumps(report, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
