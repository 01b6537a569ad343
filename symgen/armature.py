"""The armature (reflected rotor inertia) of ``symgen build --armature``."""
from __future__ import annotations

import dataclasses

from .errors import OptionError
from .model import Robot


def with_armature(robot: Robot, text: str) -> Robot:
    """``robot`` with the armature of ``symgen build --armature``: one number for every joint but
    a free-flyer (a root has no rotor), or ``joint=value,...`` by joint name (a free-flyer's name
    sets its six velocities); the others keep theirs. An OptionError names what is wrong."""
    if robot.embedding is not None:
        raise OptionError("--armature: not supported with --mimic yet")
    if robot.system is not None:
        raise OptionError("--armature: not supported on a mechanism with loops yet")
    values = list(robot.armature_vector)

    def number(word, what):
        try:
            x = float(word)
        except ValueError:
            x = float("nan")
        if not 0.0 <= x < float("inf"):
            raise OptionError(f"--armature: {what} {word!r} is not a number >= 0")
        return x

    items = [w.strip() for w in text.split(",") if w.strip()]
    if not items:
        raise OptionError("--armature: expected a number or joint=value,...")
    if len(items) == 1 and "=" not in items[0]:
        x = number(items[0], "value")
        values = [values[i] if robot.is_free(i) else x for i in range(robot.n)]
    else:
        for item in items:
            joint, sep, word = item.partition("=")
            joint = joint.strip()
            if not sep:
                raise OptionError(f"--armature: {item!r} is not joint=value (one number alone sets every joint)")
            if joint not in robot.joint_names:
                raise OptionError(f"--armature: no joint {joint!r} in robot {robot.name!r} (joints: "
                                  f"{', '.join(robot.joint_names)})")
            x = number(word.strip(), f"joint {joint!r}:")
            for i, b in enumerate(robot.bodies):
                if b.joint_name == joint:
                    values[i] = x
    return dataclasses.replace(robot, armature=tuple(float(v) for v in values) if any(values) else ())
