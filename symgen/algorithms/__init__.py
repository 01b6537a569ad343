"""One algorithm per module, each written once over a backend (numbers or symbols).

    rnea         inverse dynamics, tau = M qdd + C qd + g           (Featherstone, RNEA)
    crba         mass matrix M                                      (Featherstone, CRBA)
    coriolis     M, Mdot and the Christoffel-consistent C            (paper, Algorithm 1)
    christoffel  all Christoffel symbols Gamma_ijk                   (paper, Algorithm 2)
    baseline_partials  Gamma from symbolic partials of M            (paper, eq. 4; the baseline of Table 2)

and, side by side in the same three modules, the same algorithms in ground coordinates (the
paper's footnote 2; no 6x6 transforms in any loop), which the generated code uses: crba_ground,
coriolis_ground, christoffel_ground.
Body-frame and ground-frame versions agree to rounding (tests/test_identities.py).
"""
from .christoffel import christoffel, christoffel_ground
from .coriolis import coriolis, coriolis_ground
from .crba import crba, crba_ground
from .baseline_partials import christoffel_partials
from .forward_dynamics import forward_dynamics, mass_matrix_inverse
from .gravity import gravity, gravity_ground
from .regressor import regressor
from .rnea import rnea
from .slotine_li import slotine_li, slotine_li_ground

__all__ = ["christoffel", "christoffel_ground", "christoffel_partials", "coriolis", "coriolis_ground", "crba",
           "crba_ground", "forward_dynamics", "gravity", "gravity_ground", "mass_matrix_inverse", "regressor", "rnea", "slotine_li",
           "slotine_li_ground"]
