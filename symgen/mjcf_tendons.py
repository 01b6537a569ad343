"""MJCF tendons (``<tendon><fixed>``, ``<tendon><spatial>``) and ``<equality><tendon>``, read from
MuJoCo's compiled arrays (``tendon_adr/num``, ``wrap_type/objid/prm``, ``tendon_armature``,
``eq_type == mjEQ_TENDON``).

What a tendon changes in MuJoCo's dynamics:

- its **armature** ``a`` enters the mass matrix as Jₜᵀ a Jₜ (``mj_fullM``, measured). A fixed
  tendon's length is L = Σ cᵢ qposᵢ, so Jₜ = (c₁ ... cₙ) is constant. A fixed tendon of ONE joint
  adds a c² to that joint's armature (``Robot.armature``: M's diagonal, in every function M
  enters, as ``dof_armature``). A fixed tendon of several joints with armature (off-diagonal
  entries of M) and a spatial tendon with armature (Jₜ depends on q) are refused in one line;
- its ``stiffness`` / ``damping`` are passive forces (``qfrc_passive``), its ``range`` a limit, an
  actuator on it a transmission: none enters M, C v + g or τ. Such tendons are left out of the
  model, named in a SymgenWarning (and in ``symgen info``'s notes);
- ``<equality tendon1 tendon2 polycoef>`` (mjEQ_TENDON) holds L₁ - L₁⁰ = a₀ + a₁ (L₂ - L₂⁰)
  (L⁰ the length at qpos0): on fixed tendons with a linear polycoef, in symgen's q = qpos - qpos0,
  the linear equation Σ c₁ᵢ qᵢ - a₁ Σ c₂ᵢ qᵢ = a₀, embedded as a coupling (reduced coordinates,
  :mod:`symgen.couplings`), one dependent joint per equation: its last joint (q order) that keeps
  the equations solvable. On a spatial tendon (a nonlinear length), inactive, or with a
  nonlinear polycoef: refused in one line.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .errors import URDFError

_JOINT_WRAP = 1          # mujoco.mjtWrap.mjWRAP_JOINT: a fixed tendon's entry (joint, coef)
EQ_TENDON = 3            # mujoco.mjtEq.mjEQ_TENDON


@dataclass(frozen=True)
class Tendon:
    """One tendon of the compiled model: ``kind`` fixed or spatial; ``coefs`` ((joint, c), ...) of a
    fixed one; ``armature``, ``stiffness``, ``damping`` its numbers."""
    name: str
    kind: str
    coefs: tuple[tuple[str, float], ...]
    armature: float
    stiffness: float
    damping: float

    def describe(self) -> str:
        if self.kind == "spatial":
            return f"tendon {self.name!r} (spatial)"
        return f"tendon {self.name!r} (fixed: " + " + ".join(f"{c:g} {j}" for j, c in self.coefs) + ")"


def tendon_name(m, t) -> str:
    import mujoco

    return mujoco.mj_id2name(m, mujoco.mjtObj.mjOBJ_TENDON, t) or f"tendon{t}"


def tendons(m) -> tuple[Tendon, ...]:
    """The model's tendons."""
    import mujoco

    out = []
    for t in range(m.ntendon):
        wraps = range(m.tendon_adr[t], m.tendon_adr[t] + m.tendon_num[t])
        fixed = all(int(m.wrap_type[w]) == _JOINT_WRAP for w in wraps)
        coefs = tuple((mujoco.mj_id2name(m, mujoco.mjtObj.mjOBJ_JOINT, int(m.wrap_objid[w])) or f"joint{int(m.wrap_objid[w])}",
                       float(m.wrap_prm[w])) for w in wraps) if fixed else ()
        out.append(Tendon(tendon_name(m, t), "fixed" if fixed else "spatial", coefs, float(m.tendon_armature[t]),
                          float(m.tendon_stiffness[t]), float(m.tendon_damping[t])))
    return tuple(out)


def records(m) -> tuple[tuple[str, str, str], ...]:
    """Per tendon (name, kind, role), the package's ``tendons``: role "armature" (its Jᵀ a J joins
    M), "coupling" (held by an ``<equality tendon>``: embedded) or "left out" (no armature: it does
    not enter M, C v + g or τ)."""
    held = {tendon_name(m, int(t)) for e in range(m.neq) if int(m.eq_type[e]) == EQ_TENDON
            for t in (m.eq_obj1id[e], m.eq_obj2id[e]) if t >= 0}
    return tuple((t.name, t.kind, "armature" if t.armature else "coupling" if t.name in held else "left out")
                 for t in tendons(m))


def tendon_armature(m, source, joint_dof) -> tuple[dict, tuple[str, ...]]:
    """The armature fixed tendons add per dof (``{dof: a c²}``) and the notes of every tendon.
    ``joint_dof``: joint name -> its dof index. Refuses (one line) what cannot be embedded."""
    import warnings

    from .errors import SymgenWarning

    added, notes, left_out = {}, [], []
    held = {tendon_name(m, int(t)) for e in range(m.neq) if int(m.eq_type[e]) == EQ_TENDON
            for t in (m.eq_obj1id[e], m.eq_obj2id[e]) if t >= 0}
    for tendon in tendons(m):
        where = f"<tendon>/<{tendon.kind} name={tendon.name!r}>"
        if tendon.armature == 0.0:
            if tendon.name not in held:             # (a held one: its equality is embedded)
                left_out.append(tendon.name)
            continue
        if tendon.kind == "spatial":
            raise URDFError(source, where, f"a spatial tendon with armature ({tendon.armature:g}) is not supported: "
                            f"its Jacobian depends on q, so its Jᵀ a J in M is not a constant")
        joints = [(j, c) for j, c in tendon.coefs if c != 0.0]
        if len({j for j, _ in joints}) > 1:
            raise URDFError(source, where, f"a fixed tendon of several joints with armature ({tendon.armature:g}) is "
                            f"not supported yet: its Jᵀ a J couples {', '.join(j for j, _ in joints)} off M's diagonal")
        if joints:
            joint, c = joints[0][0], sum(c for _, c in joints)
            dof = joint_dof[joint]
            added[dof] = added.get(dof, 0.0) + tendon.armature * c * c
            notes.append(f"{tendon.describe()}: armature {tendon.armature:g} enters M as {tendon.armature * c * c:g} "
                         f"on joint {joint!r}'s armature (Jᵀ a J)")
    if left_out:
        reason = (f"tendon(s) {', '.join(map(repr, left_out))} left out: without armature a tendon does not enter "
                  f"M, C v + g or τ (its springs, dampers, limits and actuators act through passive, constraint and "
                  f"actuator forces)")
        warnings.warn(SymgenWarning(f"{source}: <tendon>: {reason}"), stacklevel=3)
        notes.append(reason)
    return added, tuple(notes)


def tendon_constraints(m, source, by_name) -> list:
    """The :class:`symgen.couplings.Constraint` of each ``<equality><tendon>`` (q = qpos - qpos0)
    and its equality's name, in equality order. ``by_name``: the model's tendons by name."""
    import mujoco

    from .couplings import Constraint

    out = []
    for e in range(m.neq):
        if int(m.eq_type[e]) != EQ_TENDON:
            continue
        t1, t2 = int(m.eq_obj1id[e]), int(m.eq_obj2id[e])
        name = mujoco.mj_id2name(m, mujoco.mjtObj.mjOBJ_EQUALITY, e) or f"tendon_equality{e}"
        where = f"<equality>/<tendon tendon1={tendon_name(m, t1)!r}>"
        data = np.asarray(m.eq_data[e], dtype=float)
        if not m.eq_active0[e]:
            raise URDFError(source, where, "an inactive tendon equality is not supported (symgen embeds couplings for good)")
        if np.any(data[2:5]):
            raise URDFError(source, where, "only a linear polycoef (a0 a1 0 0 0) is a linear coupling that embeds")
        ends = [by_name[tendon_name(m, t1)]] + ([by_name[tendon_name(m, t2)]] if t2 >= 0 else [])
        for tendon in ends:
            if tendon.kind != "fixed":
                raise URDFError(source, where, f"{tendon.describe()} is spatial: its length is no linear function "
                                f"of the joints, so holding it is a loop closure, not supported yet")
        coeffs = list(ends[0].coefs)
        if t2 >= 0:
            coeffs += [(j, -data[1] * c) for j, c in ends[1].coefs]
        out.append(Constraint(name, "tendon", tuple(coeffs), float(data[0])))
    return out


def choose_dependent(names, constraints, fixed_dependent=()) -> list[str]:
    """One dependent joint per constraint: the joints of ``fixed_dependent`` (a joint equality's
    joint1) first, then for each tendon equality its last joint in q order (``names``) that raises
    the rank of K's dependent columns (none such: couplings.solve refuses the equations)."""
    index = {n: j for j, n in enumerate(names)}
    K = np.zeros((len(constraints), len(names)))
    for r, c in enumerate(constraints):
        for joint, coeff in c.coeffs:
            K[r, index[joint]] += coeff
    chosen = [index[d] for d in fixed_dependent]
    for r, c in enumerate(constraints):
        if c.kind != "tendon":
            continue
        for j in sorted({index[joint] for joint, coeff in c.coeffs if coeff != 0.0}, reverse=True):
            if j in chosen:
                continue
            if np.linalg.matrix_rank(K[:, chosen + [j]], 1e-9) == len(chosen) + 1:
                chosen.append(j)
                break
    return [names[j] for j in sorted(chosen)]
