"""iDynTree as a rival of ``symgen bench --idyntree``: its ``KinDynComputations`` from Python (the
idyntree wheel, which ships no C++ headers to build a C++ harness against), on the URDF a floating
package was built from, in the package's base-velocity representation (``--base-velocity``; body
is iDynTree's BODY_FIXED), beside the package's compiled binding called from Python
(``c_py_single``): what an iDynTree user writing a controller in Python would compare.

Each iDynTree call sets the state first (``setRobotState``: the kinematics it caches), then:

    M       getFreeFloatingMassMatrix
    C       getCoriolisAndMassMatrices (C and M in one call; ours: coriolis_matrix)
    tau     inverseDynamics

(g is not timed: iDynTree 15's generalizedGravityForces in MIXED and INERTIAL is wrong right after
setRobotState until another call refreshes its cache; :mod:`symgen.oracle_idyntree`.)

Before timing, the package's M and τ are checked against iDynTree's at random states to 1e-9
relative, and C ν (iDynTree's C is another factorization of the same C ν, not the
Christoffel-consistent one: Ṁ ≠ C + Cᵀ for it).
"""
from __future__ import annotations

import numpy as np

from .harness import BenchError

#: the quantities iDynTree has a counterpart of
IDYNTREE_QUANTITIES = ("M", "C", "tau")
IDYNTREE_METHOD = "idyntree_py"
CHECK_RTOL = 1e-9


class IDynTreeModel:
    """The package's URDF in iDynTree's KinDynComputations, in its base-velocity representation,
    with held output buffers (a call allocates nothing)."""

    def __init__(self, urdf, manifest: dict):
        try:
            import idyntree.bindings as idt
        except ImportError:
            raise BenchError("--idyntree needs the idyntree package: pip install idyntree") from None
        if not manifest.get("floating_base") or manifest["nq"] != manifest["nv"] + 1:
            raise BenchError("--idyntree times floating-base packages of 1-DoF joints under the free-flyer only")
        from ..oracle_idyntree import IDynTreeOracle

        self.idt = idt
        self.oracle = IDynTreeOracle(urdf, manifest["joint_names"][1:], manifest["options"].get("base_velocity", "body"),
                                     manifest["options"].get("gravity", (0.0, 0.0, -9.81)))
        n = manifest["nv"]
        model = self.oracle.kd.model()
        self.M, self.C, self.X = (idt.MatrixDynSize(n, n) for _ in range(3))
        self.forces = idt.FreeFloatingGeneralizedTorques(model)
        self.links = idt.LinkWrenches(model)
        self.links.zero()

    def mass_matrix(self, q):
        self.oracle.set_state(q, np.zeros(len(q) - 1))
        self.oracle.kd.getFreeFloatingMassMatrix(self.M)
        return self.M.toNumPy()

    def coriolis_matrix(self, q, v):
        self.oracle.set_state(q, v)
        self.oracle.kd.getCoriolisAndMassMatrices(self.C, self.M, self.X)
        return self.C.toNumPy()

    def inverse_dynamics(self, q, v, a):
        idt = self.idt
        self.oracle.set_state(q, v)
        self.oracle.kd.inverseDynamics(idt.Vector6(a[:6]), idt.VectorDynSize(a[6:]), self.links, self.forces)
        return self._forces()

    def _forces(self):
        return np.concatenate([self.forces.baseWrench().asVector().toNumPy(), self.forces.jointTorques().toNumPy()])

    def call(self, qty: str):
        return {"M": self.mass_matrix, "C": self.coriolis_matrix, "tau": self.inverse_dynamics}[qty]


def check(model: IDynTreeModel, pkg, quantities, states: dict, trials: int = 3) -> dict:
    """``{qty: max relative error}`` of the package's C against iDynTree (C as C ν); BenchError
    above CHECK_RTOL."""
    from ..quantities import QUANTITIES

    errors = {}
    for qty in quantities:
        x, worst = QUANTITIES[qty], 0.0
        for t in range(trials):
            args = [states[a][t] for a in x.arguments]
            ours, theirs = getattr(pkg.c, x.function)(*args), model.call(qty)(*args)
            if qty == "C":
                ours, theirs = ours @ args[1], theirs @ args[1]
            worst = max(worst, float(np.abs(ours - theirs).max() / max(1.0, np.abs(theirs).max())))
        if not worst <= CHECK_RTOL:
            raise BenchError(f"iDynTree and the package differ in {qty}: relative error {worst:.2e} > {CHECK_RTOL:g}")
        errors[qty] = worst
    return errors


def measure(m, package_dir, urdf, manifest: dict, quantities, settings) -> None:
    """iDynTree's calls of ``quantities`` (those it has) timed from Python into ``m`` (method
    ``idyntree_py``), after :func:`check`; notes instead when it cannot run."""
    from ..codegen.build import import_package
    from ..quantities import ARGUMENTS, QUANTITIES
    from .cloop import dimensions
    from .timing import time_callable

    wanted = [q for q in quantities if q in IDYNTREE_QUANTITIES]
    if urdf is None or not wanted:
        m.notes["idyntree"] = "iDynTree: not timed: needs --model URDF and one of " + ", ".join(IDYNTREE_QUANTITIES)
        return
    try:
        model = IDynTreeModel(urdf, manifest)
        pkg = import_package(package_dir)
        if pkg.c is None:
            raise BenchError("the package has no compiled binding to check against")
        rng = np.random.default_rng(7)
        states = {a: x.draw(rng, *dimensions(manifest), 3, links=len(manifest["link_names"])) for a, x in ARGUMENTS.items()}
        states["q"][:, 3:7] /= np.linalg.norm(states["q"][:, 3:7], axis=1, keepdims=True)
        errors = check(model, pkg, wanted, states)
    except BenchError as exc:
        m.notes["idyntree"] = f"iDynTree: not timed: {exc}"
        return
    import idyntree

    m.info["idyntree"] = {"version": getattr(idyntree, "__version__", "?"), "check": errors,
                          "representation": manifest["options"].get("base_velocity", "body")}
    for qty in wanted:
        args = [states[a][0] for a in QUANTITIES[qty].arguments]
        fn = model.call(qty)
        m.put(IDYNTREE_METHOD, qty, time_callable(lambda: fn(*args), settings.repeats, settings.min_time))
    m.notes[IDYNTREE_METHOD, "C"] = "iDynTree: getCoriolisAndMassMatrices (C and M in one call, another factorization of C v)"
