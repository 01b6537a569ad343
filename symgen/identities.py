"""The identities ``symgen verify`` checks between a package's own outputs (the paper's Section 5
and what each family of functions adds), each run when the package has the functions it needs."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np


@dataclass(frozen=True)
class Identity:
    """A relation between generated functions that holds at every state: ``sides(f, state, call)``
    returns (left, right), where ``f`` maps a quantity key to its value at ``state`` and
    ``call(key, *args)`` evaluates it at other arguments."""
    name: str
    needs: tuple[str, ...]
    sides: Callable
    conditioned: bool = False                       # a solve with M: tolerance grows with cond(M)
    fixed_base: bool = False                        # holds only without a joint of several velocities
    #: holds with external forces too (each call given the state's f_ext, --external-forces)
    forces: bool = False


def _rnea_minus_gravity(f, s, call):
    zero = np.zeros_like(s["qd"])
    return f["C"] @ s["qd"], call("tau", s["q"], s["qd"], zero) - call("tau", s["q"], zero, zero)


#: relations between quantities (registry keys) that hold at every state
IDENTITIES = (
    Identity("M symmetric", ("M",), lambda f, s, call: (f["M"], f["M"].T)),
    Identity("Mdot = C + C^T", ("Mdot", "C"), lambda f, s, call: (f["Mdot"], f["C"] + f["C"].T)),       # eq. (2)
    Identity("C = Gamma qd", ("Gamma", "C"),                                                        # eq. (3)
             lambda f, s, call: (np.einsum("ijk,k->ij", f["Gamma"], s["qd"]), f["C"])),
    Identity("C qd = RNEA(q, qd, 0) - g", ("C", "tau"), _rnea_minus_gravity, forces=True),
    Identity("g = RNEA(q, 0, 0)", ("g", "tau"), lambda f, s, call: (f["g"], call("tau", s["q"], 0 * s["qd"], 0 * s["qd"]))),
    Identity("Slotine-Li(q, qd, qd, qdd) = RNEA(q, qd, qdd)", ("tau_sl", "tau"),
             lambda f, s, call: (call("tau_sl", s["q"], s["qd"], s["qd"], s["qdd"]), f["tau"])),
    # a package built with --passive solves for tau + tau_p (the state's tau_p; 0 without)
    Identity("RNEA(q, qd, FD(q, qd, tau)) = tau (+ tau_p with --passive)", ("qdd", "tau"),
             lambda f, s, call: (call("tau", s["q"], s["qd"], f["qdd"]), s["tau"] + s.get("tau_p", 0.0)), True,
             forces=True),
    Identity("dtau/dqd = 2 C", ("dtau", "C"), lambda f, s, call: (f["dtau"][1], 2 * f["C"]),   # Gamma_ijk = Gamma_ikj,
             fixed_base=True, forces=True),                                          # not with the free-flyer's torsion
    # the regressor covers the inertial parameters; a known armature adds armature * a_r
    Identity("Y @ parameters = Slotine-Li", ("Y", "tau_sl"),
             lambda f, s, call: (f["Y"] @ s["parameters"] + s["armature"] * s["qdd_r"], f["tau_sl"])),
    Identity("M Minv = 1", ("M", "Minv"), lambda f, s, call: (f["M"] @ f["Minv"], np.eye(len(s["qd"]))), True),
    Identity("frame velocity = J qd", ("vf", "J"), lambda f, s, call: (f["vf"], f["J"] @ s["qd"])),
    Identity("J_dot qd = frame acceleration bias", ("dJ", "af"), lambda f, s, call: (f["dJ"] @ s["qd"], f["af"])),
    Identity("h_G = A_G qd", ("hg", "Ag"), lambda f, s, call: (f["hg"], f["Ag"] @ s["qd"])),
    Identity("m J_com = linear rows of A_G", ("Jcom", "Ag", "Ig"),
             lambda f, s, call: (f["Ig"][0, 0] * f["Jcom"], f["Ag"][:3])),
    # seed 002's Appendix B (quantities/appendix_b.py): Algorithm 3's Y^T s, eq. (38), Algorithm 4
    Identity("adaptation_term = Y^T (qd - qd_r)", ("Yts", "Y"),
             lambda f, s, call: (f["Yts"], f["Y"].T @ (s["qd"] - s["qd_r"]))),
    Identity("p = M qd", ("p", "M"), lambda f, s, call: (f["p"], f["M"] @ s["qd"])),
    Identity("C^T qd = C(q, qd)^T qd", ("CTv", "C"), lambda f, s, call: (f["CTv"], f["C"].T @ s["qd"])),
    Identity("T = qd . p / 2", ("T", "p"), lambda f, s, call: (f["T"], s["qd"] @ f["p"] / 2)),
    # the regressors cover the inertial parameters; a known armature adds its terms
    *(Identity(f"{reg} @ parameters = {name}", (reg, key),
               lambda f, s, call, reg=reg, key=key, rotor=rotor: (f[reg] @ s["parameters"] + rotor(s), f[key]))
      for reg, key, name, rotor in (("Y_p", "p", "p", lambda s: s["armature"] * s["qd"]),
                                    ("Y_c", "CTv", "C^T qd", lambda s: 0.0), ("Y_g", "g", "g", lambda s: 0.0),
                                    ("Y_T", "T", "T", lambda s: s["armature"] @ s["qd"] ** 2 / 2),
                                    ("Y_V", "V", "V", lambda s: 0.0))),
    Identity("Y_Vdot @ parameters = qd . g", ("Y_Vdot", "g"),
             lambda f, s, call: (f["Y_Vdot"] @ s["parameters"], s["qd"] @ f["g"])),
)
