"""Human-readable summaries of a robot model (``symgen info``)."""
from __future__ import annotations


def describe(robot) -> str:
    lines = [
        f"robot {robot.name!r}" + (f" from {robot.source}" if robot.source else ""),
        f"  root link: {robot.root_link}" + ("  (floating base: 6 virtual joints)" if robot.floating_base else ""),
        f"  DoF: {robot.n}   depth d: {robot.depth}",
        "  joints in q order:",
    ]
    width = max((len(b.joint_name) for b in robot.bodies), default=0)
    labels = _coordinates(robot)
    for i, b in enumerate(robot.bodies):
        parent = robot.bodies[b.parent].name if b.parent >= 0 else robot.root_link
        axis = " ".join(f"{a:g}" for a in b.axis)
        lines.append(f"    {labels[i]} {b.joint_name:<{width}}  {b.joint_type:<10} axis ({axis})  "
                     f"{parent} -> {b.name}  mass {b.inertia.mass:g}")
    lines.append(f"  lumped by fixed joints: {len(robot.lumped)}")
    lines += [f"    {item}" for item in robot.lumped]
    lines.append(f"  snapped to exact values: {len(robot.snapped)}")
    lines += [f"    {item}" for item in robot.snapped]
    lines += [f"  note: {item}" for item in robot.notes]
    return "\n".join(lines)


def _coordinates(robot) -> list[str]:
    """Per body, its joint's coordinate: ``q[i]``, or with --mimic for a mimicking joint the
    relation embedded, ``= -1 q[3] + 0.01`` (composed down to an independent joint)."""
    emb = getattr(robot, "embedding", None)
    if emb is None:
        return [f"q[{i}]" for i in range(len(robot.bodies))]
    own = set(emb.independent)
    labels = []
    for j, (r, m, o) in enumerate(emb.source):
        labels.append(f"q[{emb.lead_q + r}]" if j in own else f"= {m:g} q[{emb.lead_q + r}] {'-' if o < 0 else '+'} {abs(o):g}")
    width = max(len(x) for x in labels)
    return [x.ljust(width) for x in labels]
