"""One algorithm per module, each written once over a backend (numbers or symbols).

    rnea         inverse dynamics, tau = M qdd + C qd + g           (Featherstone, RNEA)
    crba         mass matrix M                                      (Featherstone, CRBA)
    coriolis     M, Mdot and the Christoffel-consistent C            (paper, Algorithm 1)
    christoffel  all Christoffel symbols Gamma_ijk                   (paper, Algorithm 2)
    partials     Gamma from symbolic partials of M                   (paper, eq. 4; the baseline)
    frames       frame placements and Jacobians (LOCAL_WORLD_ALIGNED)

and the same three algorithms in ground coordinates (the paper's footnote 2; no 6x6 transforms
in any loop), which the generated code uses: crba_ground, coriolis_ground, christoffel_ground.
Body-frame and ground-frame versions agree to rounding (tests/test_identities.py).
"""
from .christoffel import christoffel
from .christoffel_ground import christoffel_ground
from .coriolis import coriolis
from .coriolis_ground import coriolis_ground
from .crba import crba
from .crba_ground import crba_ground
from .derivatives import forward_dynamics_derivatives, inverse_dynamics_derivatives
from .forward_dynamics import forward_dynamics, mass_matrix_inverse
from .frames import frame_kinematics, frame_kinematics_ground
from .gravity import gravity, gravity_ground
from .partials import christoffel_partials
from .regressor import regressor
from .rnea import rnea
from .slotine_li import slotine_li, slotine_li_ground

__all__ = ["christoffel", "christoffel_ground", "christoffel_partials", "coriolis", "coriolis_ground", "crba",
           "crba_ground", "forward_dynamics", "forward_dynamics_derivatives", "frame_kinematics",
           "frame_kinematics_ground", "gravity", "gravity_ground", "inverse_dynamics_derivatives", "mass_matrix_inverse",
           "regressor", "rnea", "slotine_li",
           "slotine_li_ground"]
