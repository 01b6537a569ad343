"""Fuzzing the URDF reader (issue 5): valid URDFs, mutated — elements dropped or duplicated,
attributes set to random or hostile text, text inserted, the file truncated (also mid UTF-8
character) — give either a Robot whose mass matrix is finite and symmetric, or a SymgenError
whose message is one line starting with the file name. Anything else (a traceback, an inf) fails.

The default run tries a fixed (derandomized) sample; ``python -m pytest -m fuzz`` runs at least
2,000 random examples (``SYMGEN_FUZZ_EXAMPLES`` to change it). A failure prints the falsifying
example (base, mutations, text) and a ``@reproduce_failure`` blob; ``--hypothesis-seed=N``
replays a whole run.
"""
from __future__ import annotations

import copy
import os
import tempfile
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, note, settings
from hypothesis import strategies as st

import symgen
from symgen import robots
from symgen.errors import SymgenError
from symgen.model import Robot
from symgen.urdf import load_urdf, parse_urdf_string, urdf_string

EXAMPLE = Path(symgen.__file__).resolve().parent / "examples" / "arm4.urdf"
_INERTIAL = ('<inertial><origin xyz="0.01 0 0.02" rpy="0 1.5707963267948966 0"/><mass value="0.5"/>'
             '<inertia ixx="0.01" ixy="0" ixz="0" iyy="0.02" iyz="0" izz="0.025"/></inertial>')
FEATURES = (   # fixed joints lumped above and below movable ones, a mimic, a prismatic, a continuous
    '<?xml version="1.0"?>\n<robot name="features"><link name="base"/>'
    f'<link name="a">{_INERTIAL}</link><link name="b">{_INERTIAL}</link><link name="c">{_INERTIAL}</link>'
    f'<link name="tool">{_INERTIAL}</link><link name="d">{_INERTIAL}</link>'
    '<joint name="fix0" type="fixed"><parent link="base"/><child link="a"/><origin xyz="0 0 0.1"/></joint>'
    '<joint name="j1" type="revolute"><parent link="a"/><child link="b"/><axis xyz="0 0 1"/>'
    '<limit lower="-1" upper="1" effort="1" velocity="1"/></joint>'
    '<joint name="j2" type="prismatic"><parent link="b"/><child link="c"/><origin xyz="0.2 0 0" rpy="0 0 1.5707963267948966"/>'
    '<axis xyz="1 0 0"/><mimic joint="j1" multiplier="2" offset="0.1"/></joint>'
    '<joint name="fix1" type="fixed"><parent link="c"/><child link="tool"/></joint>'
    '<joint name="j3" type="continuous"><parent link="b"/><child link="d"/><axis xyz="0 1 0"/></joint></robot>\n')
BASES = (EXAMPLE.read_text(encoding="utf-8"), urdf_string(robots.make("tree", 4, 1)),
         urdf_string(robots.make("biped", 4, 2)), FEATURES)
ATTRIBUTES = ("name", "type", "link", "xyz", "rpy", "value", "ixx", "ixy", "iyy", "izz", "joint", "multiplier", "offset")
HOSTILE_TEXT = ("", " ", "0", "1", "-1", "nan", "inf", "-inf", "1e400", "1e308", "1e-400", "0x10", "1_000", "0 0",
                "0 0 0", "0 0 0 0", "1 0 0", "0 1e308 0", "1e200 1e200 1e200", "1e154", "0 0 0.0000000001", "1e12 0 0", "fixed", "revolute", "prismatic",
                "continuous", "floating", "planar", "base", "world", "floating_rz", "a", "j1", "link1", "\u00e9",
                "__import__('os').system('touch PWNED')", 'x"); system("touch PWNED', "-0", "+.5e-3", "1.5707963267948966")


EXTREMES = ("0", "1", "-2", "0.5", "1e308", "-1e200", "1e154", "1e-300", "nan", "1e12", "1e13", "1e400")


@st.composite
def _text(draw):
    return draw(st.one_of(
        st.sampled_from(HOSTILE_TEXT),
        st.text(max_size=12),
        st.lists(st.floats(allow_nan=True, allow_infinity=True), min_size=0, max_size=4).map(
            lambda xs: " ".join(repr(x) for x in xs)),
        st.lists(st.sampled_from(EXTREMES), min_size=1, max_size=4).map(" ".join),
    ))


_OPS = st.one_of(
    st.tuples(st.just("drop"), st.integers(0, 10**6)),
    st.tuples(st.just("duplicate"), st.integers(0, 10**6)),
    st.tuples(st.just("attribute"), st.integers(0, 10**6), st.integers(0, 10**6), st.sampled_from(ATTRIBUTES), _text()),
    st.tuples(st.just("remove-attribute"), st.integers(0, 10**6), st.integers(0, 10**6)),
    st.tuples(st.just("move"), st.integers(0, 10**6), st.integers(0, 10**6)),
    st.tuples(st.just("numbers"), st.integers(0, 10**6), st.integers(0, 10**6),
              st.lists(st.sampled_from(EXTREMES), min_size=3, max_size=3)),
)
NUMERIC = ("origin", "axis", "mass", "inertia", "mimic")


def _mutate(text: str, ops) -> str:
    """``ops`` applied to the element tree of ``text`` (indices taken modulo the element count)."""
    root = ET.fromstring(text)
    for op, k, *rest in ops:
        parents = {child: parent for parent in root.iter() for child in parent}
        elements = [e for e in root.iter() if e is not root]
        if op == "numbers":                 # a numeric attribute, same count, extreme values
            elements = [e for e in elements if e.tag in NUMERIC and e.attrib]
        if not elements:
            continue
        el = elements[k % len(elements)]
        if op == "drop":
            parents[el].remove(el)
        elif op == "duplicate":
            parent = parents[el]
            parent.insert(list(parent).index(el) + 1, copy.deepcopy(el))
        elif op == "attribute":             # mostly an attribute the element has, sometimes any
            j, name, value = rest
            el.set(sorted(el.attrib)[j % len(el.attrib)] if el.attrib and j % 4 else name, value)
        elif op == "remove-attribute" and el.attrib:
            del el.attrib[sorted(el.attrib)[rest[0] % len(el.attrib)]]
        elif op == "numbers":
            j, values = rest
            name = sorted(el.attrib)[j % len(el.attrib)]
            el.set(name, " ".join(values[:len(el.get(name).split())] or values[:1]))
        elif op == "move":
            target = ([root] + elements)[rest[0] % (len(elements) + 1)]
            if el is not target and el not in target.iter() and target not in el.iter():
                parents[el].remove(el)
                target.append(el)
    return ET.tostring(root, encoding="unicode")


@st.composite
def cases(draw):
    """(text or bytes, floating_base, how it was made): a base URDF, mutated, maybe cut or spliced."""
    base = draw(st.integers(0, len(BASES) - 1))
    ops = draw(st.lists(_OPS, max_size=4))
    text = _mutate(BASES[base], ops)
    tail = draw(st.sampled_from(["none"] * 5 + ["truncate", "truncate-bytes", "splice"]))   # most reach the model
    if tail == "truncate":
        text = text[:draw(st.integers(0, len(text)))]
    elif tail == "splice":
        at = draw(st.integers(0, len(text)))
        text = text[:at] + draw(st.sampled_from(["<", ">", "&", "</robot>", "<!--", "\x00", "\"", "<link/>",
                                                  "<joint/>", "&#0;", "\u00e9", "]]>"])) + text[at:]
    data = text.encode("utf-8")
    if tail == "truncate-bytes":
        data = data[:draw(st.integers(0, len(data)))]
    floating_base = draw(st.booleans())
    note(f"base {base}, ops {ops}, tail {tail}, floating_base {floating_base}")
    return data, floating_base


def check_robot_or_symgen_error(case):
    data, floating_base = case
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "fuzz.urdf"
        path.write_bytes(data)
        try:
            robot = load_urdf(path, floating_base=floating_base)
        except SymgenError as exc:
            message = str(exc)
            assert "\n" not in message and "\r" not in message, message
            assert message.startswith(f"{path}: "), message
            return
    assert isinstance(robot, Robot) and robot.n >= 1
    q = np.linspace(-1.0, 2.0, robot.nq)           # a free-flyer's quaternion: any non-zero 4 numbers
    M = symgen.mass_matrix(robot, q)
    assert np.all(np.isfinite(M)) and np.allclose(M, M.T, rtol=1e-9, atol=1e-12), M
    if not floating_base:      # the string entry point agrees with the file one
        assert parse_urdf_string(data.decode("utf-8"), source=str(path)).joint_names == robot.joint_names


def test_every_base_is_a_valid_robot():
    for text in BASES:
        check_robot_or_symgen_error((text.encode(), False))
        assert parse_urdf_string(text).n >= 3


COMMON = dict(deadline=None, print_blob=True, suppress_health_check=[HealthCheck.too_slow])


@settings(max_examples=150, derandomize=True, **COMMON)
@given(case=cases())
def test_mutated_urdf_gives_a_robot_or_a_one_line_symgen_error(case):
    check_robot_or_symgen_error(case)


@pytest.mark.fuzz
@pytest.mark.slow
@settings(max_examples=int(os.environ.get("SYMGEN_FUZZ_EXAMPLES", "2500")), **COMMON)
@given(case=cases())
def test_fuzz_mutated_urdf_gives_a_robot_or_a_one_line_symgen_error(case):
    check_robot_or_symgen_error(case)
