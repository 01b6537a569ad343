"""jaxsim (JAX rigid-body dynamics, ``pip install jaxsim``) as a rival of the JAX target, beside
adam-robotics in :mod:`symgen.bench.jax_batch` (``--jaxsim``).

jaxsim reads URDF only through Gazebo's ``gz sdf`` converter (not on PyPI), so the robot is handed
to it as SDF written from symgen's own model (:func:`sdf_of`): a link per body at its frame for
q = 0, the joint frame at the child link's origin, the axis in it, the inertia about the centre of
mass in body axes; a fixed base is a fixed joint to ``world``, a floating base (the free-flyer's six
massless bodies) a free root link. jaxsim's velocities are taken in its BODY representation, the
base's linear and angular velocity in the base frame as Pinocchio's and symgen's are, so its mass
matrix, inverse and forward dynamics equal the package's; :func:`check` asserts that before any
timing (jaxsim's default MIXED representation is another choice of speeds).
"""
from __future__ import annotations

import numpy as np

from ..model import FREE_DOFS, Inertia

#: the functions timed beside the package's, and what jaxsim computes for each
FUNCTIONS = ("mass_matrix", "inverse_dynamics", "forward_dynamics")


def _pose(R: np.ndarray, p: np.ndarray) -> str:
    """An SDF pose (x y z roll pitch yaw) of the rotation R and position p."""
    pitch = np.arcsin(-np.clip(R[2, 0], -1.0, 1.0))
    if abs(np.cos(pitch)) > 1e-12:
        roll, yaw = np.arctan2(R[2, 1], R[2, 2]), np.arctan2(R[1, 0], R[0, 0])
    else:                                                  # gimbal lock: yaw carries the rest
        roll, yaw = 0.0, np.arctan2(-R[0, 1], R[1, 1])
    return " ".join(repr(float(x)) for x in (*p, roll, pitch, yaw))


def sdf_of(robot) -> str:
    """The SDF 1.7 text of ``robot``'s bodies (single-DoF joints; a floating base's free-flyer
    becomes a free root link)."""
    first = robot.free - 1 if robot.floating_base else 0     # the free-flyer's last body is the base link
    if any(b.group for b in robot.bodies[robot.free:]):
        raise ValueError(f"{robot.name}: jaxsim's model here takes single-DoF joints only")
    place, links, joints = {}, [], []

    def link(name, R, p, inertia):
        I = np.array(inertia.I_com)
        terms = "".join(f"<{k}>{float(I[r, c])!r}</{k}>" for k, r, c in
                        (("ixx", 0, 0), ("ixy", 0, 1), ("ixz", 0, 2), ("iyy", 1, 1), ("iyz", 1, 2), ("izz", 2, 2)))
        links.append(f'<link name="{name}"><pose relative_to="__model__">{_pose(R, p)}</pose>'
                     f'<inertial><pose>{_pose(np.eye(3), np.array(inertia.com))}</pose>'
                     f"<mass>{max(inertia.mass, 1e-9)!r}</mass><inertia>{terms}</inertia></inertial></link>")

    if not robot.floating_base:                      # the fixed root link, welded to the world
        root = robot.root_link
        link(root, np.eye(3), np.zeros(3), Inertia.zero())
        joints.append(f'<joint name="world_to_{root}" type="fixed"><parent>world</parent><child>{root}</child></joint>')
    for i, b in enumerate(robot.bodies[first:], start=first):
        up = b.parent >= first and i > first
        R_up, p_up = place[b.parent] if up else (np.eye(3), np.zeros(3))
        place[i] = (R_up @ np.array(b.rotation), R_up @ np.array(b.translation) + p_up) if up or not robot.floating_base \
            else (np.eye(3), np.zeros(3))
        link(b.name, *place[i], b.inertia)
        if robot.floating_base and not up:
            continue                                 # the free base link: no joint
        kind = {"continuous": "revolute", "revolute": "revolute", "prismatic": "prismatic"}[b.joint_type]
        axis = " ".join(repr(float(a)) for a in b.axis)
        parent = robot.bodies[b.parent].name if up else robot.root_link
        joints.append(f'<joint name="{b.joint_name}" type="{kind}"><parent>{parent}</parent><child>{b.name}</child>'
                      f"<axis><xyz>{axis}</xyz><limit><lower>-1e16</lower><upper>1e16</upper></limit></axis></joint>")
    return ('<?xml version="1.0"?><sdf version="1.7"><model name="' + robot.name + '">' + "".join(links)
            + "".join(joints) + "</model></sdf>")


def functions(robot) -> dict:
    """jaxsim's mass matrix, inverse and forward dynamics of ``robot``, in the package's arguments
    (q with Pinocchio's free-flyer layout, v in the base frame), each ``jax.jit(jax.vmap(...))``."""
    import jax
    import jax.numpy as jnp
    import jaxsim.api as js
    from jaxsim import VelRepr

    g = -float(robot.gravity[2]) if robot.gravity else 9.81
    if robot.gravity and (robot.gravity[0] or robot.gravity[1]):
        raise ValueError(f"{robot.name}: jaxsim's gravity is along -z only")
    model = js.model.JaxSimModel.build_from_model_description(model_description=sdf_of(robot), gravity=g)
    ours = [b.joint_name for b in robot.bodies[robot.free:]]        # single-DoF joints, in v order
    order = np.array([list(model.joint_names()).index(name) for name in ours])   # theirs of each of ours
    back = np.argsort(order)
    floating = robot.floating_base
    nb = FREE_DOFS if floating else 0

    def data(q, v):
        kw = dict(joint_positions=q[7:][back] if floating else q[back],
                  joint_velocities=v[nb:][back], velocity_representation=VelRepr.Body)
        if floating:
            kw.update(base_position=q[:3], base_quaternion=jnp.array([q[6], q[3], q[4], q[5]]),
                      base_linear_velocity=v[:3], base_angular_velocity=v[3:6])
        return js.data.JaxSimModelData.build(model=model, **kw)

    def permute(M):
        idx = np.concatenate([np.arange(6), 6 + order]) if floating else order
        full = M if floating else M[6:, 6:]
        return full[jnp.ix_(idx, idx)]

    def mass_matrix(q):
        return permute(js.model.free_floating_mass_matrix(model, data(q, jnp.zeros(robot.nv))))

    def inverse_dynamics(q, v, a):
        f, tau = js.model.inverse_dynamics(model, data(q, v), joint_accelerations=a[nb:][back],
                                           base_acceleration=a[:6] if floating else jnp.zeros(6))
        return jnp.concatenate([f, tau[order]]) if floating else tau[order]

    def forward_dynamics(q, v, tau):          # (jaxsim's takes joint forces: no force on a free base)
        base, qdd = js.model.forward_dynamics_aba(model, data(q, v), joint_forces=tau[nb:][back])
        if floating:
            return jnp.concatenate([base, qdd[order]])
        return qdd[order]

    return {name: jax.jit(jax.vmap(fn)) for name, fn in (("mass_matrix", mass_matrix),
                                                       ("inverse_dynamics", inverse_dynamics),
                                                       ("forward_dynamics", forward_dynamics))}


def check(fns: dict, robot, tol: float = 1e-9, seed: int = 0) -> dict:
    """The worst relative error of each jaxsim function against symgen's numeric reference at a few
    random states (an AssertionError above ``tol``: the rival computes something else)."""
    from .. import quantities as Q

    rng = np.random.default_rng(seed)
    states = [Q.random_state(rng, robot.nq, robot.nv) for _ in range(3)]
    for s in states:
        s["tau"][:FREE_DOFS if robot.floating_base else 0] = 0.0     # jaxsim's FD: no force on a free base
    calls = {"mass_matrix": ("M", ("q",)), "inverse_dynamics": ("tau", ("q", "qd", "qdd")),
             "forward_dynamics": ("qdd", ("q", "qd", "tau"))}
    worst = {}
    for name, fn in fns.items():
        key, inputs = calls[name]
        got = np.asarray(fn(*(np.array([s[k] for s in states]) for k in inputs)))
        want = np.array([Q.evaluate(robot, key, {k: s[k] for k in inputs}) for s in states])
        worst[name] = float(np.abs(got - want).max() / max(1.0, np.abs(want).max()))
        assert worst[name] <= tol, f"jaxsim's {name} of {robot.name} is off symgen's by {worst[name]:.2e} (seed {seed})"
    return worst
