"""The paper's synthetic systems, seeded and reproducible (Section 5, Figs. 2-4, Table 1).

    serial     spatial serial chain, random axes, offsets and inertias
    planar     planar serial chain: revolute about z, links along x
    tree       binary tree: body i's parent is i // 2 (1-based numbering)
    biped      floating torso + 2 serial legs (N actuated joints split between the legs)
    quadruped  floating torso + 4 serial legs

Each is a :class:`~symgen.model.Robot`; ``symgen model KIND N -o FILE`` writes it as URDF.
"""
from __future__ import annotations

import numpy as np

from .errors import OptionError
from .model import IDENTITY, Body, Inertia, Robot, free_flyer_bodies
from .spatial import rpy_matrix

KINDS = ("serial", "planar", "tree", "biped", "quadruped")


def random_inertia(rng: np.random.Generator, scale: float = 1.0) -> Inertia:
    """A physically valid random body: mass in [0.5, 2] kg, CoM within 0.1 m of the origin,
    principal moments from positive second moments (so the triangle inequality holds)."""
    m = rng.uniform(0.5, 2.0)
    second = rng.uniform(0.002, 0.02, size=3) * scale**2          # sum of m x_a^2 per axis / m
    J = np.diag([second[1] + second[2], second[0] + second[2], second[0] + second[1]]) * m
    R = rpy_matrix(rng.uniform(-np.pi, np.pi, size=3))
    return Inertia(m, tuple(rng.uniform(-0.1, 0.1, size=3) * scale), _mat(R @ J @ R.T))


def random_axis(rng: np.random.Generator) -> tuple[float, float, float]:
    a = rng.normal(size=3)
    return tuple(a / np.linalg.norm(a))


def _random_body(rng, name, parent, joint_type="revolute") -> Body:
    return Body(name=name, joint_name=f"{name}_joint", joint_type=joint_type,
                axis=random_axis(rng), parent=parent,
                rotation=_mat(rpy_matrix(rng.uniform(-np.pi, np.pi, size=3))),
                translation=tuple(rng.uniform(-0.3, 0.3, size=3)), inertia=random_inertia(rng))


def serial_chain(n: int, seed: int = 0) -> Robot:
    rng = np.random.default_rng(seed)
    bodies = [_random_body(rng, f"link{i + 1}", i - 1) for i in range(n)]
    return Robot(name=f"serial{n}", bodies=tuple(bodies))


def planar_chain(n: int, seed: int = 0) -> Robot:
    rng = np.random.default_rng(seed)
    bodies = []
    for i in range(n):
        m = rng.uniform(0.5, 2.0)
        length = rng.uniform(0.2, 0.5)
        Izz = m * length**2 / 12
        bodies.append(Body(
            name=f"link{i + 1}", joint_name=f"link{i + 1}_joint", joint_type="revolute",
            axis=(0.0, 0.0, 1.0), parent=i - 1, rotation=IDENTITY,
            translation=(0.0, 0.0, 0.0) if i == 0 else (bodies[-1].inertia.com[0] * 2, 0.0, 0.0),
            inertia=Inertia(m, (length / 2, 0.0, 0.0), ((Izz / 10, 0.0, 0.0), (0.0, Izz, 0.0), (0.0, 0.0, Izz))),
        ))
    return Robot(name=f"planar{n}", bodies=tuple(bodies))


def binary_tree(n: int, seed: int = 0) -> Robot:
    rng = np.random.default_rng(seed)
    # paper numbering: body i (1..n) has parent i // 2; shifted to 0-based indices
    bodies = [_random_body(rng, f"link{i + 1}", (i + 1) // 2 - 1) for i in range(n)]
    return Robot(name=f"tree{n}", bodies=tuple(bodies))


def legged(n_legs: int, n_actuated: int, seed: int = 0) -> Robot:
    """A floating torso with ``n_legs`` serial legs sharing ``n_actuated`` revolute joints
    (the first legs get one more joint when the split is uneven)."""
    if n_actuated < n_legs:
        raise OptionError(f"a robot with {n_legs} legs needs at least {n_legs} actuated joints, got {n_actuated}")
    rng = np.random.default_rng(seed)
    bodies = free_flyer_bodies("torso", random_inertia(rng, scale=3.0))
    torso = len(bodies) - 1
    for leg in range(n_legs):
        parent = torso
        for seg in range(n_actuated // n_legs + (leg < n_actuated % n_legs)):
            bodies.append(_random_body(rng, f"leg{leg + 1}_link{seg + 1}", parent))
            parent = len(bodies) - 1
    name = {2: "biped", 4: "quadruped"}.get(n_legs, f"legged{n_legs}")
    return Robot(name=f"{name}{n_actuated}", bodies=tuple(bodies), root_link="world", floating_base=True)


def make(kind: str, n: int, seed: int = 0) -> Robot:
    """The synthetic system ``kind`` (one of KINDS) with n bodies (actuated joints for legged)."""
    if n < 1:
        raise OptionError(f"the number of bodies must be at least 1, got {n}")
    builders = {
        "serial": serial_chain, "planar": planar_chain, "tree": binary_tree,
        "biped": lambda n, seed: legged(2, n, seed), "quadruped": lambda n, seed: legged(4, n, seed),
    }
    if kind not in builders:
        raise OptionError(f"unknown robot kind {kind!r}; expected one of {', '.join(KINDS)}")
    return builders[kind](n, seed)


def _mat(a):
    return tuple(tuple(float(x) for x in row) for row in a)
