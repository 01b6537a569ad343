"""MJCF's passive joint forces (:mod:`symgen.passive`), read from MuJoCo's compiled arrays.

MuJoCo's ``mj_passive`` adds to ``qfrc_passive``, per dof and joint:

- the damper -dof_damping * qvel (``<joint damping>``), and, for an actuator on a joint (its
  transmission a joint, gear g), its ``damping`` d as -d g² qvel (measured): ``Robot.damping``.
  On a free joint qvel's linear part is the world-frame velocity; with the same damping b on its
  three linear dofs (MJCF gives a joint one number) the force in symgen's base-frame speeds is
  Rᵀ(-b R v) = -b v, the same diagonal;
- the spring -jnt_stiffness * (qpos - qpos_spring) of a hinge or slide (``stiffness``,
  ``springref``): ``Robot.stiffness`` and ``Robot.springref`` = qpos_spring - qpos0, symgen's q
  being qpos - qpos0.

``<flag spring="disable">`` / ``<flag damper="disable">`` turn them off (the model has none then).
Refused in one line (URDFError naming the element): the nonlinear dampers and springs
(``damping`` or ``stiffness`` with more than one coefficient, MuJoCo's ``dof_dampingpoly`` and
``jnt_stiffnesspoly``, and ``springyield``), a spring on a ball or free joint (MuJoCo's
quaternion spring is no linear function of q), unequal damping of a free joint's linear dofs, and
actuator damping on a ball or free joint or with a nonlinear polynomial. Left out with a note (and
a SymgenWarning): tendon springs and dampers, fluid forces (``<option density viscosity>``),
actuator damping through other transmissions (tendons, sites) — MuJoCo adds them to
qfrc_passive, symgen's ``passive_force`` and forward dynamics do not — and joint ``frictionloss``
(a constraint in MuJoCo, not a passive force).
"""
from __future__ import annotations

import warnings

import numpy as np

from .errors import SymgenWarning, URDFError

_FREE, _BALL = 0, 1
_TRN_JOINT = 0                   # mujoco.mjtTrn.mjTRN_JOINT


def read_passive(m, source, name_of) -> tuple[dict, tuple[str, ...]]:
    """(``{"damping", "stiffness", "springref"}``: per velocity, in MuJoCo's dof order, which is
    symgen's v; empty tuples when none) and the notes, for the compiled model ``m``; ``name_of(j)``:
    joint j's name. Refuses (URDFError) what is not modelled."""
    import mujoco

    bits = mujoco.mjtDisableBit
    springs = not m.opt.disableflags & bits.mjDSBL_SPRING
    dampers = not m.opt.disableflags & bits.mjDSBL_DAMPER
    notes, left_out, warn, friction = [], [], [], []    # left out: in the notes; warn: also in a SymgenWarning
    damping = np.array(m.dof_damping, dtype=float) if dampers else np.zeros(m.nv)
    stiffness, springref = np.zeros(m.nv), np.zeros(m.nv)
    for j in range(m.njnt):
        where = f"<joint name={name_of(j)!r}>"
        dof, adr, kind = int(m.jnt_dofadr[j]), int(m.jnt_qposadr[j]), int(m.jnt_type[j])
        ndof = {_FREE: 6, _BALL: 3}.get(kind, 1)
        if dampers and np.any(m.dof_dampingpoly[dof:dof + ndof]):
            _refuse(source, where, "a nonlinear damper (damping with more than one coefficient, MuJoCo's "
                                   "dof_dampingpoly) is not supported: only linear damping")
        if springs and (np.any(m.jnt_stiffnesspoly[j]) or m.jnt_springyield[j] and m.jnt_stiffness[j]):
            _refuse(source, where, "a nonlinear spring (stiffness with more than one coefficient, jnt_stiffnesspoly, "
                                   "or a springyield) is not supported: only a linear stiffness")
        k = float(m.jnt_stiffness[j]) if springs else 0.0
        if k and kind in (_FREE, _BALL):
            _refuse(source, where, f"stiffness {k:g} on a {'free' if kind == _FREE else 'ball'} joint is not "
                                   f"supported: MuJoCo's quaternion spring is no linear function of q")
        if k:
            stiffness[dof] = k
            springref[dof] = float(m.qpos_spring[adr]) - float(m.qpos0[adr])
        if kind == _FREE and len(set(damping[dof:dof + 3])) > 1:
            _refuse(source, where, "a free joint whose linear dofs have unequal damping is not supported (its "
                                   "world-frame damper is then no diagonal in the base frame)")
        if np.any(m.dof_frictionloss[dof:dof + ndof]):
            friction.append(name_of(j))
    for a in range(m.nu):
        d = float(m.actuator_damping[a]) if dampers else 0.0
        name = mujoco.mj_id2name(m, mujoco.mjtObj.mjOBJ_ACTUATOR, a) or f"actuator{a}"
        where = f"<actuator>/<{name}>"
        if dampers and np.any(m.actuator_dampingpoly[a]):
            _refuse(source, where, "a nonlinear actuator damper (damping with more than one coefficient, "
                                   "actuator_dampingpoly) is not supported")
        if not d:
            continue
        if int(m.actuator_trntype[a]) != _TRN_JOINT:
            warn.append(f"actuator {name!r}: damping {d:g} (its transmission is not a joint)")
            continue
        j = int(m.actuator_trnid[a, 0])
        if int(m.jnt_type[j]) in (_FREE, _BALL):
            _refuse(source, where, f"damping {d:g} of an actuator on the ball or free joint {name_of(j)!r} is not "
                                   f"supported")
        g = float(m.actuator_gear[a, 0])
        damping[int(m.jnt_dofadr[j])] += d * g * g
        notes.append(f"actuator {name!r}: damping {d:g} enters the damping of joint {name_of(j)!r} as "
                     f"{d * g * g:g} (d gear², as mj_passive)")
    for t in range(m.ntendon):
        k = float(m.tendon_stiffness[t]) if springs else 0.0
        b = float(m.tendon_damping[t]) if dampers else 0.0
        if k or b:                              # (one without armature is named in the tendons' warning)
            name = mujoco.mj_id2name(m, mujoco.mjtObj.mjOBJ_TENDON, t) or f"tendon{t}"
            (warn if m.tendon_armature[t] else left_out).append(f"tendon {name!r}: " + " and ".join(
                x for x in (f"stiffness {k:g}" * bool(k), f"damping {b:g}" * bool(b)) if x))
    if m.opt.density or m.opt.viscosity:
        warn.append(f"fluid forces (<option density={m.opt.density:g} viscosity={m.opt.viscosity:g}>)")
    if not springs and np.any(m.jnt_stiffness):
        notes.append('joint springs off (<flag spring="disable">): no stiffness read')
    if not dampers and (np.any(m.dof_damping) or np.any(m.actuator_damping)):
        notes.append('joint dampers off (<flag damper="disable">): no damping read')
    if friction:
        notes.append(f"frictionloss of joint(s) {', '.join(map(repr, friction))} left out: a constraint in MuJoCo "
                     f"(as limits and contacts are), not a passive force")
    if warn:
        warnings.warn(SymgenWarning(f"{source}: left out of passive_force and forward dynamics (MuJoCo applies "
                                    f"them): {'; '.join(warn)}"), stacklevel=3)
    if warn or left_out:
        notes.append("left out of passive_force and forward dynamics (MuJoCo applies them): " + "; ".join(warn + left_out))
    values = {"damping": damping, "stiffness": stiffness, "springref": springref}
    out = {key: tuple(float(x) + 0.0 for x in v) if np.any(values["damping" if key == "damping" else "stiffness"])
           else () for key, v in values.items()}
    return out, tuple(notes)


def _refuse(source, element, reason):
    raise URDFError(source, element, reason)
