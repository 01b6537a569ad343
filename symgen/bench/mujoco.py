"""MuJoCo as a rival of ``symgen bench --mujoco``: its C library from the wheel (headers in
``mujoco/include/mujoco/``, ``libmujoco.so.<version>``) timed in the same C loop process as the
generated C, on the MJCF file a package was built from.

Each MuJoCo call starts from a fresh state (qpos, qvel, and for forward dynamics
``qfrc_applied``; the states are the C loop's own, turned into MuJoCo's coordinates once before
timing, as ``to_mujoco`` does):

    M       mj_kinematics, mj_comPos, mj_crb, mj_fullM (the dense M, armature included)
    tau     mj_kinematics, mj_comPos, mj_comVel, mj_rne(flg_acc = 0): the bias C v + g (ours:
            inverse_dynamics, RNEA, at the loop's qdd; the same sweep)
    qdd     mj_forward with contacts, constraints, springs, dampers, actuation and sensors off: qacc
            (springs and dampers on for a package built with --passive, whose FD includes them)

Before timing, the package's C functions are checked against MuJoCo's (the same library through
its Python binding) after ``from_mujoco``: M, the bias and qacc to 1e-9 (relative).
"""
from __future__ import annotations

import os
from pathlib import Path

import numpy as np

from ..quantities import STATE_ARGUMENTS
from .harness import BenchError

#: quantity -> the MuJoCo calls of its runner (the state is set first)
MUJOCO_QUANTITIES = ("M", "tau", "qdd")
CHECK_RTOL = 1e-9
_FLAGS = ("mjDSBL_CONTACT", "mjDSBL_CONSTRAINT", "mjDSBL_SPRING", "mjDSBL_DAMPER", "mjDSBL_ACTUATION", "mjDSBL_SENSOR")


def _mujoco():
    try:
        import mujoco
    except ImportError:
        raise BenchError("--mujoco needs the mujoco package: pip install 'symgen[mjcf]'") from None
    return mujoco


def library():
    """(include folder, library folder, library file name) of the mujoco wheel's C API."""
    mujoco = _mujoco()
    folder = Path(mujoco.__file__).parent
    libs = sorted(f for f in os.listdir(folder) if f.startswith("libmujoco.so"))
    if not libs or not (folder / "include" / "mujoco" / "mujoco.h").exists():
        raise BenchError(f"the mujoco wheel in {folder} ships no C library and headers")
    return folder / "include", folder, libs[-1]


def _disabled(mujoco, passive=False):
    """The disable flags of the contact-free forward dynamics; a package built with --passive keeps
    MuJoCo's springs and dampers, as its forward_dynamics does."""
    bits = 0
    for name in _FLAGS:
        if not (passive and name in ("mjDSBL_SPRING", "mjDSBL_DAMPER")):
            bits |= int(getattr(mujoco.mjtDisableBit, name))
    return bits


def check(package_dir, model_path, quantities, trials: int = 3, seed: int = 2) -> dict:
    """The package's C (or NumPy) against MuJoCo on random states after ``from_mujoco``:
    ``{qty: max relative error}``; BenchError above CHECK_RTOL."""
    from ..codegen.build import import_package
    from ..mjcf_convert import velocity_map

    mujoco = _mujoco()
    pkg = import_package(package_dir)
    mod = pkg.c or pkg.numpy
    m = mujoco.MjModel.from_xml_path(str(model_path))
    m.opt.disableflags |= _disabled(mujoco, bool(getattr(pkg, "passive", False)))
    if (m.nq, m.nv) != (pkg.nq, pkg.nv):
        raise BenchError(f"{model_path}: nq, nv = {m.nq}, {m.nv} but the package has {pkg.nq}, {pkg.nv}")
    rng = np.random.default_rng(seed)
    worst = dict.fromkeys(quantities, 0.0)
    quats = [k + (3 if kind == "freeflyer" else 0) for _, kind, k, *_ in pkg.joint_models
             if kind in ("freeflyer", "spherical")]
    for _ in range(trials):
        d = mujoco.MjData(m)
        d.qpos[:] = m.qpos0 + rng.uniform(-1, 1, m.nq)
        for k in quats:
            d.qpos[k:k + 4] /= np.linalg.norm(d.qpos[k:k + 4])
        d.qvel[:] = rng.uniform(-2, 2, m.nv)
        d.qfrc_applied[:] = rng.uniform(-5, 5, m.nv)
        mujoco.mj_forward(m, d)
        M_mj = np.zeros((m.nv, m.nv))
        mujoco.mj_fullM(m, d, M_mj)
        q, v = pkg.from_mujoco(d.qpos, d.qvel)
        T, Tdot_qvel = velocity_map(pkg.joint_models, q, v)     # every free joint's linear velocity turned
        M = mod.mass_matrix(q)
        ours = {"M": (T.T @ M @ T, M_mj),
                "tau": (T.T @ (mod.inverse_dynamics(q, v, np.zeros(m.nv)) + M @ Tdot_qvel), d.qfrc_bias),
                "qdd": (np.linalg.solve(T, mod.forward_dynamics(q, v, np.linalg.solve(T.T, d.qfrc_applied))
                                        - Tdot_qvel), d.qacc)}
        for qty in quantities:
            a, b = ours[qty]
            worst[qty] = max(worst[qty], float(np.abs(a - b).max() / max(1.0, np.abs(b).max())))
    bad = {k: e for k, e in worst.items() if e > CHECK_RTOL}
    if bad:
        raise BenchError(f"the package disagrees with MuJoCo on {model_path}: "
                         + ", ".join(f"{k} {e:.1e}" for k, e in bad.items()))
    return worst


def prepare(package_dir, manifest: dict, model_path, quantities) -> dict:
    """MuJoCo's side of the C loop (the rival dict of :func:`symgen.bench.cloop.c_loop`) for the
    wanted quantities it has, after :func:`check`."""
    if "mujoco_qpos0" not in manifest:
        raise BenchError(f"{package_dir}: --mujoco needs a package built from MJCF (symgen build robot.xml)")
    if model_path is None:
        raise BenchError("--mujoco needs --model, the MJCF file the package was built from")
    mujoco = _mujoco()
    wanted = [qty for qty in quantities if qty in MUJOCO_QUANTITIES]
    if not wanted:
        raise BenchError(f"--mujoco times {', '.join(MUJOCO_QUANTITIES)}; none is in --functions")
    checked = check(package_dir, model_path, wanted)
    include, libdir, lib = library()
    nq, nv = int(manifest["nq"]), int(manifest["nv"])
    return {"dir": None, "name": "mujoco", "functions": wanted, "check": checked, "version": mujoco.__version__,
            "extra": {"includes": ["mujoco/mujoco.h"], "include_dirs": [str(include)],
                      "libs": [f"-L{libdir}", f"-l:{lib}", f"-Wl,-rpath,{libdir}"],
                      "declarations": _declarations(model_path, manifest, nq, nv,
                                                    _disabled(mujoco, bool(manifest["options"].get("passive")))),
                      "runners": [_runner(qty, nv) for qty in wanted], "out_size": nv * nv}}


def _declarations(model_path, manifest, nq, nv, disabled) -> str:
    """The model, its data and the states in MuJoCo's coordinates, made on the first call (after
    the driver has drawn its states): q, v, tau of the loop turned as to_mujoco does."""
    qpos0 = ", ".join(repr(float(x)) for x in manifest["mujoco_qpos0"]) or "0.0"
    path = str(Path(model_path).resolve()).replace("\\", "\\\\").replace('"', '\\"')
    from ..mjcf_convert import free_slots

    floating = int(bool(manifest["floating_base"]))
    balls = [j[2] for j in manifest.get("joint_models", ()) if j[1] == "spherical"]
    reorder = "".join(f"""
        {{ double b[4] = {{q[{k + 3}], q[{k}], q[{k + 1}], q[{k + 2}]}};   /* a ball: x y z w -> w x y z */
          mju_normalize4(b); for (k = 0; k < 4; ++k) mj_qpos[s][{k} + k] = b[k]; }}""" for k in balls)
    reorder += "".join(f"""
        free_joint(mj_qpos[s] + {k}, mj_qvel[s] + {kv}, mj_qfrc[s] + {kv}, q + {k}, v + {kv}, tau + {kv});"""
                       for k, kv in free_slots(manifest.get("joint_models", ())))
    row = {a: i for i, a in enumerate(STATE_ARGUMENTS)}           # the driver's inputs[row][state]
    return f"""static mjModel *mj_m;
static mjData *mj_d;
static double mj_qpos[COUNT][{nq}], mj_qvel[COUNT][{nv}], mj_qfrc[COUNT][{nv}];
static const double mj_qpos0[] = {{ {qpos0} }};
/* a free joint: quaternion x y z w -> w x y z, body-frame linear velocity and force -> world */
static void free_joint(double *qpos, double *qvel, double *qfrc, const double *q, const double *v, const double *tau) {{
    double quat[4] = {{q[6], q[3], q[4], q[5]}}, R[9];
    int k;
    mju_normalize4(quat);
    for (k = 0; k < 3; ++k) qpos[k] = q[k];
    for (k = 0; k < 4; ++k) qpos[3 + k] = quat[k];
    mju_quat2Mat(R, quat);
    mju_mulMatVec3(qvel, R, v);
    mju_mulMatVec3(qfrc, R, tau);
}}
static void mj_setup(void) {{
    char error[1000] = "";
    int s, k, f = {7 if floating else 0};
    mj_m = mj_loadXML("{path}", 0, error, sizeof error);
    if (!mj_m) {{ fprintf(stderr, "mujoco: %s\\n", error); exit(3); }}
    mj_m->opt.disableflags |= {disabled};
    mj_d = mj_makeData(mj_m);
    for (s = 0; s < COUNT; ++s) {{
        const double *q = inputs[{row['q']}][s], *v = inputs[{row['qd']}][s], *tau = inputs[{row['tau']}][s];
        for (k = 0; k < {nq} - f; ++k) mj_qpos[s][f + k] = q[f + k] + mj_qpos0[k];
        for (k = 0; k < {nv}; ++k) {{ mj_qvel[s][k] = v[k]; mj_qfrc[s][k] = tau[k]; }}{reorder}
    }}
}}
static void mj_state(long s, int velocity, int force) {{
    if (!mj_m) mj_setup();
    mju_copy(mj_d->qpos, mj_qpos[s], {nq});
    if (velocity) mju_copy(mj_d->qvel, mj_qvel[s], {nv});
    if (force) mju_copy(mj_d->qfrc_applied, mj_qfrc[s], {nv});
}}"""


def _runner(qty: str, nv: int) -> dict:
    call = {"M": "mj_state(s, 0, 0); mj_kinematics(mj_m, mj_d); mj_comPos(mj_m, mj_d); mj_crb(mj_m, mj_d); "
                 "mj_fullM(mj_m, mj_d, out);",
            "tau": "mj_state(s, 1, 0); mj_kinematics(mj_m, mj_d); mj_comPos(mj_m, mj_d); mj_comVel(mj_m, mj_d); "
                   "mj_rne(mj_m, mj_d, 0, out);",
            "qdd": f"mj_state(s, 1, 1); mj_forward(mj_m, mj_d); mju_copy(out, mj_d->qacc, {nv});"}[qty]
    return {"runner": f"mujoco_{qty}", "call": call, "label": f"{qty}:mujoco",
            "last": nv * nv - 1 if qty == "M" else nv - 1}
