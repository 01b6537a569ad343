"""One algorithm per module, each written once over a backend (numbers or symbols).

    rnea               inverse dynamics, tau = M qdd + C qd + g       (Featherstone, RNEA)
    crba               mass matrix M                                  (Featherstone, CRBA)
    cluster_crba       reduced M̄ = GᵀMG of a constant embedding,     (Wensing & Slotine,
                       one force carried up per column of G            Sec. VI-C; GRBDA)
    coriolis           M, Mdot and the Christoffel-consistent C       (paper, Algorithm 1)
    christoffel        all Christoffel symbols Gamma_ijk              (paper, Algorithm 2)
    baseline_partials  Gamma from symbolic partials of M              (paper, eq. 4: the
                                                                       baseline of Table 2)
    gravity            generalized gravity g(q)                       (RNEA at rest)
    slotine_li         M qdd_r + C qd_r + g, never forming M or C     (Wensing & Slotine,
                                                                       Algorithm 3)
    regressor          Y with Y theta = slotine_li                    (Wensing & Slotine,
                                                                       Appendix B-A)
    forward_dynamics   qdd = M^-1 (tau - C qd - g), and M^-1          (Featherstone, L^T D L,
                                                                       Sec. 6.3)
    aba                qdd by the articulated-body algorithm, and     (Featherstone, Table 7.1;
                       M^-1 by its rewriting without affine terms      Carpentier & Mansard,
                                                                       Sec. IV-C)
    derivatives        (dtau/dq, dtau/dqd) and (dqdd/dq, dqdd/dqd)    (Carpentier & Mansard,
                                                                       analytical derivatives)
    frames             frame placements and Jacobians                 (LOCAL_WORLD_ALIGNED)
    adaptation         Y^T (v - v_r) in O(N), Y never formed          (Wensing & Slotine,
                                                                       Algorithm 3, line 9)
    momentum           p = M v and C^T v in O(N)                      (their eq. (38))
    energy             T, V and the regressor of V                    (their App. B-B2)
    algorithm4         Y_p, Y_c, Y_g, Y_T, v^T Y_g                    (their Algorithm 4)

``crba``, ``coriolis``, ``christoffel``, ``gravity`` and ``slotine_li`` each hold two functions
side by side: the algorithm in body frames as it is printed (the module's name) and in ground
coordinates, the paper's footnote 2 (the same name + ``_ground``: no 6x6 transform in any loop),
which the generated code uses by default. They go line for line (``gravity_ground`` sums
composite gravity forces instead of running RNEA at rest) and agree to rounding
(tests/test_identities.py). ``baseline_partials`` and ``forward_dynamics`` take a ``frame``
argument for the CRBA they start from; ``aba`` holds ``aba`` (body frames), ``aba_ground`` and
``minverse_ground``, variants of the forward-dynamics and M^-1 sweeps (a build prints whichever
route costs least for the robot). Kinematics come from
:func:`symgen.kinematics.body_frames` and :func:`~symgen.kinematics.ground_frames`.

One vocabulary, the paper's (Featherstone's where the paper has none). Bodies are 0..N-1, the
paper's 1..N shifted by one. A name given to ``bk.bind`` is the name of the temporary in the
generated code, so the code, the comments and the generated files read alike.

    code              paper                  meaning
    M  (≡ H)          M                      mass matrix (Featherstone's H)
    Mdot              M-dot                  its time derivative
    C                 C                      Christoffel-consistent Coriolis matrix, eq. (3)
    Gamma[i, j, k]    Γ_ijk                  Christoffel symbols, eq. (4); C = Σ_k Γ[:, :, k] qd_k
    q, qd, qdd, tau   q, q-dot, q-ddot, τ    joint positions, rates, accelerations, forces
    qd_r, qdd_r, w    q-dot_r, q-ddot_r      a reference joint rate and acceleration, and the
                                             spatial velocity qd_r gives (Slotine-Li)
    parent[i]  (p)    p(i)                   parent body; -1 is the fixed base (the paper's 0)
    Xup[i]            iXp(i)                 motion transform, parent frame -> body i frame
    Phi[i]  (≡ S)     Φ_i                    motion subspace of joint i (Featherstone's S, and
                                             ``Robot.S`` in the model)
    Phid[i]           Φ-dot_i                its rate, (v_i x) Φ_i + Φ-ring_i
    (Phi_ring)        Φ-ring_i               rate of Φ_i seen in body i: zero for every joint here
    v[i]              v_i                    spatial velocity of body i
    I[i], IC[i]       I_i, IC_i              spatial inertia, composite inertia
    BC[i]             BC_i                   composite body-level factorization, B of eq. (10)
    Bt, D             B-tilde, D             Algorithm 2, lines 5-6: B(Phi_k, IC_k) and the rest
    F1, F2, F3        F1, F2, F3             Algorithms 1 and 2: forces carried down the tree
                                             (crba's F is Algorithm 1's F2)
    crm, crf, icrf    (v x), (v x*), (f x*)  spatial cross products (:mod:`symgen.spatial`)
    factor_B          B(v, I)                eq. (10)
    Y, theta          Y, θ                   regressor and the ten inertial parameters per body
    F, H, G           𝖥ᵢ, 𝖧ᵢ, 𝖦ᵢ               Algorithms 3-4: the body-level regressor 𝒴ᵢ at
                                             (a, v, w), (v, 0, 0) and (a_g, 0, 0)

and for the ground-coordinate split of B (not in the paper; see :mod:`.coriolis`):

    Bs                symmetric part of B: 1/2 [(v x*) I - I (v x)], of the inertia form
    p (Alg. 1), pm (Slotine-Li), h (Alg. 2)
                      1/2 I v (1/2 IC_k Phi_k for h), so that B = Bs + (p x*)
    E, Q              Bs Phi and (Phi x*) p: B Phi = E + Q, B^T Phi = E - Q
"""
from .aba import aba, aba_ground, minverse_ground
from .baseline_partials import christoffel_partials
from .christoffel import christoffel, christoffel_ground
from .coriolis import coriolis, coriolis_ground
from .crba import crba, crba_ground
from .derivatives import forward_dynamics_derivatives, inverse_dynamics_derivatives
from .forward_dynamics import forward_dynamics, mass_matrix_inverse
from .frames import frame_kinematics, frame_kinematics_ground
from .gravity import gravity, gravity_ground
from .regressor import regressor, regressor_ground, regressor_local
from .rnea import rnea
from .slotine_li import slotine_li, slotine_li_ground

__all__ = ["aba", "aba_ground", "christoffel", "christoffel_ground", "christoffel_partials", "coriolis", "coriolis_ground", "crba",
           "crba_ground", "forward_dynamics", "forward_dynamics_derivatives", "frame_kinematics",
           "frame_kinematics_ground", "gravity", "gravity_ground", "inverse_dynamics_derivatives", "mass_matrix_inverse", "minverse_ground",
           "regressor", "regressor_ground", "regressor_local", "rnea", "slotine_li",
           "slotine_li_ground"]
