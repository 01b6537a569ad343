"""MJCF ``<equality><connect body1 body2 anchor>`` as loops (issue #24): read from MuJoCo's compiled
arrays (``eq_type``, ``eq_obj1id``, ``eq_obj2id``, ``eq_data``) into the same
:class:`symgen.urdf.plus.Loop` elements as a URDF+ ``<loop>``, and closed by constraint embedding
(:mod:`symgen.loops`, :mod:`symgen.closed`).

MuJoCo's convention (``mjEQ_CONNECT``, checked on MuJoCo's compiler): ``anchor`` (``eq_data[0:3]``)
is a point in body1's frame; the compiler puts in ``eq_data[3:6]`` the same world point in body2's
frame at ``qpos0`` (the constraint holds in the configuration the model is written in). So the
loop pins body1's anchor to body2's point ``eq_data[3:6]``, both in the bodies' own frames (the
link frames of their names in symgen's model), and q = qpos - qpos0 = 0 is a closed configuration.

MJCF has no ``independent="false"``: the dependent joints (one per closed row) are chosen at
qpos0, the last joints of the loops' paths first (q order reversed), each kept when it raises the
rank of the constraint Jacobian's columns; a four-bar whose crank is its first joint keeps the
crank independent. Refused in one line each: a connect between sites, an inactive one, one to the
world, one beside joint couplings (``<equality><joint>``) or on a free-floating model, and (in
:mod:`symgen.mjcf`) ``weld``.
"""
from __future__ import annotations

import dataclasses

import numpy as np

from .errors import URDFError


def connects(m) -> list:
    """The indices of the model's connect equalities."""
    import mujoco

    return [e for e in range(m.neq) if int(m.eq_type[e]) == int(mujoco.mjtEq.mjEQ_CONNECT)]


def connect_loops(m, source) -> tuple:
    """The Loop of each ``connect`` equality of the compiled model ``m``."""
    import mujoco

    from .urdf.plus import Loop

    loops = []
    for e in connects(m):
        name = mujoco.mj_id2name(m, mujoco.mjtObj.mjOBJ_EQUALITY, e) or f"connect{e}"
        where = f"<equality>/<connect name={name!r}>"
        if int(m.eq_objtype[e]) != int(mujoco.mjtObj.mjOBJ_BODY):
            raise URDFError(source, where, "a connect between sites is not supported yet (name body1 and body2)")
        if not m.eq_active0[e]:
            raise URDFError(source, where, "an inactive connect is not supported (symgen closes loops for good)")
        body1, body2 = (mujoco.mj_id2name(m, mujoco.mjtObj.mjOBJ_BODY, int(b)) or f"body{int(b)}"
                        for b in (m.eq_obj1id[e], m.eq_obj2id[e]))
        if int(m.eq_obj2id[e]) == 0 or int(m.eq_obj1id[e]) == 0:
            raise URDFError(source, where, "a connect to the world is not supported yet (pin two moving bodies)")
        data = np.asarray(m.eq_data[e], dtype=float)
        data[np.abs(data) <= 1e-12] = 0.0          # the compiler's round-off (a few ulps): exact zeros fold out
        loops.append(Loop(name, "connect", body1, body2, (np.eye(3), tuple(data[0:3])), (np.eye(3), tuple(data[3:6])),
                          (0.0, 0.0, 1.0)))
    return tuple(loops)


def closed_mjcf(m, robot, source):
    """``robot`` (MuJoCo's tree, read by :func:`symgen.mjcf.load_mjcf`) closed by its connect
    equalities: a :class:`symgen.closed.Closed`."""
    from .closed import Closed
    from .loops import _RANK_TOL, closed_system, closure_jacobian, closures_of

    loops = connect_loops(m, source)

    def error(element, reason):
        return URDFError(source, element.replace("<loop ", "<equality>/<connect "), reason)

    closures = closures_of(robot, loops, error)
    K = closure_jacobian(robot, closures, np.zeros(robot.nq))          # at qpos0 (q = qpos - qpos0 = 0)
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
    names = [robot.joint_names[j] for j in sorted(dependent)]
    speeds = ", ".join(repr(j) for j in robot.joint_names if j not in names)
    notes = tuple(f"connect {loop.name!r} ({loop.predecessor!r} to {loop.successor!r}): closed by embedding; q holds "
                  f"the spanning tree's coordinates, v the speeds of {speeds} (dependent: {', '.join(names)})"
                  for loop in loops)
    robot = dataclasses.replace(robot, notes=robot.notes + notes)
    return Closed(closed_system(robot, loops, names, error, closures))
