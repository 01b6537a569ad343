"""One algorithm per module, each written once over a backend (numbers or symbols).

    rnea         inverse dynamics, tau = M qdd + C qd + g           (Featherstone, RNEA)
    crba         mass matrix M                                      (Featherstone, CRBA)
    coriolis     M, Mdot and the Christoffel-consistent C            (paper, Algorithm 1)
    christoffel  all Christoffel symbols Gamma_ijk                   (paper, Algorithm 2)
    partials     Gamma from symbolic partials of M                   (paper, eq. 4; the baseline)
"""
from .christoffel import christoffel
from .coriolis import coriolis
from .crba import crba
from .rnea import rnea

__all__ = ["christoffel", "coriolis", "crba", "rnea"]
