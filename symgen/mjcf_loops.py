"""MJCF ``<equality><connect>`` and ``<weld>`` as loops (issue #24): read from MuJoCo's compiled
arrays (``eq_type``, ``eq_obj1id``, ``eq_obj2id``, ``eq_data``) into the same
:class:`symgen.urdf.plus.Loop` elements as a URDF+ ``<loop>``, and closed by constraint embedding
(:mod:`symgen.loops`, :mod:`symgen.closed`), on a fixed base or a free-flyer.

MuJoCo's conventions (checked on its compiler and on ``mj_instantiateEquality``'s ``efc_pos``):

- ``connect`` (``mjEQ_CONNECT``): ``anchor`` (``eq_data[0:3]``) is a point in body1's frame; the
  compiler puts in ``eq_data[3:6]`` the same world point in body2's frame at ``qpos0`` (the
  constraint holds in the configuration the model is written in). The loop pins body1's anchor
  to body2's point ``eq_data[3:6]``: translation rows.
- ``weld`` (``mjEQ_WELD``): ``eq_data[0:3]`` is ``anchor``, a point of body2; ``eq_data[3:6]`` the
  point of body1 held on it and ``eq_data[6:10]`` the relative turn (w x y z) by which body1's frame,
  turned, coincides with body2's (``relpose``; computed by the compiler from ``qpos0`` when it is not
  given); ``eq_data[10]`` torquescale, the weight of MuJoCo's soft rotation rows
  (vec(q₂⁻¹ q₁ q_rel) · torquescale). The loop holds the points together and R₁ R_rel = R₂:
  translation and rotation rows (a planar weld keeps 3 of the 6). A torquescale of 0 holds no
  rotation: read as a connect.

Both bodies' points and frames are in the bodies' own frames (the link frames of their names in
symgen's model), and q = qpos - qpos0 = 0 is a closed configuration unless ``relpose`` is given
inconsistent with ``qpos0`` (``solve_loops`` closes it then).

MJCF has no ``independent="false"``: the dependent joints (one per closed row) are chosen at
qpos0, the last joints of the loops' paths first (q order reversed), each kept when it raises the
rank of the constraint Jacobian's columns; a four-bar whose crank is its first joint keeps the
crank independent. Refused in one line each: a connect or weld between sites, an inactive one,
one to the world, and (in :mod:`symgen.mjcf`) one beside joint couplings (``<equality><joint>``).
"""
from __future__ import annotations

import dataclasses

import numpy as np

from .errors import URDFError


#: the equality kinds read as loops
KINDS = ("connect", "weld")


def _kind(m, e) -> str:
    import mujoco

    return mujoco.mjtEq(int(m.eq_type[e])).name.removeprefix("mjEQ_").lower()


def connects(m) -> list:
    """The indices of the model's connect and weld equalities (the loops)."""
    return [e for e in range(m.neq) if _kind(m, e) in KINDS]


def connect_loops(m, source) -> tuple:
    """The Loop of each ``connect`` and ``weld`` equality of the compiled model ``m``."""
    import mujoco

    from .mjcf_convert import quaternion_matrix
    from .model import snap_unit
    from .urdf.plus import Loop

    loops = []
    for e in connects(m):
        kind = _kind(m, e)
        name = mujoco.mj_id2name(m, mujoco.mjtObj.mjOBJ_EQUALITY, e) or f"{kind}{e}"
        where = f"<equality>/<{kind} name={name!r}>"
        if int(m.eq_objtype[e]) != int(mujoco.mjtObj.mjOBJ_BODY):
            raise URDFError(source, where, f"a {kind} between sites is not supported yet (name body1 and body2)")
        if not m.eq_active0[e]:
            raise URDFError(source, where, f"an inactive {kind} is not supported (symgen closes loops for good)")
        body1, body2 = (mujoco.mj_id2name(m, mujoco.mjtObj.mjOBJ_BODY, int(b)) or f"body{int(b)}"
                        for b in (m.eq_obj1id[e], m.eq_obj2id[e]))
        data = np.asarray(m.eq_data[e], dtype=float)
        data[np.abs(data) <= 1e-12] = 0.0          # the compiler's round-off (a few ulps): exact zeros fold out
        if kind == "connect":
            loops.append(Loop(name, "connect", body1, body2, (np.eye(3), tuple(data[0:3])),
                              (np.eye(3), tuple(data[3:6])), (0.0, 0.0, 1.0)))
            continue
        # weld (mj_instantiateEquality): body1's point eq_data[3:6] on body2's anchor eq_data[0:3], and
        # body1's frame turned by relpose (eq_data[6:10], w x y z) on body2's; torquescale (eq_data[10])
        # only weighs MuJoCo's soft rotation rows, unless it is 0: then no rotation is held (a connect)
        welded = "weld" if data[10] != 0 else "connect"
        loops.append(Loop(name, welded, body1, body2, (snap_unit(quaternion_matrix(np.roll(data[6:10], -1))), tuple(data[3:6])),
                          (np.eye(3), tuple(data[0:3])), (0.0, 0.0, 1.0)))
    return tuple(loops)


def closed_mjcf(m, robot, source):
    """``robot`` (MuJoCo's tree, read by :func:`symgen.mjcf.load_mjcf`) closed by its connect
    equalities: a :class:`symgen.closed.Closed`."""
    from .closed import Closed
    from .loops import _RANK_TOL, closed_system, closure_jacobian, closures_of

    loops = connect_loops(m, source)
    kinds = {loop.name: _kind(m, e) for loop, e in zip(loops, connects(m))}

    def error(element, reason):
        for name, kind in kinds.items():
            element = element.replace(f"<loop name={name!r}>", f"<equality>/<{kind} name={name!r}>")
        return URDFError(source, element, reason)

    closures = closures_of(robot, loops, error)
    q0 = np.zeros(robot.nq)                                     # qpos0 (q = qpos - qpos0 = 0); a free-flyer's
    if robot.floating_base:                                     # pose at the origin (the loops do not see it)
        q0[6] = 1.0
    K = closure_jacobian(robot, closures, q0)
    tol = _RANK_TOL * max(1.0, float(np.abs(K).max()))
    on_paths = sorted({j for c in closures for j in c.pred_path + c.succ_path}, reverse=True)
    dependent = []
    for j in on_paths:
        if len(dependent) == K.shape[0]:
            break
        if np.linalg.matrix_rank(K[:, dependent + [j]], tol) == len(dependent) + 1:
            dependent.append(j)
    if len(dependent) < K.shape[0]:
        raise error(f"<loop name={loops[0].name!r}>", f"its joints cannot fix the {K.shape[0]} closed rows at qpos0 "
                    f"(the constraint Jacobian has rank {np.linalg.matrix_rank(K, tol)})")
    if len(dependent) == robot.n:
        raise error(f"<loop name={loops[0].name!r}>", f"its {K.shape[0]} closed rows lock every joint: the mechanism "
                    f"has no degree of freedom left")
    names = [robot.bodies[j].joint_name for j in sorted(dependent)]
    speeds = ", ".join(repr(j) for j in robot.joint_names if j not in names)
    notes = tuple(f"{kinds[loop.name]} {loop.name!r} ({loop.predecessor!r} to {loop.successor!r}): closed by "
                  f"embedding ({len(c.P)} rows); q holds "
                  f"the spanning tree's coordinates, v the speeds of {speeds} (dependent: {', '.join(names)})"
                  for loop, c in zip(loops, closures))
    robot = dataclasses.replace(robot, notes=robot.notes + notes)
    return Closed(closed_system(robot, loops, names, error, closures, nominal=(q0,)))
