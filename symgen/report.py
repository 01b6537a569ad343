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
    for i, b in enumerate(robot.bodies):
        if robot.is_free(i):
            continue
        parent = robot.bodies[b.parent].name if b.parent >= 0 else robot.root_link
        axis = " ".join(f"{a:g}" for a in b.axis)
        lines.append(f"    q[{robot.q_index[i]}] {b.joint_name:<{width}}  {b.joint_type:<10} axis ({axis})  "
                     f"{parent} -> {b.name}  mass {b.inertia.mass:g}")
    lines.append(f"  lumped by fixed joints: {len(robot.lumped)}")
    lines += [f"    {item}" for item in robot.lumped]
    lines.append(f"  snapped to exact values: {len(robot.snapped)}")
    lines += [f"    {item}" for item in robot.snapped]
    lines += [f"  note: {item}" for item in robot.notes]
    return "\n".join(lines)
