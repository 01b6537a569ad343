"""The appendix_b family: seed 002's Appendix B (Wensing & Slotine) beyond the Slotine-Li torque
and its regressor (:mod:`.core`): the adaptation term Y^T (v - v_r) of Algorithm 3 (line 9), the
generalized momentum p = M v and C^T v (eq. (38)), the energies, and Algorithm 4's regressors
Y_p, Y_c, Y_g, Y_T, Y_V and v^T Y_g. Each with its sweep (an algorithm of ``symgen/algorithms/``:
``adaptation``, ``momentum``, ``energy``, ``algorithm4``, imported when run), its outputs'
shapes and ``--mimic`` rules, its Pinocchio oracle (:mod:`symgen.oracle_appendix_b`) and its
Pinocchio rival for ``symgen bench``.

Every function runs in body frames (O(N) recursions and Algorithm 4's walk up the tree, as
the RNEA and the Slotine-Li regressor), whatever ``--frame`` says; Y_p, Y_c and Y_g have the
regressor's ground-coordinate walk as a variant, which a build prints where it costs less (deep
chains: serial 20, Y_p 24,192 operations against 63,123; panda keeps body frames). Under
``--mimic`` the scalars and the (10 links,) vectors are the full model's at the expanded state
(Y_red^T s = Y^T G s: rule ``none``), p and C^T v are projected as vectors (G^T), the regressors
by rows (G^T Y).

Y_p and Y_c are built on request (``--quantities``), not by default: the two (n, 10 links)
regressors are most of the family's code, and with them a default panda build took about 20%
more CPU time (19.6 -> 23.5 s user), without them about 9% (20.2-22.0 -> 22.6-23.4 s, two pairs
of runs on a loaded machine).
"""
from __future__ import annotations

from .base import Output, PinCall, Quantity, Sweep


def _scalar(robot, opts):
    return ()


def _vector(robot, opts):
    return (robot.nv,)


def _regressor(robot, opts):
    return (robot.nv, 10 * len(robot.link_names))


def _parameters(robot, opts):
    return (10 * len(robot.link_names),)


_scalar.dims, _vector.dims, _regressor.dims, _parameters.dims = (), ("n",), ("n", "p"), ("p",)   # see core.py


# ------------------------------------------------------------------------------------ sweeps

def _adaptation(robot, args, bk, opts):
    from ..algorithms.adaptation import adaptation_term

    return {"Yts": adaptation_term(robot, args["q"], args["qd"], args["qd_r"], args["qdd_r"], bk,
                                   gravity=opts.gravity)}


def _momentum(robot, args, bk, opts):
    from ..algorithms.momentum import momentum

    p, CTv = momentum(robot, args["q"], args["qd"], bk)
    return {"p": p, "CTv": CTv}


def _kinetic_energy(robot, args, bk, opts):
    from ..algorithms.energy import kinetic_energy

    return {"T": kinetic_energy(robot, args["q"], args["qd"], bk)}


def _potential_energy(robot, args, bk, opts):
    from ..algorithms.energy import potential_energy

    return {"V": potential_energy(robot, args["q"], bk, gravity=opts.gravity)}


def _potential_energy_regressor(robot, args, bk, opts):
    from ..algorithms.energy import potential_energy_regressor

    return {"Y_V": potential_energy_regressor(robot, args["q"], bk, gravity=opts.gravity)}


def _algorithm4(name, with_velocity=True, with_gravity=False, ground=False):
    """The sweep running Algorithm 4's function ``name`` (one output each); ``ground``: its
    variant with lines 15-25 in ground coordinates (``name_ground``)."""
    def run(robot, args, bk, opts):
        from ..algorithms import algorithm4

        extra = {"gravity": opts.gravity} if with_gravity else {}
        velocity = (args["qd"],) if with_velocity else ()
        return {OUTPUT[name]: getattr(algorithm4, function)(robot, args["q"], *velocity, bk, **extra)}

    function = name + ("_ground" if ground else "")
    run.__name__ = f"_{function}"
    return run


OUTPUT = {"momentum_regressor": "Y_p", "coriolis_transpose_regressor": "Y_c", "gravity_regressor": "Y_g",
          "kinetic_energy_regressor": "Y_T", "gravity_power_regressor": "Y_Vdot"}

SWEEPS = (
    Sweep("adaptation", ("q", "qd", "qd_r", "qdd_r"), _adaptation, inertial=False),
    Sweep("momentum", ("q", "qd"), _momentum),
    Sweep("kinetic_energy", ("q", "qd"), _kinetic_energy),
    Sweep("potential_energy", ("q",), _potential_energy),
    Sweep("potential_energy_regressor", ("q",), _potential_energy_regressor, inertial=False),
    Sweep("momentum_regressor", ("q", "qd"), _algorithm4("momentum_regressor"), inertial=False,
          variants=(_algorithm4("momentum_regressor", ground=True),)),
    Sweep("coriolis_transpose_regressor", ("q", "qd"), _algorithm4("coriolis_transpose_regressor"), inertial=False,
          variants=(_algorithm4("coriolis_transpose_regressor", ground=True),)),
    Sweep("gravity_regressor", ("q",), _algorithm4("gravity_regressor", False, True), inertial=False,
          variants=(_algorithm4("gravity_regressor", False, True, ground=True),)),
    Sweep("kinetic_energy_regressor", ("q", "qd"), _algorithm4("kinetic_energy_regressor"), inertial=False),
    Sweep("gravity_power_regressor", ("q", "qd"), _algorithm4("gravity_power_regressor", True, True), inertial=False),
)


# -------------------------------------------------------------------------------- quantities

def _oracle(name):
    """Pinocchio's value through :mod:`symgen.oracle_appendix_b` (imported when verify runs)."""
    def value(o, s):
        from .. import oracle_appendix_b

        return getattr(oracle_appendix_b, name)(o, s)

    return value


def _cpp(statement, read):
    return f"{statement} sink = sink + {read};"


_TORQUE_REGRESSOR = "computeJointTorqueRegressor(model, data, qs[i], {v}, {a});"

QUANTITIES = (
    Quantity("Yts", "adaptation_term", ("q", "qd", "qd_r", "qdd_r"), (Output("Yts", _parameters, embed="none"),),
             "Adaptation term Y(q, qd, qd_r, qdd_r)^T (qd - qd_r), (10 bodies,), in O(N) without forming Y "
             "(Wensing & Slotine, Algorithm 3, line 9): the Slotine-Li law's theta-hat-dot = -Gamma Y^T s.",
             "adaptation", pinocchio=_oracle("adaptation_term"),
             pin_call=PinCall(("computeJointTorqueRegressor",), ("q", "qd", "qdd"),
                              {"Yts": ("pin_cpp", _cpp(_TORQUE_REGRESSOR.format(v="vs[i]", a="as[i]") + " rp.noalias() = "
                                                       "data.jointTorqueRegressor.transpose() * ts[i];", "rp(0)"))},
                              note="Pinocchio: computeJointTorqueRegressor (its qd_r is qd) then Y^T s")),
    Quantity("p", "momentum", ("q", "qd"), (Output("p", _vector, embed="vector"),),
             "Generalized momentum p = M(q) qd, (n,), in O(N) without forming M (composite spatial momenta).",
             "momentum", pinocchio=_oracle("momentum"),
             pin_call=PinCall(("crba",), ("q",),
                              {"p": ("pin_cpp", _cpp("crba(model, data, qs[i]); "
                                                     "r.noalias() = data.M.selfadjointView<Eigen::Upper>() * vs[i];",
                                                     "r(0)"))},
                              note="Pinocchio: crba, then M v")),
    Quantity("CTv", "coriolis_transpose_product", ("q", "qd"), (Output("CTv", _vector, embed="vector"),),
             "C(q, qd)^T qd, (n,), in O(N) (Wensing & Slotine, eq. (38)); the same for every C with "
             "Mdot = C + C^T (the momentum observer's term: p-dot = tau + C^T qd - g).",
             "momentum", pinocchio=_oracle("coriolis_transpose_product"),
             pin_call=PinCall(("computeCoriolisMatrix",), ("q", "qd"),
                              {"CTv": ("pin_cpp", _cpp("computeCoriolisMatrix(model, data, qs[i], vs[i]); "
                                                       "r.noalias() = data.C.transpose() * vs[i];", "r(0)"))},
                              note="Pinocchio: computeCoriolisMatrix, then C^T v")),
    Quantity("T", "kinetic_energy", ("q", "qd"), (Output("T", _scalar, embed="none"),),
             "Kinetic energy T = 1/2 qd^T M(q) qd, a scalar, in O(N).", "kinetic_energy",
             pinocchio=_oracle("kinetic_energy"),
             pin_call=PinCall(("computeKineticEnergy",), ("q", "qd"),
                              {"T": ("pin_cpp", _cpp("computeKineticEnergy(model, data, qs[i], vs[i]);",
                                                     "data.kinetic_energy"))})),
    Quantity("V", "potential_energy", ("q",), (Output("V", _scalar, embed="none"),),
             "Potential energy of gravity V = -sum_i m_i g . c_i (world CoMs; zero at the world origin), a scalar.",
             "potential_energy", pinocchio=_oracle("potential_energy"),
             pin_call=PinCall(("computePotentialEnergy",), ("q",),
                              {"V": ("pin_cpp", _cpp("computePotentialEnergy(model, data, qs[i]);",
                                                     "data.potential_energy"))})),
    Quantity("Y_p", "momentum_regressor", ("q", "qd"), (Output("Y_p", _regressor, embed="rows"),),
             "Momentum regressor Y_p, (n, 10 bodies): Y_p @ parameters = M qd without the armature's "
             "armature * qd (Algorithm 4, line 19).",
             "momentum_regressor", pinocchio=_oracle("momentum_regressor"), slp=True, default=False,
             pin_call=PinCall(("computeJointTorqueRegressor",), ("q", "zero", "qd"),
                              {"Y_p": ("pin_cpp", _cpp(_TORQUE_REGRESSOR.format(v="zero", a="vs[i]"),
                                                       "data.jointTorqueRegressor(0, 0)"))},
                              note="Pinocchio: computeJointTorqueRegressor(q, 0, v) (with gravity off, Y_p)")),
    Quantity("Y_c", "coriolis_transpose_regressor", ("q", "qd"), (Output("Y_c", _regressor, embed="rows"),),
             "Regressor of C^T qd, (n, 10 bodies): Y_c @ parameters = C(q, qd)^T qd (Algorithm 4, line 20).",
             "coriolis_transpose_regressor", pinocchio=_oracle("coriolis_transpose_regressor"), slp=True,
             default=False),
    Quantity("Y_g", "gravity_regressor", ("q",), (Output("Y_g", _regressor, embed="rows"),),
             "Gravity regressor Y_g, (n, 10 bodies): Y_g @ parameters = g(q) (Algorithm 4, line 21).",
             "gravity_regressor", pinocchio=_oracle("gravity_regressor"), slp=True,
             pin_call=PinCall(("computeJointTorqueRegressor",), ("q", "zero", "zero"),
                              {"Y_g": ("pin_cpp", _cpp(_TORQUE_REGRESSOR.format(v="zero", a="zero"),
                                                       "data.jointTorqueRegressor(0, 0)"))},
                              note="Pinocchio: computeJointTorqueRegressor(q, 0, 0)")),
    Quantity("Y_T", "kinetic_energy_regressor", ("q", "qd"), (Output("Y_T", _parameters, embed="none"),),
             "Kinetic energy regressor Y_T, (10 bodies,): Y_T @ parameters = T without the armature's "
             "1/2 armature . qd^2 (Algorithm 4, line 12).",
             "kinetic_energy_regressor", pinocchio=_oracle("kinetic_energy_regressor"),
             pin_call=PinCall(("computeKineticEnergyRegressor",), ("q", "qd"),
                              {"Y_T": ("pin_cpp", _cpp("computeKineticEnergyRegressor(model, data, qs[i], vs[i]);",
                                                       "data.kineticEnergyRegressor(0)"))})),
    Quantity("Y_V", "potential_energy_regressor", ("q",), (Output("Y_V", _parameters, embed="none"),),
             "Potential energy regressor Y_V, (10 bodies,): Y_V @ parameters = V.",
             "potential_energy_regressor", pinocchio=_oracle("potential_energy_regressor"),
             pin_call=PinCall(("computePotentialEnergyRegressor",), ("q",),
                              {"Y_V": ("pin_cpp", _cpp("computePotentialEnergyRegressor(model, data, qs[i]);",
                                                       "data.potentialEnergyRegressor(0)"))})),
    Quantity("Y_Vdot", "gravity_power_regressor", ("q", "qd"), (Output("Y_Vdot", _parameters, embed="none"),),
             "Power of gravity's regressor qd^T Y_g, (10 bodies,): Y_Vdot @ parameters = qd^T g = dV/dt "
             "(Algorithm 4, line 13).", "gravity_power_regressor", pinocchio=_oracle("gravity_power_regressor"),
             pin_call=PinCall(("computeJointTorqueRegressor",), ("q", "zero", "zero"),
                              {"Y_Vdot": ("pin_cpp", _cpp(_TORQUE_REGRESSOR.format(v="zero", a="zero") + " rp.noalias() = "
                                                          "data.jointTorqueRegressor.transpose() * vs[i];", "rp(0)"))},
                              note="Pinocchio: computeJointTorqueRegressor(q, 0, 0), then v^T Y_g")),
)
