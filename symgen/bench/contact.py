"""``symgen bench`` of a package's contact functions beside Pinocchio (issue #25): the package's C in
the C loop (:func:`~.cloop.c_loop`, the hand-written solve timed through custom runners, every
contact active) and Pinocchio's counterparts in a C++ harness of their own
(``templates/bench_pinocchio_contact.cpp.j2``: it builds RigidConstraintModels of the contact
frames, which the registry-wide harness has not), on the same robot and contacts. The harness also
loads the package's C as a shared object (the C loop's flags) and times it on Pinocchio's states
right before its rivals, in one process: on a loaded machine, separate processes see different
loads and their ratios wander (solo12: 1.7x to 4x from one run to the next).

    contact_dynamics   constraintDynamics (CONTACT_3D / CONTACT_6D, LOCAL_WORLD_ALIGNED), and
                       forwardDynamics(q, v, tau, J, gamma) after computeJointJacobians +
                       getFrameJacobian and forwardKinematics(q, v, 0) + getFrameClassicalAcceleration
                       per contact (J and gamma formed as the generated code forms them)
    impulse_dynamics   impulseDynamics with the RigidConstraintModels, and with J (formed likewise)
    contact_dynamics_derivatives
                       constraintDynamics + computeConstraintDynamicsDerivatives (the derivatives need
                       constraintDynamics' factorization; ours computes everything from (q, v, tau))
    whole_body_terms   computeAllTerms + getFrameJacobian per contact + forwardKinematics(q, v, 0) +
                       getFrameClassicalAcceleration per contact + ccrba + dccrba
"""
from __future__ import annotations

import shlex
import tempfile
from pathlib import Path

from ..quantities import STATE_ARGUMENTS
from .cloop import DEFAULT_FLAGS, c_loop, package_sources, read_manifest
from .harness import BenchError, cached_harness, find_cc, run_compiler, run_harness
from .pin import PIN_CXX_FLAGS, _pin, pin_cpp_command, pin_model, pin_needs_free_flyer, pin_prefix, pin_version

#: each timed function -> the harness's rival timings
RIVALS = {"contact_dynamics": ("constraintDynamics", "forwardDynamics_J_gamma"),
          "impulse_dynamics": ("impulseDynamics", "impulseDynamics_J"),
          "whole_body_terms": ("whole_body_sequence",),
          "contact_dynamics_derivatives": ("constraintDynamicsDerivatives",)}


def _runners(manifest: dict) -> dict:
    """The C loop's extra runners: the solve entry points, all contacts active."""
    name, nv = manifest["name"], int(manifest["nv"])
    count = len(manifest["contacts"])
    m = sum(3 if kind == "3d" else 6 for _, kind in manifest["contacts"])
    row = {a: f"inputs[{i}][s]" for i, a in enumerate(STATE_ARGUMENTS)}
    runners = []
    if "contact_terms" in manifest["functions"]:
        runners.append({"runner": "contact_dynamics_all", "label": "contact_dynamics", "last": nv + m - 1,
                        "call": f"{name}_contact_dynamics({row['q']}, {row['qd']}, {row['tau']}, contact_active_, 0.0, "
                                f"out, out + {nv});"})
    if "impulse_terms" in manifest["functions"]:
        runners.append({"runner": "impulse_dynamics_all", "label": "impulse_dynamics", "last": nv + m - 1,
                        "call": f"{name}_impulse_dynamics({row['q']}, {row['qd']}, contact_active_, 0.0, 0.0, "
                                f"out, out + {nv});"})
    derivatives = {"contact_terms", "contact_partials"} <= set(manifest["functions"])
    d = 3 * nv * nv + 3 * m * nv                        # the six derivative blocks
    if derivatives:
        outs = ", ".join(["out"] + [f"out + {k * nv * nv}" for k in (1, 2, 3)]
                         + [f"out + {3 * nv * nv + k * m * nv}" for k in (1, 2)])
        runners.append({"runner": "contact_dynamics_derivatives_all", "label": "contact_dynamics_derivatives",
                        "last": d - 1, "call": f"{name}_contact_dynamics_derivatives({row['q']}, {row['qd']}, "
                                               f"{row['tau']}, contact_active_, {outs});"})
    sizes = [nv + m] + ([d] if derivatives else [])
    return {"includes": [], "include_dirs": [], "runners": runners, "out_size": max(sizes),
            "declarations": f"static const double contact_active_[{count}] = {{{', '.join(['1.0'] * count)}}};"}


def _contact_frames(urdf, floating, manifest):
    """(Pinocchio's model of ``urdf``, the frame id of each contact): links and joints matched by
    name and kind, points (``--frames name=LINK@x,y,z``) added as the oracle adds them."""
    import symgen
    from ..pinocchio_oracle import _with_frames
    from ..quantities import frames_of

    robot = symgen.load_urdf(urdf, floating_base=floating)
    frames = {f.name: f for f in frames_of(robot, tuple(manifest["frames"]))}
    model, ids = _with_frames(_pin(), robot, pin_model(urdf, floating),
                              [frames[name] for name, _ in manifest["contacts"]])
    return model, ids


def bench_contacts(package_dir, urdf, flags: str = DEFAULT_FLAGS, repeats: int = 7, min_time: float = 0.05,
                   build: bool = True, timeout: float | None = 1800, count: int = 64) -> dict:
    """``{function: {"symgen_us": float, "pinocchio_us": {rival: float}, "ratio": {rival: float}}}``
    for the package's contact functions (its manifest must list contacts)."""
    manifest = read_manifest(package_dir)
    contacts = manifest.get("contacts")
    if not contacts:
        raise BenchError(f"{package_dir}: the package has no contacts (symgen build --contacts)")
    wanted = ["whole_body_terms"] if "whole_body_terms" in manifest["functions"] else []
    ours = c_loop(package_dir, ("whole_body_terms",) if wanted else ("contact_terms",), flags, repeats=repeats,
                  min_time=min_time, count=count, timeout=timeout,
                  rival={"dir": None, "name": "contacts", "extra": _runners(manifest)})
    prefix = pin_prefix()
    exe = cached_harness("bench_pinocchio_contact.cpp.j2", {}, f"{pin_version()}\0{PIN_CXX_FLAGS}",
                         f"pin-contact-bench-{pin_version()}",
                         lambda src, out: pin_cpp_command(prefix, PIN_CXX_FLAGS, src, out) + ["-ldl"], timeout,
                         build, "Pinocchio contact harness", "a few minutes")
    floating = pin_needs_free_flyer(urdf, int(manifest["nv"]))
    model, ids = _contact_frames(urdf, floating, manifest)
    with tempfile.TemporaryDirectory(prefix="symgen-pin-") as tmp:
        archive = Path(tmp) / "model.txt"
        model.saveToText(str(archive))
        # the package's C as a shared object under the C loop's flags, timed inside the harness too
        shared = Path(tmp) / f"lib{manifest['name']}.so"
        run_compiler([find_cc(None), *shlex.split(flags), "-fPIC", "-shared", "-std=c99",
                      *map(str, package_sources(package_dir, manifest)), "-o", str(shared), "-lm"], timeout,
                     f"{package_dir}: the package as a shared object")
        frames = ",".join(f"{i}:{3 if k == '3d' else 6}" for i, (_, k) in zip(ids, contacts))
        theirs = run_harness(exe, [archive, frames, repeats, min_time, count, shared, manifest["name"]],
                             f"the Pinocchio contact harness on {urdf}")
    out = {}
    for function, rivals in RIVALS.items():
        if function not in ours:
            continue
        us = ours[function].median_ns / 1e3
        pin_us = {r: theirs[r].median_ns / 1e3 for r in rivals if r in theirs}
        row = {"symgen_us": us, "pinocchio_us": pin_us, "ratio": {r: t / us for r, t in pin_us.items()}}
        same = theirs.get(f"symgen_{function}")
        if same is not None:            # the same process, the same states, right before its rivals
            row["symgen_in_harness_us"] = same.median_ns / 1e3
            row["ratio_in_harness"] = {r: t / row["symgen_in_harness_us"] for r, t in pin_us.items()}
        out[function] = row
    return out


def format_contacts(result: dict, contacts) -> str:
    lines = [f"contact functions, all {len(contacts)} contacts active "
             f"({', '.join(f'{n}:{k}' for n, k in contacts)}): median µs per call, C loop vs Pinocchio C++"]
    for function, row in result.items():
        same = row.get("symgen_in_harness_us")
        lines.append(f"  {function:18s} symgen {row['symgen_us']:9.3f} (C loop)"
                     + (f", {same:.3f} (in the Pinocchio harness, same states)" if same is not None else ""))
        for rival, us in row["pinocchio_us"].items():
            lines.append(f"    Pinocchio {rival:24s} {us:9.3f}   ratio {row['ratio'][rival]:6.2f}x"
                         + (f", {row['ratio_in_harness'][rival]:.2f}x in the harness" if same is not None else ""))
    return "\n".join(lines)
