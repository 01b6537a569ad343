"""Passive joint forces: viscous dampers and linear springs on the joints.

    tau_p(q, v) = -damping * v - stiffness * (q - springref)

per velocity (``Robot.damping``, ``Robot.stiffness``, ``Robot.springref``; the spring acts on the
coordinate of a hinge or slide only, a joint with several velocities has no spring here). They come
from MJCF (``dof_damping``, ``jnt_stiffness``, ``qpos_spring``: :mod:`symgen.mjcf_passive`) and
from URDF (``<dynamics damping>``, Pinocchio's ``model.damping``). The package's
``passive_force`` computes tau_p; ``forward_dynamics`` and its derivatives include it when built
with ``--passive``: qdd = M^-1 (tau + tau_p - C v - g), so that

    dqdd/dq = -M^-1 (dtau/dq + diag(stiffness)),    dqdd/dv = -M^-1 (dtau/dv + diag(damping)).

The default is MuJoCo's for a model read from MJCF (it simulates its dampers and springs) and
Pinocchio's for URDF (its ``aba`` leaves ``model.damping`` out): :func:`resolve`.
"""
from __future__ import annotations

import math

from .errors import ModelError, OptionError

#: the sweeps whose value changes with ``--passive`` (their runs add tau_p to tau)
PASSIVE_SWEEPS = ("forward_dynamics", "fd_derivatives")


def check_passive(robot) -> None:
    """A ModelError unless the robot's damping, stiffness and springref are each empty or one
    finite number per velocity, damping and stiffness >= 0, and springs only on hinges and slides."""
    n = robot.n
    for name in ("damping", "stiffness", "springref"):
        values = getattr(robot, name)
        if values and (len(values) != n or not all(math.isfinite(x) for x in values)
                       or name != "springref" and not all(x >= 0.0 for x in values)):
            what = "finite numbers" if name == "springref" else "numbers >= 0"
            raise ModelError(f"robot {robot.name!r}: {name} must be {n} {what} (one per velocity), got {values}")
    for i, k in enumerate(robot.stiffness):
        if k and robot.bodies[i].group:
            raise ModelError(f"robot {robot.name!r}: body {robot.bodies[i].name!r} of the {robot.bodies[i].group} "
                             f"joint {robot.bodies[i].joint_name!r} has stiffness {k}: springs act on hinges and "
                             f"slides only")


def has_passive(robot) -> bool:
    """Whether the robot (or, with --mimic, couplings or loops, its spanning tree) has dampers or springs."""
    return robot.full.has_passive


def constrained(robot) -> bool:
    """Whether ``robot`` is seen through an embedding (--mimic, URDF+ couplings, loops)."""
    return robot.embedding is not None or robot.system is not None


def left_out_note(robot, passive) -> str | None:
    """The build's note when an MJCF model's dampers and springs are left out (constrained), if so."""
    if has_passive(robot) and constrained(robot) and robot.mujoco_qpos0 is not None and not passive:
        return ("symgen: note: the joints' dampers and springs are left out (MuJoCo applies them; not supported "
                "with couplings or loops yet)")
    return None


def default_passive(robot) -> bool:
    """``--passive``'s default: on for a model read from MJCF with dampers or springs (MuJoCo
    simulates them) unless it is constrained (not supported there yet), off otherwise (Pinocchio)."""
    return robot.mujoco_qpos0 is not None and has_passive(robot) and not constrained(robot)


def resolve(robot, passive: bool | None) -> bool:
    """Whether forward dynamics includes the passive forces: ``passive`` (None: the default,
    :func:`default_passive`); an OptionError when asked of a constrained robot with passive forces."""
    if passive is None:
        return default_passive(robot)
    if passive and has_passive(robot) and constrained(robot):
        raise OptionError(f"--passive: not supported with --mimic, URDF+ couplings or loops yet (robot "
                          f"{robot.name!r}: the projected passive force Gᵀ tau_p is not in "
                          f"forward dynamics); --no-passive builds without it")
    return bool(passive)


def package_values(robot) -> dict:
    """A package's ``damping``, ``stiffness`` and ``springref`` per velocity, (nv,) each: zeros
    when none, and on a robot with --mimic, couplings or loops (no passive_force there yet)."""
    import numpy as np

    if constrained(robot):
        return {name: np.zeros(robot.n) for name in ("damping", "stiffness", "springref")}
    return {"damping": robot.damping_vector, "stiffness": robot.stiffness_vector, "springref": robot.springref_vector}


def header_lines(robot) -> list[str]:
    """The generated files' header lines of the passive forces (none without them)."""
    values = package_values(robot)
    shown = [name for name in values if any(values["damping" if name == "damping" else "stiffness"])]
    return [f"{name}: {' '.join(repr(float(x) + 0.0) for x in values[name])}" for name in shown]


def describe(robot) -> list[str]:
    """``symgen info``'s lines on the passive forces: per joint its damping and spring."""
    full = robot.full
    if not full.has_passive:
        return []
    fd = ("in forward_dynamics by default (MJCF; --no-passive)" if default_passive(robot) else
          "in forward_dynamics with --passive" if not constrained(robot) else
          "not generated with --mimic, couplings or loops yet")
    lines = [f"  passive forces tau_p = -damping v - stiffness (q - springref) (passive_force; {fd}):"]
    for joint in full.joint_models:
        d = [float(full.damping_vector[i]) for i in range(joint.first, joint.last + 1)]
        k = float(full.stiffness_vector[joint.first])
        parts = ([f"damping {' '.join(f'{x:g}' for x in dict.fromkeys(d))}"] if any(d) else []) + (
            [f"stiffness {k:g}, springref {float(full.springref_vector[joint.first]):g}"] if k else [])
        if parts:
            lines.append(f"    {joint.name}: {'  '.join(parts)}")
    return lines
