"""The contact family (issue #25, items 5 and 7): the build-time terms of contact and impulse
dynamics over the build's contact frames (``--contacts FL_FOOT,FR_FOOT:6d,...``: a point contact,
``:3d``, by default, or a flat one, ``:6d``), from which the package's hand-written solve
(``contact_dynamics``, ``impulse_dynamics``: ``templates/contact_solve*.j2``) takes the rows of the
contacts active at run time; and ``whole_body_terms``, a whole-body controller's tick from one
sweep. Pinocchio's side: :mod:`symgen.oracle_contact`.

Contacts are frames of the build: a link or joint named in ``--contacts`` joins ``--frames``
(:func:`frames_with_contacts`); a point must be declared in ``--frames`` (``name=LINK@x,y,z``).
Without ``--contacts``, every frame of the build is a point contact. ``--mimic`` builds have no
contact functions (:data:`symgen.mimic.REDUCED` has no reduced contact system yet).
"""
from __future__ import annotations

from .. import oracle_contact as ocn
from ..algorithms.contact import ROWS
from ..errors import OptionError
from .base import Output, Quantity, Sweep
from .sweeps import frames_of

KINDS = tuple(ROWS)
#: contact_dynamics_derivatives' path ranges widened to multiples of this many columns (whole vectors)
PATH_ALIGN = 4
#: its rows padded to a multiple of this many columns (whole AVX-512 vectors: solo12's 51 columns as 52
#: took 6.2 us a call, as 56 5.8)
WIDTH_ALIGN = 8


def solve_columns(robot) -> tuple[int, int]:
    """(skip, width) of contact_dynamics_derivatives' rows (q's columns less the ``skip`` leading ones that
    are zero whatever the state, :func:`~symgen.algorithms.contact.zero_columns`, then qd's and tau's: 3n -
    skip columns, padded to ``width``, a multiple of WIDTH_ALIGN)."""
    from ..algorithms.contact import zero_columns

    skip = zero_columns(robot)
    return skip, -(-(3 * robot.nv - skip) // WIDTH_ALIGN) * WIDTH_ALIGN

#: rows a contact of each kind constrains
DIMS = {kind: len(rows) for kind, rows in ROWS.items()}


def parse_contacts(text: str | None) -> tuple:
    """``--contacts`` text, a comma list of frame names each with an optional ``:3d`` (point
    contact, the default) or ``:6d`` (flat contact), as ((name, kind), ...); None: ()."""
    if text is None:
        return ()
    out = []
    for word in (w.strip() for w in str(text).split(",")):
        name, _, kind = word.partition(":")
        name, kind = name.strip(), (kind.strip().lower() or "3d")
        if not name:
            raise OptionError(f"--contacts: empty frame name in {text!r}; expected FRAME[:3d|:6d],...")
        if kind not in KINDS:
            raise OptionError(f"--contacts: frame {name!r}: unknown contact type {kind!r}; expected 3d or 6d")
        if name in (n for n, _ in out):
            raise OptionError(f"--contacts: frame {name!r} is named twice")
        out.append((name, kind))
    return tuple(out)


def frames_with_contacts(robot, frames, contacts):
    """``--frames`` (None: the leaf links) with each contact frame not among them appended; a
    contact that is no link, joint or point of the build is an OptionError naming it."""
    names = tuple(f.name for f in frames_of(robot, frames))
    extra = []
    for name, _ in contacts:
        if name in names or name in extra:
            continue
        if name not in robot.frame_names:
            raise OptionError(f"--contacts: unknown frame {name!r} (robot {robot.name!r}: a link or joint, or a "
                              f"point declared in --frames as {name}=LINK@x,y,z)")
        extra.append(name)
    if not extra:
        return frames
    return tuple(frames if frames is not None else robot.leaf_links) + tuple(extra)


def contacts_of(robot, opts):
    """((Frame, kind), ...) of the build's contacts (every frame as a point contact by default)."""
    frames = frames_of(robot, opts.frames)
    by_name = {f.name: f for f in frames}
    if not opts.contacts:
        return tuple((f, "3d") for f in frames)
    missing = [name for name, _ in opts.contacts if name not in by_name]
    if missing:
        raise OptionError(f"--contacts: frame {missing[0]!r} is not a frame of the build (--frames)")
    return tuple((by_name[name], kind) for name, kind in opts.contacts)


def contact_size(robot, opts) -> int:
    """m: the rows of every contact (3 a point, 6 a flat one)."""
    return sum(DIMS[kind] for _, kind in contacts_of(robot, opts))


def _terms(impulse, mass=None):
    """The run of contact_terms (impulse_terms) with M by the CRBA of ``mass`` (None: the build's frame)."""
    def run(robot, args, bk, opts):
        from ..algorithms.contact import contact_terms

        frames, kinds = zip(*contacts_of(robot, opts))
        return contact_terms(robot, args["q"], args["qd"], args.get("tau"), frames, kinds, bk, mass or opts.frame,
                             gravity=opts.gravity, impulse=impulse, f_ext=args.get("f_ext"))
    run.__name__ = f"{'impulse' if impulse else 'contact'}_terms_{mass or 'frame'}"
    if mass == "local":
        from ..kinematics import local_frames_pay

        run.applies = local_frames_pay
    return run


def _contact_partials(robot, args, bk, opts):
    """The run of contact_partials (:mod:`symgen.algorithms.contact_derivatives`): the ground ID-derivative
    sweep and the contact rows' closed forms."""
    from ..algorithms.contact_derivatives import contact_partials

    frames, kinds = zip(*contacts_of(robot, opts))
    return contact_partials(robot, args["q"], args["qd"], args["qdd"], frames, kinds, bk, gravity=opts.gravity,
                            f_ext=args.get("f_ext"))


def _whole_body(robot, args, bk, opts):
    from .. import algorithms as alg
    from ..algorithms.centroidal import centroidal_map, centroidal_momentum
    from ..algorithms.frame_motion import frame_motion

    q, qd = args["q"], args["qd"]
    frames = [f for f, _ in contacts_of(robot, opts)]
    _, Jc = alg.frame_kinematics_ground(robot, q, frames, bk)
    centroidal = centroidal_map(robot, q, bk)
    crba = alg.crba_ground if opts.frame == "ground" else alg.crba
    return {"M": crba(robot, q, bk), "nle": alg.rnea(robot, q, qd, bk.zeros(robot.n), bk, gravity=opts.gravity),
            "g": alg.gravity(robot, q, bk, gravity=opts.gravity), "Jc": Jc,
            "dJv": frame_motion(robot, q, qd, frames, bk)["af"], "Ag": centroidal["Ag"],
            "dhg": centroidal_momentum(robot, q, qd, bk)["dhg"], "com": centroidal["com"]}


SWEEPS = (
    # variants: M by the CRBA in body frames or in Pinocchio's local convention (solo12: 907 operations
    # against 1,711 in ground coordinates), whichever makes the whole sweep cheapest
    Sweep("contact_terms", ("q", "qd", "tau"), _terms(False), variants=(_terms(False, "body"), _terms(False, "local")),
          external=True),
    Sweep("impulse_terms", ("q", "qd"), _terms(True), variants=(_terms(True, "body"), _terms(True, "local"))),
    Sweep("whole_body", ("q", "qd"), _whole_body),
    Sweep("contact_partials", ("q", "qd", "qdd"), _contact_partials, external=True),
)


def _shape(*dims):
    """A shape from fixed sizes, "n" (nv), "m" (the contacts' rows), "C" (the contacts), "P" (the
    (joint, strict ancestor) pairs, :func:`~symgen.algorithms.contact.ancestor_pairs`) and "S" (contact_partials'
    packed dJ, :func:`~symgen.algorithms.contact.packed_rows`)."""
    def shape(robot, opts):
        from ..algorithms.contact import ancestor_pairs, packed_rows, packed_size

        size = {"n": robot.nv, "P": max(1, len(ancestor_pairs(robot.parent)))}
        if "S" in dims:
            frames, kinds = zip(*contacts_of(robot, opts))
            size["S"] = packed_size(packed_rows(robot, frames, kinds))
        if "m" in dims:
            size["m"] = contact_size(robot, opts)
        if "C" in dims:
            size["C"] = len(contacts_of(robot, opts))
        return tuple(size.get(d, d) for d in dims)
    shape.dims = dims                        # the header's size macros (codegen/files.py: shape_text)
    return shape


_KC = Output("Kc", _shape("m", "m"), embed="solve")
_XT = (Output("Wc", _shape("m", "n"), embed="solve"), Output("Lc", _shape("P"), embed="solve"))

#: no ``pin_call``: Pinocchio's rivals need its contact models, which the registry-wide C++ harness does not
#: build; ``symgen bench`` times them in a harness of their own (:mod:`symgen.bench.contact`)
QUANTITIES = (
    Quantity("contact_terms", "contact_terms", ("q", "qd", "tau"),
             (_KC, *_XT, Output("qdd0", _shape("n"), embed="solve"), Output("rc", _shape("m"), embed="solve"),
              Output("Dinv", _shape("n"), embed="solve")),
             "Contact dynamics' build-time terms over every contact's rows (m = 3 a point, 6 a flat contact): "
             "(Kc = Jc M^-1 Jc^T (m, m), Wc = (D^-1 L^-T Jc^T)^T (m, n) and L's entries below the diagonal at "
             "the (joint, ancestor) pairs of M = L^T D L, so that M^-1 Jc^T = L^-1 Wc^T, qdd0 = M^-1 (tau - b) (n,), "
             "-Jc_dot qd - Jc qdd0 (m,), D^-1 (n,) of M = L^T D L); "
             "contact_dynamics solves the active rows.", "contact_terms",
             pinocchio=lambda o, s: ocn.contact_terms(o, s["q"], s["qd"], s["tau"], s.get("f_ext")), conditioned=True, default=False),
    Quantity("impulse_terms", "impulse_terms", ("q", "qd"), (_KC, *_XT, Output("Jv", _shape("m"), embed="solve")),
             "Impulse dynamics' build-time terms: (Kc (m, m), Wc (m, n), L's packed entries, Jc qd (m,)) "
             "as contact_terms'; impulse_dynamics solves the active rows.", "impulse_terms",
             pinocchio=lambda o, s: ocn.impulse_terms(o, s["q"], s["qd"]), conditioned=True, default=False),
    Quantity("whole_body_terms", "whole_body_terms", ("q", "qd"),
             (Output("M", _shape("n", "n"), embed="matrix"), Output("nle", _shape("n"), embed="vector"),
              Output("g", _shape("n"), embed="vector"), Output("Jc", _shape("C", 6, "n"), embed="columns"),
              Output("dJv", _shape("C", 6), embed="none"), Output("Ag", _shape(6, "n"), embed="columns"),
              Output("dhg", _shape(6), embed="none"), Output("com", _shape(3), embed="none")),
             "A whole-body controller's tick from one sweep: (M, nle = C qd + g, g, the contacts' Jacobians "
             "(contacts, 6, n) and classical J_dot qd (contacts, 6), LOCAL_WORLD_ALIGNED, A_G (6, n), A_G_dot qd (6,), "
             "CoM (3,)).", "whole_body",
             pinocchio=lambda o, s: ocn.whole_body_terms(o, s["q"], s["qd"]), default=False),
    Quantity("contact_partials", "contact_partials", ("q", "qd", "qdd"),
             (Output("Tq", _shape("n", "n"), embed="solve"), Output("Tv", _shape("n", "n"), embed="solve"),
              Output("dJ", _shape("S"), embed="solve"),
              Output("Jc", _shape("m", "n"), embed="solve"),
              Output("Aq", _shape("m", "n"), embed="solve"), Output("Av", _shape("m", "n"), embed="solve")),
             "Contact dynamics derivatives' build-time terms over every contact's rows at (q, qd, qdd): "
             "(dID/dq, dID/dqd (n, n), d(Jc_r^T)/dq packed: per contact row its block on the joints "
             "that move the contact (support x support, row-major), the contact rows Jc (m, n), d(Jc qdd + Jc_dot qd)/dq, "
             "d(Jc_dot qd)/dqd (m, n)), q derivatives in the tangent space; contact_dynamics_derivatives "
             "solves the active rows.", "contact_partials",
             conditioned=True, default=False),
)


def package_context(robot, opts, functions) -> dict:
    """What the package templates print of the contacts: ``contacts_literal`` (the package's
    ``contacts`` attribute; () without contact functions) and ``contact``, the hand-written solve's
    sizes when the build has contact_terms or impulse_terms (None otherwise, and in --parametric and
    --mimic builds, whose contact functions take other arguments: no solve is printed there)."""
    from ..codegen.names import py_literal

    built = {"contact_terms", "impulse_terms", "whole_body_terms"} & set(functions)
    contacts = tuple((f.name, kind) for f, kind in contacts_of(robot, opts)) if built else ()
    literal = "(" + "".join(f"({py_literal(n)}, {py_literal(k)}), " for n, k in contacts) + ")"
    solve = {"contact_terms", "impulse_terms"} & set(functions)
    if not solve or opts.parametric or robot.embedding is not None:
        return {"contacts_literal": literal, "contact": None}
    from ..algorithms.contact import ancestor_pairs, contact_supports, packed_rows, packed_size, path_ranges

    dims = [DIMS[kind] for _, kind in contacts]
    row0 = [sum(dims[:k]) for k in range(len(dims))]
    pairs = ancestor_pairs(robot.parent)
    start = [sum(1 for i, _ in pairs if i < k) for k in range(robot.nv + 1)]
    by_col = sorted(range(len(pairs)), key=lambda p: (pairs[p][1], pairs[p][0]))
    # per contact, the joints that move it (its body's ancestors): the only rows and columns of its
    # d(Jc_r^T)/dq that can be nonzero
    frames, kinds = zip(*contacts_of(robot, opts))
    support = contact_supports(robot, frames)
    blocks = packed_rows(robot, frames, kinds)
    # contact_dynamics_derivatives' columns: q (less its leading zero ones), qd, tau, padded to whole vectors
    skip, width = solve_columns(robot)
    path = path_ranges(robot.parent, PATH_ALIGN, width, skip)
    return {"contacts_literal": literal, "contact": {
        "support": [j for s in support for j in s] or [0],
        "support_start": [sum(len(s) for s in support[:k]) for k in range(len(support) + 1)],
        "row_contact": [k for k, d in enumerate(dims) for _ in range(d)],
        "dj_start": [offset for offset, _ in blocks], "dj_size": packed_size(blocks),
        "back": [(i, j, p, path[i]) for p, (i, j) in sorted(enumerate(pairs), key=lambda e: -e[1][0])],
        "path_ranges": path,
        "width": width, "skip": skip,
        "dj_literal": repr(tuple((offset, tuple(s)) for offset, s in blocks)),
        "pairs": len(pairs), "start": start, "col": [j for _, j in pairs],
        # the same pairs by column (ancestor j): its descendants k and the pair's place in Lc, so L^-1 u can push
        # each final u_j to the rows below it (independent updates, no chain through one row)
        "by_col_start": [sum(1 for _, j in pairs if j < k) for k in range(robot.nv + 1)],
        "by_col_row": [pairs[p][0] for p in by_col], "by_col_pos": by_col,
        "count": len(dims), "m": sum(dims), "dims": dims, "row0": row0,
        "fused": _fused(support, dims, row0),
        "rows_literal": repr(tuple(tuple(range(r, r + d)) for r, d in zip(row0, dims))),
        "comment": ", ".join(f"{n} {k}" for n, k in contacts).replace("*/", "* /"),
        "dynamics": "contact_terms" in functions, "impulse": "impulse_terms" in functions,
        "derivatives": {"contact_terms", "contact_partials"} <= set(functions)}}


#: the most contact rows whose G, H = K^-1 G chunks contact_dynamics_derivatives holds in vector registers
FUSED_ROWS = 12


def _fused(support, dims, row0):
    """contact_dynamics_derivatives' three K_a / Wc products fused for all contacts active, column chunk by
    chunk of 8 (templates/contact_solve.c.j2; the rows' width is a multiple of WIDTH_ALIGN = 8): per contact
    its rows and support, per joint of the supports' union the rows whose contact it moves; None past
    FUSED_ROWS rows (their chunks would not fit the registers)."""
    if sum(dims) > FUSED_ROWS:
        return None
    rows = [list(range(r, r + d)) for r, d in zip(row0, dims)]
    joints = sorted({j for s in support for j in s})
    return {"contacts": [(r, list(s)) for r, s in zip(rows, support)],
            "joints": [(j, [t for r, s in zip(rows, support) if j in s for t in r]) for j in joints]}


#: the quantities ``symgen build --contacts`` adds to the default ones
CONTACT_KEYS = ("contact_terms", "impulse_terms", "whole_body_terms", "contact_partials")


def check_build(robot, opts, keys) -> None:
    """A build's contacts against its robot and quantities: OptionErrors naming ``--contacts``."""
    wanted = set(CONTACT_KEYS) & set(keys)
    if robot.embedding is not None and wanted - {"whole_body_terms"}:
        raise OptionError("--contacts: contact_terms and impulse_terms are not generated with --mimic yet "
                          "(--quantities whole_body_terms is)")
    if wanted:
        contacts_of(robot, opts)
