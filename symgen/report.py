"""Human-readable summaries of a robot model (``symgen info``)."""
from __future__ import annotations


def describe(robot) -> str:
    lines = [
        f"robot {robot.name!r}" + (f" from {robot.source}" if robot.source else ""),
        f"  root link: {robot.root_link}" + (f"  (floating base: free-flyer {robot.joint_names[0]!r} to "
                                             f"{robot.link_names[0]!r})" if robot.floating_base else ""),
        f"  DoF: {robot.n} (nq {robot.nq}, nv {robot.nv})   depth d: {robot.depth}",
        "  joints in q order:",
    ]
    width = max((len(b.joint_name) for b in robot.bodies), default=0)
    if robot.floating_base:
        lines.append(f"    q[0:7] {robot.joint_names[0]:<{width}}  free-flyer: position x y z, quaternion x y z w; "
                     f"v[0:6]: linear, angular velocity in the base frame; {robot.root_link} -> "
                     f"{robot.link_names[0]}  mass {robot.bodies[robot.free - 1].inertia.mass:g}")
    labels = _coordinates(robot)
    for i, b in enumerate(robot.bodies):
        if robot.is_free(i):
            continue
        if getattr(b, "group", ""):                     # a joint with several velocities: one line
            joint = robot.joint_of[i]
            if joint.first == i:
                parent = robot.bodies[b.parent].name if b.parent >= 0 else robot.root_link
                last = robot.bodies[joint.last]
                lines.append(f"    q[{joint.idx_q}:{joint.idx_q + joint.nq}] {b.joint_name:<{width}}  {_GROUPS[joint.kind]}; "
                             f"v[{joint.idx_v}:{joint.idx_v + joint.nv}]  {parent} -> {last.name}  "
                             f"mass {last.inertia.mass:g}" + (f"  armature {robot.armature[i]:g}"
                                                              if robot.armature and robot.armature[i] else ""))
            continue
        parent = robot.bodies[b.parent].name if b.parent >= 0 else robot.root_link
        axis = " ".join(f"{a:g}" for a in b.axis)
        armature = robot.armature
        lines.append(f"    {labels[i]} {b.joint_name:<{width}}  {b.joint_type:<10} axis ({axis})  "
                     f"{parent} -> {b.name}  mass {b.inertia.mass:g}"
                     + (f"  armature {armature[i]:g}" if armature and armature[i] else ""))
    lines += _trees(robot)
    if robot.tendons:                                    # MJCF tendons (symgen.mjcf_tendons.records)
        lines.append(f"  tendons: {len(robot.tendons)}")
        lines += [f"    {name}  {kind}  {role}" for name, kind, role in robot.tendons]
    from .passive import describe as passive_lines

    lines += passive_lines(robot)                        # dampers and springs (symgen.passive)
    lines.append(f"  lumped by fixed joints: {len(robot.lumped)}")
    lines += [f"    {item}" for item in robot.lumped]
    lines.append(f"  snapped to exact values: {len(robot.snapped)}")
    lines += [f"    {item}" for item in robot.snapped]
    lines += [f"  note: {item}" for item in robot.notes]
    full = robot.full
    if full.axisymmetric:                               # symgen.axisymmetric
        lines.append(f"  axisymmetric leaf rotors (their angle leaves M, C, tau, FD): {len(full.axisymmetric)}: "
                     + ", ".join(full.bodies[i].name for i in full.axisymmetric))
    return "\n".join(lines)


def _trees(robot) -> list[str]:
    """The moving trees (symgen.scenes), one line each: root body, its joint, nv and its slice of v
    (the full model's velocities with --mimic, couplings or loops)."""
    from .scenes import trees_of

    trees = trees_of(robot)
    own = robot.embedding is None and robot.system is None
    lines = [f"  moving trees: {len(trees)}" + ("  (M block-diagonal by tree)" if len(trees) > 1 else "")]
    width = max((len(t.root) for t in trees), default=0)
    for t in trees:
        whole = own and t.bodies == tuple(range(t.bodies[0], t.bodies[-1] + 1))
        lines.append(f"    {t.root:<{width}}  {t.kind:<9} nv {t.nv}"
                     + (f"  v[{t.bodies[0]}:{t.bodies[-1] + 1}]" if whole else ""))
    return lines


_GROUPS = {"freeflyer": "free-flyer: position x y z, quaternion x y z w, velocities in its frame",
           "spherical": "spherical: quaternion x y z w; angular velocity in its frame",
           "planar": "planar: x y cos sin; vx vy w in its frame"}


def _coordinates(robot) -> list[str]:
    """Per body, its joint's coordinate: ``q[i]``, or with --mimic for a mimicking joint the
    relation embedded, ``= -1 q[3] + 0.01`` (composed down to an independent joint)."""
    emb = robot.embedding
    if emb is None:
        return [f"q[{k}]" if k is not None else "" for k in robot.q_index]
    labels = [""] * emb.lead_v                           # the free-flyer: described on its own line
    labels += [emb.label(j) for j in range(len(emb.names))]
    width = max(len(x) for x in labels)
    return [x.ljust(width) for x in labels]
