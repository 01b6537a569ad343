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
}
KIND_LABEL = {"serial": "serial chain", "planar": "planar serial chain", "tree": "binary tree",
              "biped": "biped", "quadruped": "quadruped"}
