"""Facts shared by several modules, stated once."""

#: Gravity used by inverse dynamics: 9.81 m/s^2 along -z of the URDF root frame.
GRAVITY = (0.0, 0.0, -9.81)

#: What a generated package computes: quantity -> (function name, inputs, output name, doc).
#: ``symgen build --quantities`` takes the keys; verify, bench and the templates use the rest.
SIGNATURES = {
    "M": ("mass_matrix", ("q",), "M", "Mass matrix M(q), (n, n), by CRBA."),
    "Mdot": ("mass_matrix_dot", ("q", "qd"), "Mdot", "dM/dt at (q, qd), (n, n), by Algorithm 1."),
    "C": ("coriolis_matrix", ("q", "qd"), "C", "Christoffel-consistent Coriolis matrix C(q, qd), (n, n), by Algorithm 1."),
    "Gamma": ("christoffel", ("q",), "Gamma", "Christoffel symbols Gamma[i, j, k], (n, n, n): C = sum_k Gamma[:, :, k] qd[k]."),
    "tau": ("inverse_dynamics", ("q", "qd", "qdd"), "tau", "Inverse dynamics tau = M qdd + C qd + g, (n,), by RNEA."),
}
QUANTITIES = tuple(SIGNATURES)
#: quantity -> generated function name
FUNCTION_NAMES = {q: sig[0] for q, sig in SIGNATURES.items()}
#: generated function name -> its inputs, in order
FUNCTION_INPUTS = {sig[0]: sig[1] for sig in SIGNATURES.values()}
