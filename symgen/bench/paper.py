"""The paper's numbers (Echeandia & Wensing 2021) that ``symgen tables`` sets ours beside, and
the names of its systems and of the symbolic routes of Table 2."""
from __future__ import annotations

#: the quantities of the paper's Table 1 and figures
QUANTITIES = ("C", "Gamma")
#: Table 1, µs (C, Gamma), RBDL extension, Intel i7 3.2 GHz
PAPER_TABLE1 = {"serial": (18.0, 122.0), "tree": (10.0, 33.0), "biped": (13.0, 64.0), "quadruped": (10.0, 37.0)}
#: Table 2, seconds, MATLAB symbolic toolbox: (kind, N) -> {route: s}
PAPER_TABLE2 = {("tree", 5): {"eq4_whole": 1.23, "algo2_whole": 0.97},
                ("tree", 10): {"eq4_whole": 7.83, "algo2_whole": 3.11},
                ("tree", 15): {"eq4_whole": 27.1, "algo2_whole": 5.88},
                ("planar", 10): {"algo2_whole": 26.8 * 60}}
PAPER_TABLE2_NOTE = ("paper: for serial chains eq. (4) was faster than Algorithm 2 symbolically, and beyond "
                     "N = 15 both took hours; Algorithm 2 on the 10-DoF planar chain took 26.8 min")
#: Figures 2-4: the paper's measured scaling exponents
PAPER_SLOPES = {"serial": "C ~ N^2, Gamma ~ N^3", "tree": "between N and N^2",
                "biped": "main body + 2 serial legs", "quadruped": "main body + 4 serial legs"}

ROUTES = {  # name -> (gamma_method, naming, frame, label); the named routes in symgen build's default frame
    "eq4_whole": ("partials", False, "body", "eq. (4), symbolic partials of M, whole expressions, body frames"),
    "algo2_whole": ("algo2", False, "body", "Algorithm 2, whole expressions, body frames (the paper's run)"),
    "eq4_named": ("partials", True, "ground", "eq. (4), symgen's named CRBA program"),
    "algo2_named": ("algo2", True, "ground", "Algorithm 2, named intermediates (symgen build)"),
    "vid_named": ("vid", True, "ground", "seed 002 Sec. VI-D: C* = 1/2 (dtau/dv + M K) by the analytical RNEA "
                  "derivatives, Gamma[:, :, k] = C*(q, e_k), named intermediates"),
}
KIND_LABEL = {"serial": "serial chain", "planar": "planar serial chain", "tree": "binary tree",
              "biped": "biped", "quadruped": "quadruped"}

# ------------------------------------------------------------------------------------ Table 3
# Seed 003: Carpentier & Mansard, "Analytical Derivatives of Rigid Body Dynamics Algorithms"
# (RSS 2018), Table I. Pinocchio (2018) in C++ with Eigen 3.3.4.

#: the generated functions of Table 3, in the order of its rows
TABLE3_QUANTITIES = ("qdd", "Minv", "dtau", "dqdd", "tau")
#: per quantity: the row of the seed's Table I and the Pinocchio function it (and our rival) is
TABLE3_ROWS = {
    "qdd": ("FD", "aba"),
    "Minv": ("M^-1 dedicated algorithm", "computeMinverse"),
    "dtau": ("analytical derivatives of ID", "computeRNEADerivatives"),
    "dqdd": ("analytical derivatives of FD", "computeABADerivatives"),
    "tau": ("ID", "rnea"),
}
#: the seed's robots: name -> (DoF as the seed counts them, free-flyer counted)
PAPER_TABLE3_ROBOTS = {"KUKA-LWR": 7, "HyQ": 18, "Atlas": 36}
#: Table I, µs (mean over 10^5 random samples): robot -> {quantity: µs}
PAPER_TABLE3 = {
    "KUKA-LWR": {"tau": 1.20, "dtau": 3.34, "qdd": 1.78, "dqdd": 5.78, "Minv": 1.82},
    "HyQ": {"tau": 2.14, "dtau": 7.01, "qdd": 4.28, "dqdd": 14.24, "Minv": 4.86},
    "Atlas": {"tau": 5.51, "dtau": 16.72, "qdd": 9.81, "dqdd": 45.20, "Minv": 12.70},
}
#: the rows of Table I we have no generated function for (µs), kept for the record
PAPER_TABLE3_OTHER = {
    "finite differences of ID": {"KUKA-LWR": 21.26, "HyQ": 88.52, "Atlas": 452.46},
    "finite differences of FD": {"KUKA-LWR": 22.67, "HyQ": 94.23, "Atlas": 470.14},
    "M^-1 Cholesky factorization": {"KUKA-LWR": 1.88, "HyQ": 5.82, "Atlas": 28.29},
}
PAPER_TABLE3_MACHINE = ("Pinocchio (2018) C++, Eigen 3.3.4, LLVM 9.0.0; 2.2 GHz quad-core Intel Core i7, one core, "
                        "turbo boost off; mean over 10^5 random samples")
PAPER_TABLE3_NOTE = ("the seed's derivatives are with respect to all three inputs (q, v and tau or qdd: "
                     "computeRNEADerivatives also gives dtau/dqdd = M, computeABADerivatives dqdd/dtau = M^-1); "
                     "the generated functions give the derivatives with respect to q and v only")
