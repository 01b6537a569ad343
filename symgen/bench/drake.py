"""Drake as a rival of ``symgen bench --drake``: its ``MultibodyPlant`` from Python (the pydrake
wheel), on the URDF a package was built from, against the package's compiled binding called from
Python (``c_py_single``): what a Drake user writing a controller in Python would compare.

Each Drake call sets the state first (the plant's cache then recomputes what the call needs):

    M       SetPositions, CalcMassMatrix
    g       SetPositions, CalcGravityGeneralizedForces (ours: gravity, its negative)
    tau     SetPositionsAndVelocities, CalcForceElementsContribution (gravity and the URDF's joint
            damping, which Drake applies), CalcInverseDynamics
    qdd     SetPositionsAndVelocities, the applied generalized force input fixed to tau, the
            generalized-acceleration output port evaluated (continuous plant, no contact)

Before timing, the package's functions are checked against Drake's at random states, q and v
mapped by joint name: M and g, and τ, q̈ with the URDF's damping as Drake applies it (ours:
inverse dynamics minus ``passive_force``, forward dynamics at τ + ``passive_force``), to 1e-9
relative. Fixed-base packages only (Drake's free body has its own coordinates).
"""
from __future__ import annotations

import re
from pathlib import Path

import numpy as np

from .harness import BenchError

#: the quantities Drake has a counterpart of
DRAKE_QUANTITIES = ("M", "g", "tau", "qdd")
DRAKE_METHOD = "drake_py"
CHECK_RTOL = 1e-9


def _pydrake():
    try:
        from pydrake.multibody.parsing import Parser
        from pydrake.multibody.plant import MultibodyPlant
        from pydrake.multibody.tree import MultibodyForces
    except ImportError:
        raise BenchError("--drake needs the drake package: pip install drake (the bench extra)") from None
    return Parser, MultibodyPlant, MultibodyForces


class DrakeModel:
    """The URDF in a continuous Drake plant, its root link welded to the world (unless the URDF
    fixes it to a link named ``world``, Drake's world), with the
    permutation from the package's q (and v) to Drake's."""

    def __init__(self, urdf, manifest: dict):
        Parser, MultibodyPlant, MultibodyForces = _pydrake()
        if manifest.get("floating_base") or manifest["nq"] != manifest["nv"] or manifest["options"].get("mimic"):
            raise BenchError("--drake times fixed-base packages of 1-DoF joints only, without --mimic (Drake's free "
                             "body and ball joints have coordinates of their own, its mimic joints are constraints)")
        # the package's joints are independent (no --mimic): so are Drake's (a coupler constraint
        # would need Drake's discrete solver)
        text = re.sub(r"<mimic\b[^>]*/>", "", Path(urdf).read_text(encoding="utf-8"))
        self.plant = plant = MultibodyPlant(0.0)
        (instance,) = Parser(plant).AddModelsFromString(text, "urdf")
        bodies = [plant.get_body(i) for i in plant.GetBodyIndices(instance)]
        roots = [b for b in bodies if not any(plant.get_joint(j).child_body().index() == b.index()
                                              for j in plant.GetJointIndices(instance))]
        if len(roots) > 1:
            raise BenchError(f"{urdf}: Drake reads {len(roots)} root links, expected one")
        if roots:                                   # (none: the URDF fixes its root to a link named world)
            plant.WeldFrames(plant.world_frame(), roots[0].body_frame())
        plant.Finalize()
        self.context = plant.CreateDefaultContext()
        self.forces = MultibodyForces(plant)
        if plant.num_positions() != manifest["nq"]:
            raise BenchError(f"{urdf}: Drake has {plant.num_positions()} positions, the package {manifest['nq']}")
        self.index = np.array([plant.GetJointByName(name, instance).position_start() for name in manifest["joint_names"]])
        self.applied = plant.get_applied_generalized_force_input_port()
        self.acceleration = plant.get_generalized_acceleration_output_port()
        if plant.num_actuators():                           # URDF transmissions: their input at zero
            plant.get_actuation_input_port().FixValue(self.context, np.zeros(plant.num_actuators()))

    def _x(self, x):
        out = np.empty(len(self.index))
        out[self.index] = x
        return out

    def _ours(self, x):
        return np.asarray(x)[self.index]

    def mass_matrix(self, q):
        self.plant.SetPositions(self.context, self._x(q))
        return self.plant.CalcMassMatrix(self.context)[np.ix_(self.index, self.index)]

    def gravity(self, q):
        self.plant.SetPositions(self.context, self._x(q))
        return -self._ours(self.plant.CalcGravityGeneralizedForces(self.context))

    def inverse_dynamics(self, q, v, a):
        self.plant.SetPositionsAndVelocities(self.context, np.concatenate([self._x(q), self._x(v)]))
        self.plant.CalcForceElementsContribution(self.context, self.forces)
        return self._ours(self.plant.CalcInverseDynamics(self.context, self._x(a), self.forces))

    def forward_dynamics(self, q, v, tau):
        self.plant.SetPositionsAndVelocities(self.context, np.concatenate([self._x(q), self._x(v)]))
        self.applied.FixValue(self.context, self._x(tau))
        return self._ours(self.acceleration.Eval(self.context))

    def call(self, qty: str):
        """The Drake call of quantity ``qty`` as a function of the registry's arguments."""
        return {"M": self.mass_matrix, "g": self.gravity, "tau": self.inverse_dynamics,
                "qdd": self.forward_dynamics}[qty]


def check(model: DrakeModel, pkg, quantities, states: dict, trials: int = 3) -> dict:
    """``{qty: max relative error}`` of the package's C against Drake (the URDF's damping on
    Drake's side, ``passive_force`` on ours); BenchError above CHECK_RTOL."""
    from ..quantities import QUANTITIES

    passive = getattr(pkg.c, "passive_force", None)
    errors = {}
    for qty in quantities:
        x, worst = QUANTITIES[qty], 0.0
        for t in range(trials):
            args = [states[a][t] for a in x.arguments]
            tau_p = passive(states["q"][t], states["qd"][t]) if passive is not None else 0.0
            mine = list(args)
            if qty == "qdd" and not pkg.passive:          # Drake's FD applies the damping: ours at tau + tau_p
                mine[2] = mine[2] + tau_p
            ours = getattr(pkg.c, x.function)(*mine) - (tau_p if qty == "tau" else 0.0)
            theirs = model.call(qty)(*args)
            worst = max(worst, float(np.abs(ours - theirs).max() / max(1.0, np.abs(theirs).max())))
        if not worst <= CHECK_RTOL:
            raise BenchError(f"Drake and the package differ in {qty}: relative error {worst:.2e} > {CHECK_RTOL:g}")
        errors[qty] = worst
    return errors


def measure(m, package_dir, urdf, manifest: dict, quantities, settings) -> None:
    """Drake's calls of ``quantities`` (those it has) timed from Python into ``m`` (method
    ``drake_py``), after :func:`check`; notes instead when it cannot run."""
    from ..codegen.build import import_package
    from ..quantities import ARGUMENTS
    from .cloop import dimensions
    from .timing import time_callable

    wanted = [q for q in quantities if q in DRAKE_QUANTITIES]
    if urdf is None or not wanted:
        m.notes["drake"] = "Drake: not timed: needs --model URDF and one of " + ", ".join(DRAKE_QUANTITIES)
        return
    try:
        model = DrakeModel(urdf, manifest)
        pkg = import_package(package_dir)
        if pkg.c is None:
            raise BenchError("the package has no compiled binding to check against")
        rng = np.random.default_rng(7)
        states = {a: x.draw(rng, *dimensions(manifest), 3, links=len(manifest["link_names"])) for a, x in ARGUMENTS.items()}
        errors = check(model, pkg, wanted, states)
    except (BenchError, RuntimeError) as exc:   # (RuntimeError: Drake's own refusals)
        m.notes["drake"] = f"Drake: not timed: {exc}"
        return
    import pydrake

    m.info["drake"] = {"version": getattr(pydrake, "__version__", "?"), "check": errors}
    from ..quantities import QUANTITIES

    for qty in wanted:
        args = [states[a][0] for a in QUANTITIES[qty].arguments]
        fn = model.call(qty)
        m.put(DRAKE_METHOD, qty, time_callable(lambda: fn(*args), settings.repeats, settings.min_time))
    m.notes[DRAKE_METHOD, "tau"] = "Drake: τ with the URDF's joint damping applied (ours: inverse_dynamics)"
