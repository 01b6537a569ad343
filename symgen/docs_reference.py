"""The documentation's reference pages, written from the code when the site is built
(``docs/hooks.py`` calls these), so that they cannot drift from it:

- :func:`functions_page`: every generated function of the registry (``symgen/quantities/``): its
  key, arguments and outputs with their shapes, the default build, the algorithm that yields it
  with its paper and source file, Pinocchio's counterpart;
- :func:`c_contract` and :func:`c_declarations`: the C API's contract, from the header template's
  own comments, and the declarations of the committed showcase's header.

The registry says what each sweep runs; :data:`ALGORITHMS` says, per sweep, which algorithm that
is, from which paper, in which file. A sweep added to the registry without an entry here is an
error when the site is built (and in ``tests/test_docs.py``).
"""
from __future__ import annotations

import re
import textwrap
from pathlib import Path

from . import quantities as Q

ROOT = Path(__file__).resolve().parents[1]

EW = "Echeandia & Wensing (2021), *Numerical Methods to Compute the Coriolis Matrix and Christoffel Symbols for Rigid-Body Systems*"
WS = "Wensing & Slotine, *Coriolis Factorizations and their Connections to Riemannian Geometry*"
CM = "Carpentier & Mansard (2018), *Analytical Derivatives of Rigid Body Dynamics Algorithms*"
FEA = "Featherstone (2008), *Rigid Body Dynamics Algorithms*"
LTDL = "Featherstone (2005), *Efficient Factorization of the Joint-Space Inertia Matrix for Branched Kinematic Trees*"
KH = ("Khatib (1987), *A Unified Approach for Motion and Force Control of Robot Manipulators: The Operational "
      "Space Formulation*")
WO = "Wensing & Orin (2016), *Improved Computation of the Humanoid Centroidal Dynamics and Application for Whole-Body Control*"

#: per sweep of the registry: (the algorithm, its paper, the file that holds it)
ALGORITHMS = {
    "crba": ("the composite-rigid-body algorithm (CRBA) in ground coordinates, or Pinocchio's local convention "
             "where it has fewer operations", FEA, "symgen/algorithms/crba.py"),
    "algorithm1": ("Algorithm 1: M, Ṁ and the Christoffel-consistent C in O(N d)", EW, "symgen/algorithms/coriolis.py"),
    "algorithm2": ("Algorithm 2: all Christoffel symbols in O(N d²) (or eq. 4, the symbolic partials of M, or "
                   "Sec. VI-D's ½(∂τ/∂v + M K), with `--gamma-method`)", EW, "symgen/algorithms/christoffel.py"),
    "rnea": ("the recursive Newton-Euler algorithm (RNEA) in body frames", FEA, "symgen/algorithms/rnea.py"),
    "gravity": ("composite gravity forces (RNEA at q̇ = q̈ = 0)", FEA, "symgen/algorithms/gravity.py"),
    "slotine_li": ("Algorithm 3: the Slotine–Li torque by an O(N) recursion, M and C never formed", WS,
                   "symgen/algorithms/slotine_li.py"),
    "regressor": ("the Slotine–Li regressor Y, Algorithm 3 on the inertial parameters", WS, "symgen/algorithms/regressor.py"),
    "forward_dynamics": ("the articulated-body algorithm (ABA), or the tree-sparse L^T D L factorization of M, "
                         "whichever costs less", f"{FEA}; {LTDL}", "symgen/algorithms/aba.py, symgen/algorithms/forward_dynamics.py"),
    "mass_matrix_inverse": ("the tree-sparse L^T D L factorization of M, or the ABA-like dedicated algorithm", LTDL,
                            "symgen/algorithms/forward_dynamics.py, symgen/algorithms/aba.py"),
    "all_terms": ("Algorithm 1 and the gravity sweep sharing their kinematics", EW, "symgen/algorithms/coriolis.py"),
    "id_derivatives": ("the analytical derivatives of RNEA in ground coordinates", CM, "symgen/algorithms/derivatives.py"),
    "fd_derivatives": ("−M⁻¹ (∂τ/∂q, ∂τ/∂q̇) at q̈ = FD(q, q̇, τ), through the tree-sparse factors", CM,
                       "symgen/algorithms/derivatives.py"),
    "frames": ("forward kinematics in ground coordinates", FEA, "symgen/algorithms/frames.py"),
    "passive": ("the joints' dampers and springs, −D q̇ − K (q − q_ref) (MuJoCo's mj_passive for joints)",
                "MuJoCo's passive forces (mujoco.readthedocs.io, Computation)", "symgen/algorithms/passive.py"),
    "centroidal": ("the CRBA's composite inertias moved to the CoM, column j = IC_j Φ_j", WO, "symgen/algorithms/centroidal.py"),
    "centroidal_momentum": ("the sum of RNEA's net body forces at q̈ = 0, moved to the CoM", WO,
                            "symgen/algorithms/centroidal.py"),
    "frame_motion": ("RNEA's forward pass at q̈ = 0 in world coordinates (classical accelerations)", FEA,
                     "symgen/algorithms/frame_motion.py"),
    "frame_references": ("the LOCAL_WORLD_ALIGNED Jacobians turned into LOCAL (Rᵀ) or moved to the world origin "
                         "(WORLD)", FEA, "symgen/algorithms/frame_references.py"),
    "frame_motion_references": ("the LOCAL_WORLD_ALIGNED velocity, classical drift and J̇ turned into LOCAL or WORLD "
                                "(Pinocchio's definitions)", FEA, "symgen/algorithms/frame_references.py"),
    "frame_velocity_derivatives": ("the forward pass's motions in world coordinates: ∂V/∂q_k = S_k × (V − V_λ(k)), "
                                   "∂V/∂q̇_k = S_k", CM, "symgen/algorithms/frame_derivatives.py"),
    "frame_acceleration_derivatives": ("the forward pass's motions and spatial accelerations in world coordinates, "
                                       "differentiated in closed form", CM, "symgen/algorithms/frame_derivatives.py"),
    "adaptation": ("Algorithm 3, line 9: [Yᵀ s]_j = 𝒴_j(a_j, v_j, w_j)ᵀ (v_j − w_j), Y never formed", WS,
                   "symgen/algorithms/adaptation.py"),
    "momentum": ("composite spatial momenta read through Φ_i and Φ̇_i (eq. 38)", WS, "symgen/algorithms/momentum.py"),
    "kinetic_energy": ("body velocities", WS, "symgen/algorithms/energy.py"),
    "potential_energy": ("world centres of mass", WS, "symgen/algorithms/energy.py"),
    "potential_energy_regressor": ("Algorithm 4 (𝖧_i, 𝖦_i carried up the tree)", WS, "symgen/algorithms/energy.py"),
    "momentum_regressor": ("Algorithm 4", WS, "symgen/algorithms/algorithm4.py"),
    "coriolis_transpose_regressor": ("Algorithm 4", WS, "symgen/algorithms/algorithm4.py"),
    "gravity_regressor": ("Algorithm 4", WS, "symgen/algorithms/algorithm4.py"),
    "kinetic_energy_regressor": ("Algorithm 4", WS, "symgen/algorithms/algorithm4.py"),
    "gravity_power_regressor": ("Algorithm 4", WS, "symgen/algorithms/algorithm4.py"),
    "contact_terms": ("Jc M⁻¹ Jcᵀ through M's tree-sparse L^T D L factors, the unconstrained q̈₀ and the drift; the "
                      "package's solve over the active rows is a hand-written Cholesky", LTDL, "symgen/algorithms/contact.py"),
    "impulse_terms": ("as contact_terms, for the impulse at a touchdown", LTDL, "symgen/algorithms/contact.py"),
    "whole_body": ("one sweep: CRBA, RNEA, frames, centroidal", f"{FEA}; {WO}", "symgen/algorithms/contact.py"),
    "contact_partials": ("the ID derivatives and the contact rows' partials in closed form over the ID sweep's "
                         "quantities", CM, "symgen/algorithms/contact_derivatives.py, symgen/algorithms/contact_acceleration_derivatives.py"),
    "loop_closure": ("the loops' residual φ(q) and its Jacobian K over the spanning coordinates",
                     "Wensing & Slotine, Sec. VI-C (constraint embedding)", "symgen/loop_kinematics.py"),
    "spanning_velocity": ("G(q) v: the spanning tree's rates from the independent speeds",
                          "Wensing & Slotine, Sec. VI-C (constraint embedding)", "symgen/loop_kinematics.py"),
    "opspace_inertia": ("J M⁻¹ Jᵀ through M's tree-sparse L^T D L factors (M⁻¹ never formed), damped by ε and "
                        "inverted by a dense L^T D L of the 6×6 (3×3 for a point); J̄ = L⁻¹ (D⁻¹ L⁻ᵀ Jᵀ Λ)",
                        f"{KH}; {LTDL}", "symgen/algorithms/operational_space.py"),
    "opspace_bias": ("Λ (J M⁻¹ b − J̇ v): b = C v + g by the RNEA at q̈ = 0, J M⁻¹ b by one L⁻ᵀ half solve, J̇ v "
                     "the classical drift", f"{KH}; {LTDL}", "symgen/algorithms/operational_space.py"),
    "opspace_force": ("Λ J M⁻¹ τ by one L⁻ᵀ half solve of τ", f"{KH}; {LTDL}", "symgen/algorithms/operational_space.py"),
}

#: Pinocchio's counterpart of the functions whose rival ``symgen bench`` times in a harness of its own
#: (the registry's ``pin_call`` is None for them)
PINOCCHIO_ELSEWHERE = {
    "contact_terms": "`constraintDynamics` / `forwardDynamics(q, v, tau, J, gamma)` (symgen/bench/contact.py)",
    "impulse_terms": "`impulseDynamics` (symgen/bench/contact.py)",
    "whole_body_terms": "`computeAllTerms` + `getFrameJacobian` + `getFrameClassicalAcceleration` + `ccrba` + `dccrba`",
    "contact_partials": "`computeConstraintDynamicsDerivatives` (symgen/bench/contact.py)",
    "tau_p": "none (−`model.damping` · v; its `aba` leaves it out, `symgen verify` adds it with `--passive`)",
    "Mdot": "none (C + Cᵀ of `computeCoriolisMatrix`, eq. 2, in `symgen verify`)",
    "Y_c": "none (`symgen verify` checks Y_c θ = Cᵀ q̇)",
    "phi": "none (a mechanism's loops: `symgen bench` times the constrained dynamics, symgen/bench/loops.py)",
    "Kl": "none (see loop_residual)",
    "qs": "none (see loop_residual)",
    "Jbar": "none (NumPy from `computeMinverse` and `getFrameJacobian`: symgen/oracle_operational_space.py)",
    "mu_p": "none (NumPy from `computeMinverse`, `getFrameJacobian`, `getFrameClassicalAcceleration` and "
            "`nonLinearEffects`: symgen/oracle_operational_space.py)",
    "f_tau": "none (NumPy from `computeMinverse` and `getFrameJacobian`: symgen/oracle_operational_space.py)",
}
PINOCCHIO_ELSEWHERE.update(Q.references.PINOCCHIO)        # the frame functions in LOCAL and WORLD, the frame derivatives

#: the size names of the shapes' symbols
DIMENSIONS = {"n": "nv", "F": "frames", "m": "contact rows", "C": "contacts", "P": "ancestor pairs",
              "S": "packed ∂Jcᵀ/∂q"}
_BODIES, _FRAMES = 7919, 7907          # sizes no robot dimension here takes: recognized in the shapes


class _Dim:
    """A named size in a shape (nv, nq, ...), for shapes computed on :class:`_Probe`."""

    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return self.name


class _Frame:
    def __init__(self, name):
        self.name = name


class _Probe:
    """A stand-in robot whose sizes are names: an output's shape function run on it gives its
    shape in words."""
    nv, nq = _Dim("nv"), _Dim("nq")
    loop_rows = _Dim("loop rows")
    link_names = tuple(f"link{i}" for i in range(_BODIES))
    leaf_links = tuple(f"frame{i}" for i in range(_FRAMES))
    frame_names = leaf_links

    class system:
        rows = _Dim("loop rows")

    class full:
        n = _Dim("tree joints")

    def frame(self, name):
        return _Frame(name)


def shape_text(output) -> str:
    """An output's shape in words, e.g. ``(nv, nv)``, ``(frames, 6, nv)``, ``scalar``."""
    fn = output.shape
    names = fn.__code__.co_freevars
    if "dims" in names:                                      # _shape(*dims) of a family's module
        dims = fn.__closure__[names.index("dims")].cell_contents
        parts = [DIMENSIONS.get(d, str(d)) for d in dims]
    else:
        parts = []
        for d in fn(_Probe(), Q.SweepOptions()):
            if isinstance(d, _Dim):
                parts.append(d.name)
            elif d == 10 * _BODIES:
                parts.append("10·bodies")
            elif d == _FRAMES:
                parts.append("frames")
            elif isinstance(d, int):
                parts.append(str(d))
            else:
                raise ValueError(f"output {output.name}: a size {d!r} the reference cannot name")
    return "scalar" if not parts else f"({', '.join(parts)}{',' if len(parts) == 1 else ''})"


def pinocchio_text(x) -> str:
    if x.pin_call is not None:
        calls = " / ".join(f"`{name}`" for name in dict.fromkeys(x.pin_call.python))
        return calls + (f" ({x.pin_call.note})" if x.pin_call.note else "")
    if x.key in PINOCCHIO_ELSEWHERE:
        return PINOCCHIO_ELSEWHERE[x.key]
    raise KeyError(f"quantity {x.key!r}: no Pinocchio counterpart in the registry nor in PINOCCHIO_ELSEWHERE")


#: the headings of the registry's families (its modules); a new family without one is headed by its module's name
FAMILIES = {"core": "Dynamics, derivatives and frames", "centroidal": "Centre of mass, centroidal momentum, frame motion",
            "appendix_b": "Appendix B: adaptation, momentum, energies and their regressors",
            "contact": "Contact and whole-body terms (`--contacts`)", "loops": "Mechanisms with loops",
            "references": "Frames in LOCAL and WORLD (`--reference`), frame velocity and acceleration derivatives",
            "operational_space": "Operational-space dynamics (`--opspace-damping`)"}


def _families():
    out = []
    for module in Q._MODULES:
        keys = [x.key for x in getattr(module, "QUANTITIES", ())]
        if keys:
            name = module.__name__.rsplit(".", 1)[-1]
            out.append((name, FAMILIES.get(name, name), keys))
    return out


def _default(x) -> str:
    """Whether a default build has the function."""
    if x.key in Q.contact.CONTACT_KEYS:
        return "with `--contacts`"
    if x.key in Q.loops.LOOP_KEYS:
        return "robots with loops"
    if x.key in Q.PASSIVE_KEYS:
        return "robots with joint dampers or springs"
    return "yes" if x.default else "on request"


def functions_page() -> str:
    """The Markdown of every generated function, family by family, in the registry's order."""
    missing = sorted(set(Q.SWEEPS) - set(ALGORITHMS))
    if missing:
        raise KeyError(f"sweeps without an entry in symgen.docs_reference.ALGORITHMS: {', '.join(missing)}")
    lines = ["| function | key | returns | default build |", "|---|---|---|---|"]
    for x in Q.QUANTITIES.values():
        shapes = ", ".join(f"{o.name} {shape_text(o)}" for o in x.outputs)
        lines.append(f"| [`{x.function}`](#{x.function}) | `{x.key}` | {shapes} | {_default(x)} |")
    lines.append("")
    arguments = ", ".join(f"`{a.name}` ({a.size}: {a.doc})" for a in Q.ARGUMENTS.values())
    lines += [f"Arguments: {arguments}. Sizes: nv velocities, nq coordinates (nv + 1 with a free-flyer), "
              "10·bodies the inertial parameters (10 per body in `link_names` order), frames the package's "
              "`frames`, contact rows 3 per point contact and 6 per flat one.", ""]
    for name, title, keys in _families():
        lines += [f"## {title} {{#family-{name}}}", ""]
        for key in keys:
            x = Q.QUANTITIES[key]
            algorithm, paper, source = ALGORITHMS[x.sweep]
            signature = ", ".join(x.arguments) + ("[, params]" if x.inertial else "")
            lines += [f"### `{x.function}` {{#{x.function}}}", "",
                      f"`{x.function}({', '.join(x.arguments)})`: {x.doc}", "",
                      "| | |", "|---|---|",
                      f"| key | `{x.key}` (`symgen build --quantities {x.key}`); default build: {_default(x)} |",
                      f"| arguments | {', '.join(f'`{a}` ({Q.ARGUMENTS[a].size})' for a in x.arguments)}"
                      + ("; with `--parametric` also `params` last" if x.inertial else "") + " |",
                      f"| returns | {', '.join(f'`{o.name}` {shape_text(o)}' for o in x.outputs)} |",
                      f"| algorithm | {algorithm} (sweep `{x.sweep}`, `{source}`) |",
                      f"| paper | {paper} |",
                      f"| Pinocchio | {pinocchio_text(x)} |",
                      f"| C | `NAME_{x.function}({signature}, {', '.join(o.name for o in x.outputs)})`, "
                      f"`_update`, `_work`, `_update_work`, `_batch`, `_batch_threads`, `_batch_work` |", ""]
    return "\n".join(lines)


def c_contract() -> str:
    """The C API's contract: the header template's comments on the file, the lanes and the
    functions, with its placeholders named NAME / name."""
    text = (ROOT / "templates" / "c_header.h.j2").read_text(encoding="utf-8")
    words = {"PREFIX": "NAME", "prefix": "name", "robot_comment": "NAME"}
    text = re.sub(r"\{\{\s*(\w+)[^}]*\}\}", lambda m: words.get(m[1], m[1]), text)
    comments = [c for c in re.findall(r"/\*(.*?)\*/", text, re.S) if "{{" not in c and "{%" not in c]
    paragraphs = []
    for c in comments:
        body = " ".join(line.strip().lstrip("*").strip() for line in c.strip().splitlines())
        if len(body) > 60:                                   # the contract, not the one-line labels
            paragraphs.append(body)
    if not paragraphs:
        raise ValueError("templates/c_header.h.j2: no contract comment found")
    return "```text\n" + "\n\n".join(textwrap.fill(p, 100) for p in paragraphs) + "\n```"


def c_declarations(package: str = "arm4") -> str:
    """The declarations of the committed showcase's header (``generated/NAME/NAME.h``)."""
    header = (ROOT / "generated" / package / f"{package}.h").read_text(encoding="utf-8")
    keep = [line for line in header.splitlines()
            if line.startswith(("void ", "int ", "extern const"))
            or line.startswith("#define") and line.split()[1].endswith(("_NQ", "_NV", "_WORK_BYTES", "_NPARAMS"))]
    return "```c\n" + "\n".join(keep) + "\n```"
