"""Hostile input and safe output (issue 5). Properties checked, one test or family each:

- injection: robot, link and joint names made of quotes, backslashes, newlines, comment and
  docstring delimiters, template and format syntax, unicode, keywords, coding cookies ... never
  reach generated code: the code outside string literals and comments is token for token the code
  of the same robot with plain names, the package imports and runs, the names come back exactly
  (Python, manifest, C), and no ``touch PWNED`` payload runs while building, importing or calling;
- package identifiers: keywords, leading digits, shadowed modules, long names, path tricks;
- numbers: nan, inf, 1e400, 0x10, 1_000, empty, extra or missing components, zero axis, an
  expression, in every numeric attribute: a one-line URDFError naming file, element and reason;
- structure: loops, two roots, dangling joints, duplicates, 0 DoF, a 200-body chain;
- output safety: a failure or an interruption at any point, SIGTERM and SIGKILL of ``symgen
  build``, no --force, read-only or missing output folder;
- determinism across PYTHONHASHSEED and working directory, for hostile names and a tree;
- C hygiene: -Wall -Wextra -Wpedantic -std=c99 -Werror, the header from C++, and every function
  run on random inputs under -fsanitize=address,undefined.

What XML cannot carry: a NUL (raw or as ``&#0;``) makes the file malformed XML, a one-line
URDFError. A Robot built in Python may still hold one: the Python literals keep it, the C string
ends there (documented in ``symgen.codegen.names.c_literal``). External entities are not read, and
entity expansion ("billion laughs") is refused by expat: both are malformed-XML errors.
"""
from __future__ import annotations

import dataclasses
import errno
import io
import json
import os
import shlex
import shutil
import signal
import subprocess
import sys
import sysconfig
import time
import tokenize
from pathlib import Path
from xml.sax.saxutils import quoteattr

import numpy as np
import pytest
from click.testing import CliRunner

import symgen
from symgen import quantities as Q, robots
from symgen.cli import main
from symgen.codegen import package
from symgen.codegen.build import BuildOptions, Progress as BuildProgress, build, import_package
from symgen.codegen.names import c_literal, comment_text, identifier, py_literal
from symgen.errors import SymgenError, URDFError
from symgen.urdf import load_urdf, parse_urdf_string, write_urdf
from support import ARITY as DEFAULT_ARITY

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "symgen" / "examples" / "arm4.urdf"
PAYLOAD = 'x"); system("touch PWNED'
DOCSTRING_BREAKER = '"""+__import__("os").system("touch PWNED")+"""'     # the robot name lands in docstrings

HOSTILE = [                      # the first half name joints, the second half links (see the fixture)
    PAYLOAD,
    "joint", "Joint", "JOINT",
    "a-b", "a_b", "a b", "a.b",
    '"""+__import__("os").system("touch PWNED")+"""',
    "'''+__import__('os').system('touch PWNED')+'''",
    '*/ system("touch PWNED"); /*',
    '\\\nsystem("touch PWNED"); // \\',
    "line one\nimport os; os.system('touch PWNED')\r\n#",
    "# coding=utf-7 +AAo-__import__(+ACI-os+ACI-).system(+ACI-touch PWNED+ACI-)",
    "{{ 7*7 }}{% raw %}{# x #}",
    "%s%n%x%(name)s%%",
    "J\u00f6int \u00fcn\u00efc\u00f8d\u00e9 \u2713 \U0001F600 \u202eevil\u202c",
    "9lives",
    "int", "return", "class", "None",
    "??/??=??'",
    "tab\there",
    "</robot><robot name='x'>&amp;<>",
    "j" * 3000,
]


def _pwned(*folders):
    """Every file the payloads would create (``PWNED``) under these folders."""
    return sorted(str(p) for d in folders for p in Path(d).rglob("PWNED"))


def _inertial(m="1"):
    return (f'<inertial><mass value="{m}"/><origin xyz="0.1 0.02 0.03"/>'
            '<inertia ixx="0.1" ixy="0" ixz="0" iyy="0.2" iyz="0" izz="0.25"/></inertial>')


def _hub_urdf(robot_name, joint_names, link_names):
    """base -> joints[0] -> hub -> one revolute child per further joint (depth 2, coupled)."""
    q = quoteattr
    parts = [f"<robot name={q(robot_name)}>", '<link name="base"/>', f"<link name={q(link_names[0])}>{_inertial()}</link>",
             f'<joint name={q(joint_names[0])} type="revolute"><parent link="base"/>'
             f'<child link={q(link_names[0])}/><axis xyz="0 0 1"/></joint>']
    for k, (jn, ln) in enumerate(zip(joint_names[1:], link_names[1:])):
        parts.append(f"<link name={q(ln)}>{_inertial()}</link>"
                     f"<joint name={q(jn)} type=\"revolute\"><parent link={q(link_names[0])}/>"
                     f'<child link={q(ln)}/><origin xyz="0.{k} 0.3 0" rpy="0.1 0.{k} 0"/><axis xyz="1 0 0"/></joint>')
    return "".join(parts) + "</robot>"


#: the functions of the hostile-named package: one of each kind of algorithm (the names reach the
#: body comments of every function the same way; all the default ones took 16 s of symbolic runs)
HOSTILE_KEYS = ("M", "C", "Gamma", "tau", "qdd", "Minv", "dtau", "oMf", "J", "com", "Ag", "Y", "T")
ARITY = {Q.QUANTITIES[k].function: DEFAULT_ARITY[Q.QUANTITIES[k].function] for k in HOSTILE_KEYS}
FUNCTIONS = tuple(ARITY)


def _plain(robot, name="benign"):
    """The same Robot (same bodies, same order, same numbers) with plain names."""
    bodies = tuple(dataclasses.replace(b, name=f"l{k:02d}", joint_name=f"n{k:02d}") for k, b in enumerate(robot.bodies))
    return dataclasses.replace(robot, name=name, bodies=bodies)


def _c_code(text):
    """C source without its comments, string and character literals (each literal becomes "")."""
    out, i = [], 0
    while i < len(text):
        if text.startswith("/*", i):
            i = text.index("*/", i + 2) + 2
            out.append(" ")
        elif text.startswith("//", i):
            i = text.find("\n", i) if "\n" in text[i:] else len(text)
        elif text[i] in "\"'":
            quote, j = text[i], i + 1
            while text[j] != quote:
                assert text[j] != "\n", f"newline inside a C literal at offset {j}"
                j += 2 if text[j] == "\\" else 1
            out.append(quote * 2)
            i = j + 1
        else:
            out.append(text[i])
            i += 1
    return "".join(out)


def _py_code(text):
    """Python tokens outside comments, each string literal replaced by a placeholder."""
    tokens = tokenize.generate_tokens(io.StringIO(text).readline)
    return [(t.type, "STR" if t.type == tokenize.STRING else t.string) for t in tokens if t.type != tokenize.COMMENT]


def _code_of(folder, ident):
    """{file kind: code outside literals and comments} with the package identifier, and the hash
    of the C source that the binding's module name carries, made neutral."""
    out = {}
    ext = json.loads((folder / "manifest.json").read_text())["c_extension"]
    neutral = f"_{ident}_ext_HASH"
    for path in sorted(folder.iterdir()):
        kind = path.name.replace(ext, neutral).replace(ident, "PKG")
        text = path.read_text(encoding="utf-8") if path.suffix in (".py", ".c", ".h") else None
        if text is None:
            continue
        assert text.isascii(), f"{path.name}: generated source is not ASCII"
        if path.suffix == ".py":
            compile(text, str(path), "exec")
            out[kind] = [(t, s.replace(ext, neutral).replace(ident, "PKG")) for t, s in _py_code(text)]
        else:
            assert not any(line.endswith(("\\", "??/")) for line in text.splitlines()), f"{path.name}: line splice"
            out[kind] = _c_code(text).replace(ext, neutral).replace(ident, "PKG").replace(ident.upper(), "PKG")
    return out


@pytest.fixture(scope="module")
def hostile(tmp_path_factory):
    """(robot, package folder, plain twin folder, where): the hostile-named robot built and
    compiled while the working directory is a scratch folder, and its plain-named twin."""
    where = tmp_path_factory.mktemp("hostile")
    half = len(HOSTILE) // 2 + 1
    joints, links = HOSTILE[:half], [PAYLOAD] + HOSTILE[half:]
    links += [f"{h} (link)" for h in joints[len(links):]]
    robot = parse_urdf_string(_hub_urdf(PAYLOAD + DOCSTRING_BREAKER, joints, links), source="hostile.urdf")
    bodies = list(robot.bodies)                      # XML cannot carry a NUL; a Python Robot can
    k = next(k for k, b in enumerate(bodies) if b.joint_name.startswith("line one"))
    bodies[k] = dataclasses.replace(bodies[k], joint_name="nul\x00byte")
    robot = dataclasses.replace(robot, bodies=tuple(bodies))
    cwd = os.getcwd()
    os.chdir(where)
    try:
        (where / "out").mkdir(), (where / "plain").mkdir()
        pkg = build(robot, where / "out", opts=BuildOptions(quantities=HOSTILE_KEYS, copt="-O0")).path
        twin = build(_plain(robot), where / "plain", opts=BuildOptions(quantities=HOSTILE_KEYS, compile=False)).path
    finally:
        os.chdir(cwd)
    return robot, pkg, twin, where


def test_hostile_names_parse_back_exactly_and_stay_distinct(hostile):
    robot, *_ = hostile
    assert len(set(robot.joint_names)) == robot.n == len(HOSTILE) // 2 + 1 and "nul\x00byte" in robot.joint_names
    assert len(set(HOSTILE) - set(robot.joint_names + robot.link_names)) == 1      # the one the NUL replaced
    assert {"joint", "Joint", "JOINT", "a-b", "a_b", "a b", "a.b"} <= set(robot.joint_names)


def test_hostile_names_reach_no_code_outside_literals_and_comments(hostile):
    robot, pkg, twin, _ = hostile
    ident = identifier(robot.name)
    assert pkg.name == ident and ident.isidentifier() and ident.isascii()
    ours, theirs = _code_of(pkg, ident), _code_of(twin, "benign")
    assert sorted(ours) == sorted(theirs)
    for kind in ours:
        assert ours[kind] == theirs[kind], f"{kind}: code outside literals/comments depends on the names"


def test_hostile_package_imports_runs_and_returns_the_names_exactly(hostile):
    robot, pkg, twin, where = hostile
    script = f"""
import json, sys
import numpy as np
sys.path.insert(0, {str(pkg.parent)!r}); sys.path.insert(0, {str(twin.parent)!r})
import {pkg.name} as h, benign as b
assert h.backend == "c", h.backend
rng = np.random.default_rng(0)
for f in {FUNCTIONS!r}:
    args = [rng.uniform(-3, 3, h.nv) for _ in range({ARITY!r}[f])]
    for mod in (h.numpy, h.c):
        a, r = getattr(mod, f)(*args), getattr(b.numpy, f)(*args)
        a, r = (a, r) if not isinstance(a, tuple) else (np.concatenate([x.ravel() for x in a]), np.concatenate([x.ravel() for x in r]))
        assert np.allclose(a, r, rtol=1e-12, atol=1e-12), f
print(json.dumps([h.joint_names, h.link_names, h.numpy.__doc__, h.__doc__]))
"""
    proc = subprocess.run([sys.executable, "-c", script], cwd=where, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    joints, links, doc_numpy, doc_pkg = json.loads(proc.stdout)
    assert tuple(joints) == robot.joint_names and tuple(links) == robot.link_names
    assert f"robot '{robot.name}'" in doc_numpy and f"robot '{robot.name}'" in doc_pkg
    manifest = json.loads((pkg / "manifest.json").read_text())
    assert tuple(manifest["joint_names"]) == robot.joint_names and manifest["robot"] == robot.name
    assert _pwned(where, ROOT, Path.cwd()) == []


def test_payload_x_system_touch_pwned_builds_compiles_imports_runs_and_touches_nothing(hostile):
    """The issue's payload as robot, joint and link name, through C too (a driver that prints the
    joint names the C side holds)."""
    robot, pkg, _, where = hostile
    assert robot.name.startswith(PAYLOAD) and PAYLOAD in robot.joint_names and PAYLOAD in robot.link_names
    name = pkg.name
    driver = where / "names_driver.c"
    driver.write_text(f'#include <stdio.h>\n#include "{name}.h"\nint main(void)\n{{\n'
                      f"    for (int i = 0; i < {name.upper()}_NV; ++i) {{\n"
                      f"        for (const char *c = {name}_joint_names[i]; *c; ++c)\n"
                      '            printf("%02x", (unsigned char)*c);\n        printf("\\n");\n    }\n    return 0;\n}\n')
    exe = where / "names_driver"
    cc = subprocess.run(["gcc", "-std=c99", f"-I{pkg}", str(driver), str(pkg / f"{name}.c"), "-lm", "-o", str(exe)],
                        capture_output=True, text=True)
    assert cc.returncode == 0, cc.stderr
    run = subprocess.run([str(exe)], cwd=where, capture_output=True, text=True, check=True)
    expected = [j.split("\x00")[0].encode("utf-8").hex() for j in robot.joint_names]
    assert run.stdout.splitlines() == expected, "C joint names differ (a NUL ends the C string, as documented)"
    proc = subprocess.run([sys.executable, "-c", f"import sys; sys.path.insert(0, {str(pkg.parent)!r}); import {name} as p; "
                           f"import numpy as np; [getattr(p, f)(*[np.ones(p.nv)] * k) for f, k in {ARITY!r}.items()]"],
                          cwd=where, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert _pwned(where, ROOT, Path.cwd()) == []


def test_coding_cookie_in_the_urdf_file_name_does_not_change_how_python_reads_the_package(tmp_path):
    """PEP 263: 'coding=utf-7' in the first two lines would decode '+AAo-' as a newline, and the
    second line of every generated file holds the command, hence the URDF file name."""
    evil = tmp_path / "r coding=utf-7 +AAo-__import__(+ACI-os+ACI-).system(+ACI-touch PWNED+ACI-).urdf"
    shutil.copy(EXAMPLE, evil)
    (tmp_path / "out").mkdir()
    run = subprocess.run([sys.executable, str(ROOT / "cli.py"), "build", str(evil), "--out", "out", "--no-compile",
                          "--quantities", "M", "--quiet"],
                         cwd=tmp_path, capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    pkg = tmp_path / "out" / "arm4"
    second_lines = [p.read_text().splitlines()[1] for p in pkg.glob("*.py")]
    assert second_lines and not any("coding=" in s or "coding:" in s for s in second_lines), second_lines
    proc = subprocess.run([sys.executable, "-c", "import sys; sys.path.insert(0, 'out'); import arm4"],
                          cwd=tmp_path, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert _pwned(tmp_path, ROOT) == []


@pytest.mark.parametrize("text", HOSTILE + ["nul\x00byte", "\udc80 lone surrogate", ""])
def test_literals_round_trip_and_hold_nothing_that_ends_a_string_or_comment(text):
    lit = py_literal(text)
    assert eval(lit, {"__builtins__": {}}) == text                      # noqa: S307 (a literal)
    assert lit.isascii() and not set(lit[1:-1]) & set("'\"\n\r#{}%") and '"""' not in lit
    assert eval(f'"""doc {lit} end"""') == f"doc {lit} end".encode().decode("unicode_escape")
    c = c_literal(text)
    assert c.isascii() and c[0] == c[-1] == '"' and not set(c[1:-1]) & set("'\"\n\r?*/")
    comment = comment_text(text)
    assert comment.isascii() and "\n" not in comment and "\r" not in comment
    assert "*/" not in comment and "/*" not in comment and "coding=" not in comment and "coding:" not in comment


@pytest.mark.parametrize("name, expected", [
    ("9lives", "r_9lives"), ("class", "r_class"), ("int", "r_int"), ("main", "r_main"), ("None", "none"),
    ("numpy", "r_numpy"), ("Math", "r_math"), ("os", "r_os"), ("json", "r_json"),
    ("../../etc/passwd", "etc_passwd"), ("..", "robot"), ("\u00e9\u00e8", "robot"), ("a--b__c", "a_b_c"),
])
def test_package_identifier_is_safe(name, expected):
    assert identifier(name) == expected


def test_long_names_give_short_distinct_identifiers():
    a, b = identifier("x" * 300 + "a"), identifier("x" * 300 + "b")
    assert a != b and len(a) <= 64 and len(b) <= 64 and a.isidentifier()
    assert identifier("y" * 64) == "y" * 64


def test_robot_named_like_a_module_builds_a_package_that_does_not_shadow_it(tmp_path):
    """``import numpy`` inside the package, and the user's own, must still mean numpy."""
    robot = dataclasses.replace(robots.make("serial", 2, 0), name="numpy")
    res = build(robot, tmp_path, opts=BuildOptions(quantities=("M",), compile=False))
    assert res.name == "r_numpy"
    proc = subprocess.run([sys.executable, "-c", f"import sys; sys.path.insert(0, {str(tmp_path)!r}); import numpy, r_numpy; "
                           "print(r_numpy.mass_matrix(numpy.zeros(2)).shape, numpy.__name__)"],
                          cwd=tmp_path, capture_output=True, text=True)
    assert proc.returncode == 0 and "(2, 2) numpy" in proc.stdout, proc.stderr


def test_robot_names_equal_up_to_case_or_dropped_characters_do_not_overwrite_each_other(tmp_path):
    """They share a package name, so the second build refuses (without --force) instead of
    replacing the first robot's package."""
    first = dataclasses.replace(robots.make("serial", 2, 0), name="My-Robot")
    second = dataclasses.replace(robots.make("serial", 3, 0), name="my robot")
    path = build(first, tmp_path, opts=BuildOptions(quantities=("M",), compile=False)).path
    with pytest.raises(SymgenError, match="already exists"):
        build(second, tmp_path, opts=BuildOptions(quantities=("M",), compile=False))
    assert json.loads((path / "manifest.json").read_text())["robot"] == "My-Robot"


# ------------------------------------------------------------------------------------ numbers

ONE_JOINT = ('<robot name="r"><link name="base"/><link name="l1">'
             '<inertial><origin xyz="{com}"/><mass value="{mass}"/><inertia ixx="{ixx}" ixy="0" ixz="0" iyy="0.1" iyz="0" izz="0.1"/></inertial>'
             '</link><joint name="j1" type="revolute"><parent link="base"/><child link="l1"/>'
             '<origin xyz="{xyz}" rpy="{rpy}"/><axis xyz="{axis}"/><mimic joint="j0" multiplier="{mult}"/></joint></robot>')
GOOD = {"com": "0 0 0", "mass": "1", "ixx": "0.1", "xyz": "0 0 0", "rpy": "0 0 0", "axis": "0 0 1", "mult": "1"}
WHERE = {"com": "<link name='l1'>/<inertial>/<origin>", "mass": "<link name='l1'>/<inertial>/<mass>",
         "ixx": "<link name='l1'>/<inertial>/<inertia>", "xyz": "<joint name='j1'>/<origin>",
         "rpy": "<joint name='j1'>/<origin>", "axis": "<joint name='j1'>/<axis>", "mult": "<joint name='j1'>/<mimic>"}
BAD_TOKENS = [("nan", "is not a decimal number"), ("-inf", "is not a decimal number"), ("Infinity", "is not a decimal number"),
              ("1e400", "out of range"), ("-1e400", "out of range"), ("1e308", "too large"), ("-2e12", "too large"),
              ("0x10", "is not a decimal number"), ("1_000", "is not a decimal number"), ("1,5", "is not a decimal number"),
              ("__import__('os').system('touch${IFS}PWNED')", "is not a decimal number"), ("1e", "is not a decimal number"),
              ("\u0661", "is not a decimal number"), ("\uff11", "is not a decimal number"), ("1/2", "is not a decimal number")]


def _bad_numbers():
    for attr, default in GOOD.items():
        count = len(default.split())
        for token, reason in BAD_TOKENS:
            text = " ".join([token] + default.split()[1:])
            yield pytest.param(attr, text, reason, id=f"{attr}={text[:20]}")
        yield pytest.param(attr, "", f"expected {count} number", id=f"{attr}-empty")
        yield pytest.param(attr, default + " 0", f"got {count + 1}", id=f"{attr}-extra")
        if count == 3:
            yield pytest.param(attr, "0 0", "got 2", id=f"{attr}-missing")
            yield pytest.param(attr, "0\u00a00\u00a00", "got 1", id=f"{attr}-nbsp")


@pytest.mark.parametrize("attr, text, reason", list(_bad_numbers()))
def test_bad_number_in_any_attribute_is_a_one_line_error_naming_it(tmp_path, monkeypatch, attr, text, reason):
    monkeypatch.chdir(tmp_path)
    path = tmp_path / "n.urdf"
    path.write_text(ONE_JOINT.format(**{**GOOD, attr: quoteattr(text)[1:-1]}), encoding="utf-8")
    with pytest.raises(URDFError) as info:
        load_urdf(path)
    message = str(info.value)
    assert "\n" not in message and message.startswith(f"{path}: {WHERE[attr]}: ") and reason in message, message
    assert _pwned(tmp_path) == []


@pytest.mark.parametrize("axis", ["0 0 0", "1e-10 0 -1e-10", "-0.0 +0 0e5"])
def test_zero_axis_is_an_error(axis):
    with pytest.raises(URDFError, match=r"<joint name='j1'>/<axis>: axis is zero$"):
        parse_urdf_string(ONE_JOINT.format(**{**GOOD, "axis": axis}))


@pytest.mark.parametrize("attr, text, check", [
    ("xyz", " +1.5\t-.5\n2. ", lambda r: r.bodies[0].translation == (1.5, -0.5, 2.0)),
    ("xyz", "1e-400 0 0", lambda r: r.bodies[0].translation == (0.0, 0.0, 0.0)),        # underflow reads as 0
    ("mass", "1E+0", lambda r: r.bodies[0].inertia.mass == 1.0),
    ("axis", "0 0 1e12", lambda r: r.bodies[0].axis == (0.0, 0.0, 1.0)),               # the largest accepted
])
def test_documented_number_acceptances(attr, text, check):
    assert check(parse_urdf_string(ONE_JOINT.format(**{**GOOD, attr: text})))


def test_cli_reports_a_bad_number_in_one_line_and_exit_2(tmp_path):
    path = tmp_path / "n.urdf"
    path.write_text(ONE_JOINT.format(**{**GOOD, "xyz": "0 1e308 0"}))
    res = CliRunner().invoke(main, ["build", str(path), "--out", str(tmp_path), "--no-compile"])
    assert res.exit_code == 2 and res.stderr.count("\n") == 1 and "Traceback" not in res.output
    assert res.stderr.startswith(f"symgen: {path}: <joint name='j1'>/<origin>: ") and "too large" in res.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["n.urdf"]


# ------------------------------------------------------------------------------------ XML

@pytest.mark.parametrize("text, reason", [
    ('<robot name="a\x00b"><link name="l"/></robot>', "malformed XML"),
    ('<robot name="a&#0;b"><link name="l"/></robot>', "malformed XML"),
    ('<?xml version="1.0"?><!DOCTYPE r [<!ENTITY x SYSTEM "file:///etc/hostname">]><robot name="&x;"/>', "malformed XML"),
    ('<?xml version="1.0"?><!DOCTYPE r [<!ENTITY a "aaaaaaaaaa">' + "".join(
        f'<!ENTITY {"b" * (k + 1)} "{("&" + "b" * k + ";" if k else "&a;") * 10}">' for k in range(8))
     + ']><robot name="&bbbbbbbb;"><link name="l"/></robot>', "malformed XML"),
    ("\ufeff\ufeff<robot/>", "malformed XML"),
    ('<robot name="r"><link name="l"/>' + "<x>" * 50000 + "</x>" * 50000 + "</robot>", "no movable joints"),
])
def test_hostile_xml_is_a_one_line_error(text, reason):
    with pytest.raises(URDFError) as info:
        parse_urdf_string(text, source="evil.urdf")
    assert reason in str(info.value) and "\n" not in str(info.value) and str(info.value).startswith("evil.urdf: ")


def test_newline_and_tab_in_names_survive_xml_only_as_character_references():
    """XML normalizes a raw newline or tab in an attribute to a space; &#10; and &#9; keep them."""
    raw = parse_urdf_string(_hub_urdf("r", ["a", "b"], ["h", "l"]).replace('name="b"', 'name="b\nc\td"'))
    ref = parse_urdf_string(_hub_urdf("r", ["a", "b\nc\td"], ["h", "l"]))
    assert raw.joint_names[1] == "b c d" and ref.joint_names[1] == "b\nc\td"


# ------------------------------------------------------------------------------------ structure

def _j(name, parent, child, jtype="revolute"):
    return f'<joint name="{name}" type="{jtype}"><parent link="{parent}"/><child link="{child}"/></joint>'


def _links(*names):
    return "".join(f'<link name="{n}">{_inertial()}</link>' for n in names)


@pytest.mark.parametrize("body, element, reason", [
    (_links("a", "b") + _j("ja", "a", "b") + _j("jb", "b", "a"), "<joint name='jb'>", "joints form a loop: jb -> ja -> jb"),
    (_links("a") + _j("self", "a", "a"), "<joint name='self'>", "joints form a loop: self -> self"),
    (_links("base", "a", "b", "c") + _j("j1", "base", "a") + _j("j2", "b", "c"), "<robot>", "more than one root link"),
    (_links("base", "a") + _j("j1", "base", "a") + _j("j2", "a", "ghost"), "<joint name='j2'>/<child>", "link 'ghost' is not defined"),
    (_links("base", "a") + _j("j1", "base", "a") + _j("j2", "ghost", "a"), "<joint name='j2'>/<parent>", "link 'ghost' is not defined"),
    (_links("base", "a", "a") + _j("j1", "base", "a"), "<link name='a'>", "duplicate link name"),
    (_links("base", "a", "b") + _j("j1", "base", "a") + _j("j1", "a", "b"), "<joint name='j1'>", "duplicate joint name"),
    (_links("base", "a", "b") + _j("j1", "base", "a", "fixed") + _j("j2", "a", "b", "fixed"), "<robot>", "no movable joints"),
    (_links("base"), "<robot>", "no movable joints"),
    (_j("j1", "base", "a"), "<robot>", "no <link> elements"),
])
def test_structure_errors_are_one_line_through_the_cli(tmp_path, body, element, reason):
    path = tmp_path / "s.urdf"
    path.write_text(f'<robot name="s">{body}</robot>')
    res = CliRunner().invoke(main, ["info", str(path)])
    assert res.exit_code == 2 and "Traceback" not in res.output, res.output
    assert res.stderr.startswith(f"symgen: {path}: {element}: ") and reason in res.stderr and res.stderr.count("\n") == 1


def test_all_fixed_robot_has_six_dof_with_a_floating_base():
    text = f'<robot name="s">{_links("base", "a")}{_j("j1", "base", "a", "fixed")}</robot>'
    with pytest.raises(URDFError, match="--floating-base would give it six"):
        parse_urdf_string(text)
    assert parse_urdf_string(text, floating_base=True).n == 6


@pytest.fixture(scope="module")
def deep200(tmp_path_factory):
    path = tmp_path_factory.mktemp("deep") / "serial200.urdf"
    write_urdf(robots.make("serial", 200, 4), path)
    return path


def test_200_body_chain_parses_into_a_usable_model(deep200):
    robot = load_urdf(deep200)
    assert robot.n == 200 and robot.depth == 200
    q = np.random.default_rng(4).uniform(-np.pi, np.pi, 200)
    M = symgen.mass_matrix(robot, q)
    assert np.all(np.isfinite(M)) and np.allclose(M, M.T) and np.linalg.eigvalsh(M)[0] > 0
    res = CliRunner().invoke(main, ["info", str(deep200)])
    assert res.exit_code == 0 and "200" in res.output


class _Started(Exception):
    """The build began its symbolic run."""


def test_200_body_chain_build_stops_at_once_with_a_message_about_size_and_a_hint(deep200, tmp_path):
    """Stopped through the progress hook the moment the symbolic run starts, so CI never hangs."""
    class Progress(BuildProgress):
        def message(self, text):
            raise _Started(text)

    with pytest.raises(SymgenError) as info:
        build(load_urdf(deep200), tmp_path, opts=BuildOptions(compile=False), progress=Progress())
    message = str(info.value)
    assert "\n" not in message and "200" in message and ("--" in message or "hint" in message), message
    assert list(tmp_path.iterdir()) == []


def test_build_of_a_robot_without_joints_is_a_symgen_error(tmp_path):
    with pytest.raises(SymgenError, match="no degree"):
        build(symgen.Robot(name="empty", bodies=()), tmp_path, opts=BuildOptions(compile=False))


# ------------------------------------------------------------------------------------ output safety

def _snapshot(folder):
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.fixture
def previous(tmp_path):
    """A good package OUT/pkg (serial 2, M only) and its bytes."""
    out = tmp_path / "out"
    out.mkdir()
    path = build(robots.make("serial", 2, 0), out, name="pkg", opts=BuildOptions(quantities=("M",), compile=False)).path
    return out, path, _snapshot(path)


def _only_the_package(out):
    assert sorted(p.name for p in out.iterdir()) == ["pkg"], f"left behind: {sorted(p.name for p in out.iterdir())}"


def _fail_on_third_file_written(monkeypatch, out):
    """Writing the third file under ``out`` fails with ENOSPC (disk full)."""
    written = []
    real_open = open

    def fake_open(file, mode="r", *args, **kw):
        if any(m in mode for m in "wxa") and str(Path(file).resolve()).startswith(str(out.resolve())):
            written.append(file)
            if len(written) == 3:
                raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(file))
        return real_open(file, mode, *args, **kw)

    monkeypatch.setattr("builtins.open", fake_open)
    monkeypatch.setattr("io.open", fake_open)
    return written


def test_failure_after_some_files_are_written_leaves_the_previous_package(previous, monkeypatch):
    out, path, before = previous
    written = _fail_on_third_file_written(monkeypatch, out)
    with pytest.raises(BaseException):
        build(robots.make("serial", 3, 0), out, name="pkg", opts=BuildOptions(quantities=("M", "C"), force=True, compile=False))
    monkeypatch.undo()
    assert len(written) == 3, f"the simulated failure did not happen: {written}"
    assert _snapshot(path) == before
    _only_the_package(out)


def test_failure_while_writing_is_a_one_line_symgen_error(previous, monkeypatch):
    out, *_ = previous
    _fail_on_third_file_written(monkeypatch, out)
    with pytest.raises(SymgenError, match="No space left on device") as info:
        build(robots.make("serial", 3, 0), out, name="pkg", opts=BuildOptions(quantities=("M",), force=True, compile=False))
    assert "\n" not in str(info.value)


@pytest.mark.parametrize("which", [1, 2])
def test_interruption_at_any_rename_leaves_the_previous_or_the_new_package_complete(previous, monkeypatch, which):
    """Ctrl-C (or SIGTERM, which the CLI turns into an exit) at the ``which``-th rename of the build."""
    out, path, before = previous
    real_replace, real_rename, calls = os.replace, os.rename, []

    def interrupted(real):
        def move(src, dst, *args, **kw):
            calls.append((src, dst))
            if len(calls) == which:
                raise KeyboardInterrupt
            return real(src, dst, *args, **kw)
        return move

    monkeypatch.setattr(os, "replace", interrupted(real_replace))
    monkeypatch.setattr(os, "rename", interrupted(real_rename))
    try:
        build(robots.make("serial", 3, 0), out, name="pkg", opts=BuildOptions(quantities=("M",), force=True, compile=False))
    except KeyboardInterrupt:
        pass
    monkeypatch.undo()
    if len(calls) < which:                                  # the build made fewer renames: it finished
        assert json.loads((path / "manifest.json").read_text())["nq"] == 3
    else:
        assert _snapshot(path) == before
    _only_the_package(out)


def _slow_compiler(tmp_path):
    """A C compiler whose work (a child, like cc1) never finishes, so a build can be killed while
    it compiles; the child's PID goes to ``tmp_path/cc.pid``."""
    cc = tmp_path / "slowcc"
    cc.write_text(f"#!/bin/sh\nsleep 120 &\necho $! > {shlex.quote(str(tmp_path / 'cc.pid'))}\nwait\n")
    cc.chmod(0o755)
    return cc


def _running(pid):
    """Whether process ``pid`` runs (a zombie does not)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


#: tgkill(2)'s system call number, to send a signal to one thread of another process
_TGKILL = {"x86_64": 234, "aarch64": 131}.get(os.uname().machine)


def _signal_a_thread(pid, signum):
    """Send ``signum`` to a thread of process ``pid`` other than its main one (the kernel may
    hand a process's signal to any of its threads: a compiler lane, or a BLAS thread)."""
    import ctypes

    tids = sorted(int(t) for t in os.listdir(f"/proc/{pid}/task") if int(t) != pid)
    assert tids, "the build runs no thread besides its main one"
    assert ctypes.CDLL(None, use_errno=True).syscall(_TGKILL, pid, tids[0], signum) == 0, ctypes.get_errno()


def _kill_mid_build(out, urdf, signum, tmp_path, thread=False):
    """Start ``symgen build --force`` (compiling with a compiler that hangs), wait for the
    compiler's child, send ``signum`` (with ``thread``, to a thread other than the main one);
    (the process's return code, whether the compiler's child still runs 10 s later)."""
    env = dict(os.environ, CC=str(_slow_compiler(tmp_path)))
    pidfile = tmp_path / "cc.pid"
    proc = subprocess.Popen([sys.executable, str(ROOT / "cli.py"), "build", str(urdf), "--out", str(out), "--name", "pkg",
                             "--force", "--quantities", "M", "--quiet"], env=env, cwd=tmp_path,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 60
    try:
        while not (pidfile.exists() and pidfile.read_text().strip()):
            assert proc.poll() is None, f"build ended before it could be killed: {proc.communicate()}"
            assert time.monotonic() < deadline, "the compiler did not start within 60 s"
            time.sleep(0.01)
        child = int(pidfile.read_text())
        if thread:
            _signal_a_thread(proc.pid, signum)
        else:
            proc.send_signal(signum)
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    deadline = time.monotonic() + 10
    while _running(child) and time.monotonic() < deadline:
        time.sleep(0.05)
    orphan = _running(child)
    if orphan:
        os.kill(child, signal.SIGKILL)
    return proc.returncode, orphan


@pytest.mark.parametrize("signum,thread", [
    (signal.SIGTERM, False), (signal.SIGHUP, False), (signal.SIGKILL, False),
    pytest.param(signal.SIGTERM, True, marks=pytest.mark.skipif(_TGKILL is None or not Path("/proc/self/task").exists(),
                                                                reason="tgkill and /proc: Linux on x86-64 or aarch64"))],
    ids=["SIGTERM", "SIGHUP", "SIGKILL", "SIGTERM-to-a-thread"])
def test_killed_build_leaves_the_previous_package_untouched(previous, tmp_path, signum, thread):
    """SIGTERM and SIGHUP (the terminal closed) unwind: no temporary folder, and the compiler's
    process group, its children included, is killed. Nothing can clean up after SIGKILL. The kernel
    gives a process's SIGTERM to any thread that does not block it, and Python runs the handler in
    the main thread only when that thread next wakes: the build must not wait on its compilers
    without a timeout."""
    out, path, before = previous
    urdf = tmp_path / "serial3.urdf"
    write_urdf(robots.make("serial", 3, 0), urdf)
    code, orphan = _kill_mid_build(out, urdf, signum, tmp_path, thread)
    assert code == (-signum if signum == signal.SIGKILL else 128 + signum)
    assert _snapshot(path) == before
    if signum != signal.SIGKILL:
        _only_the_package(out)
        assert not orphan or not Path("/proc/self/stat").exists(), "the compiler's child outlived the build"
    else:                                                   # nothing can clean up after SIGKILL ...
        left = [p.name for p in out.iterdir() if p.name != "pkg"]
        assert all(name.startswith(".pkg.") for name in left), left     # ... but it is hidden, never at OUT/pkg


def test_next_build_removes_what_a_sigkilled_build_left(previous, tmp_path):
    out, *_ = previous
    urdf = tmp_path / "serial3.urdf"
    write_urdf(robots.make("serial", 3, 0), urdf)
    _kill_mid_build(out, urdf, signal.SIGKILL, tmp_path)
    build(robots.make("serial", 2, 0), out, name="pkg", opts=BuildOptions(quantities=("M",), compile=False, force=True))
    _only_the_package(out)


def test_no_overwrite_without_force_of_a_package_or_a_file(previous, tmp_path):
    out, path, before = previous
    for target in (path, out / "other"):
        if target.name == "other":
            target.write_text("a user's file")
        res = CliRunner().invoke(main, ["build", str(EXAMPLE), "--out", str(out), "--name", target.name, "--no-compile"])
        assert res.exit_code == 2 and res.stderr.count("\n") == 1 and "--force" in res.stderr, res.output
    assert _snapshot(path) == before and (out / "other").read_text() == "a user's file"


def _cli(args, cwd, as_user=False):
    """Run ``symgen ARGS`` in a subprocess; as root with ``as_user``, in a user namespace where
    file permissions apply (root would write into a read-only folder)."""
    cmd = [sys.executable, str(ROOT / "cli.py"), *args]
    if as_user and os.geteuid() == 0:
        if shutil.which("unshare") is None or subprocess.run(["unshare", "-U", "true"]).returncode != 0:
            pytest.skip("running as root, and `unshare -U` is not available to drop the permission override")
        cmd = ["unshare", "-U", *cmd]
    return subprocess.run(cmd, cwd=cwd, capture_output=True, text=True)


def test_missing_output_folder_is_created_when_its_parent_exists(tmp_path):
    out = tmp_path / "generated"
    run = _cli(["build", str(EXAMPLE), "--out", str(out), "--no-compile", "--quiet"], tmp_path)
    assert run.returncode == 0, run.stderr
    assert sorted(p.name for p in out.iterdir()) == ["arm4"]


@pytest.mark.parametrize("case", ["read-only", "missing-parent"])
def test_unusable_output_folder_is_a_one_line_error_with_exit_2(tmp_path, case):
    out = {"read-only": tmp_path / "ro", "missing-parent": tmp_path / "nope" / "deeper"}[case]
    if case == "read-only":
        out.mkdir()
        out.chmod(0o555)
    try:
        run = _cli(["build", str(EXAMPLE), "--out", str(out), "--no-compile", "--quiet"], tmp_path, as_user=True)
    finally:
        if case == "read-only":
            out.chmod(0o755)
    assert run.returncode == 2, run.stderr
    assert run.stderr.count("\n") == 1 and run.stderr.startswith(f"symgen: {out}: ") and "Traceback" not in run.stderr
    assert ("not writable" if case == "read-only" else "does not exist") in run.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == (["ro"] if case == "read-only" else [])
    assert case != "read-only" or list(out.iterdir()) == []


# ------------------------------------------------------------------------------------ determinism

@pytest.mark.slow          # (34 s; test_codegen's builds on several processes check the bytes in CI)
def test_hostile_names_and_a_tree_generate_the_same_bytes_for_any_hash_seed_and_cwd(tmp_path):
    """Complements test_codegen's arm4 check: names that sort, hash and escape differently, a
    branching tree, and the library path in three processes."""
    urdf = tmp_path / "hostile.urdf"
    urdf.write_text(_hub_urdf("h\u00f6stile \U0001F600", HOSTILE[:6], [f"{h} L" for h in HOSTILE[6:12]]), encoding="utf-8")
    script = ("import sys; from symgen.urdf import load_urdf; from symgen.codegen.build import build, BuildOptions; "
              "build(load_urdf(sys.argv[1]), sys.argv[2], opts=BuildOptions(compile=False))")
    outs = []
    for k, seed in enumerate(("0", "1", "random")):
        out, cwd = tmp_path / f"out{k}", tmp_path / f"cwd{k}"
        out.mkdir(), cwd.mkdir()
        env = dict(os.environ, PYTHONHASHSEED=seed, PYTHONPATH=str(ROOT))
        subprocess.run([sys.executable, "-c", script, os.path.relpath(urdf, cwd), os.path.relpath(out, cwd)],
                       cwd=cwd, env=env, check=True, capture_output=True)
        outs.append(_snapshot(out))
    assert outs[0] and outs[0] == outs[1] == outs[2]


# ------------------------------------------------------------------------------------ C hygiene

STRICT = ["-Wall", "-Wextra", "-Wpedantic", "-std=c99", "-Werror"]


def _gcc(args, cwd):
    if shutil.which("gcc") is None:
        pytest.skip("gcc is not installed")
    return subprocess.run(["gcc", *args], cwd=cwd, capture_output=True, text=True)


def test_generated_c_of_hostile_names_compiles_without_warnings(hostile):
    _, pkg, *_ = hostile
    name = pkg.name
    run = _gcc([*STRICT, "-c", f"{name}.c", "-o", os.devnull], pkg)
    assert run.returncode == 0, run.stderr
    # the binding: Python's own headers are system headers, their warnings are not ours
    ext = json.loads((pkg / "manifest.json").read_text())["c_extension"]
    run = _gcc([*STRICT, "-isystem", sysconfig.get_paths()["include"], "-c", f"{ext}.c", "-o", os.devnull], pkg)
    assert run.returncode == 0, run.stderr
    if shutil.which("g++"):
        (pkg.parent / "use.cpp").write_text(f'#include "{name}/{name}.h"\nint main() {{ return {name.upper()}_NV > 0 ? 0 : 1; }}\n')
        run = subprocess.run(["g++", "-Wall", "-Wextra", "-Wpedantic", "-Werror", "-fsyntax-only", "use.cpp"],
                             cwd=pkg.parent, capture_output=True, text=True)
        assert run.returncode == 0, run.stderr


SLIDER = ('<robot name="slider"><link name="base"/><link name="l1">' + _inertial("2") + '</link><joint name="j1" '
          'type="prismatic"><parent link="base"/><child link="l1"/><axis xyz="0 0 1"/></joint></robot>')


def test_generated_c_of_a_robot_whose_dynamics_ignore_q_compiles_without_warnings(tmp_path):
    pkg = build(parse_urdf_string(SLIDER), tmp_path, opts=BuildOptions(compile=False)).path
    run = _gcc([*STRICT, "-c", f"{pkg.name}.c", "-o", os.devnull], pkg)
    assert run.returncode == 0, run.stderr


def _sanitizer_driver(name, n, functions, seed):
    """C that calls every function, single and batch, on random states; checks finiteness and
    that the batch equals the single calls (to 1e-12 relative)."""
    lines = ["#include <math.h>", "#include <stdio.h>", "#include <stdlib.h>", "#include <string.h>",
             f'#include "{name}.h"', "#define B 3",
             "static double rnd(void) { return 20.0 * rand() / RAND_MAX - 10.0; }",
             "int main(void)", "{", f"    srand({seed});", "    int bad = 0;", "    for (int t = 0; t < 40; ++t) {"]
    for fname, spec in functions.items():
        sizes = [int(np.prod(shape)) for _, shape in spec["outputs"]]
        ins = spec["inputs"]
        decl = "".join(f"double {p}[B * {n}]; for (int i = 0; i < B * {n}; ++i) {p}[i] = rnd(); " for p in ins)
        single = "".join(f"{p} + b * {n}, " for p in ins)
        alloc = ", ".join(f"*one{k} = malloc(sizeof(double) * B * {z}), *all{k} = malloc(sizeof(double) * B * {z})"
                          for k, z in enumerate(sizes))
        lines += ["        {", f"            {decl}", f"            double {alloc};",
                  f"            for (int b = 0; b < B; ++b) {name}_{fname}({single}"
                  + ", ".join(f"one{k} + b * {z}" for k, z in enumerate(sizes)) + ");",
                  f"            {name}_{fname}_batch(B, {', '.join(ins)}, " + ", ".join(f"all{k}" for k in range(len(sizes))) + ");"]
        # (the batch's sin and cos are its own, within 2 ulp of libm's: not bit for bit)
        lines += [f"            for (int i = 0; i < B * {z}; ++i) if (!isfinite(one{k}[i]) "
                  f"|| fabs(one{k}[i] - all{k}[i]) > 1e-12 * fmax(1.0, fabs(one{k}[i]))) bad++;"
                  for k, z in enumerate(sizes)]
        lines += ["            " + " ".join(f"free(one{k}); free(all{k});" for k in range(len(sizes))), "        }"]
    lines += ["    }", '    printf("%s\\n", bad ? "MISMATCH" : "ok");', "    return bad != 0;", "}", ""]
    return "\n".join(lines)


def _arm4_in_parts(tmp_path, monkeypatch):
    """arm4 with every function printed in parts (static functions and the work array w), the
    form big robots get, at a size that compiles in a moment."""
    import symgen.codegen.files as codegen_files

    monkeypatch.setattr(codegen_files, "C_SPLIT_ABOVE", 60)
    monkeypatch.setattr(codegen_files, "C_PART_SIZE", 40)
    pkg = build(load_urdf(EXAMPLE), tmp_path, opts=BuildOptions(compile=False)).path
    assert "_part2(" in (pkg / "arm4.c").read_text()
    return pkg


def test_generated_c_in_parts_compiles_without_warnings(tmp_path, monkeypatch):
    pkg = _arm4_in_parts(tmp_path, monkeypatch)
    run = _gcc([*STRICT, "-c", "arm4.c", "-o", os.devnull], pkg)
    assert run.returncode == 0, run.stderr


@pytest.mark.parametrize("robot", [pytest.param("arm4", marks=pytest.mark.slow), "arm4-in-parts",
                                   pytest.param("hostile", marks=pytest.mark.slow)])   # (50 s: -m slow)
def test_every_c_function_runs_clean_under_address_and_undefined_sanitizers(hostile, tmp_path, monkeypatch, robot):
    if robot == "hostile":
        pkg = hostile[1]
    elif robot == "arm4-in-parts":
        pkg = _arm4_in_parts(tmp_path, monkeypatch)
    else:
        pkg = build(load_urdf(EXAMPLE), tmp_path, opts=BuildOptions(compile=False)).path
    probe = tmp_path / "probe.c"
    probe.write_text("int main(void) { return 0; }\n")
    flags = ["-fsanitize=address,undefined", "-fno-sanitize-recover=all", "-fno-omit-frame-pointer", "-g"]
    check = _gcc([*flags, str(probe), "-o", str(tmp_path / "probe")], tmp_path)
    if check.returncode != 0 or subprocess.run([str(tmp_path / "probe")], capture_output=True).returncode != 0:
        why = f"the compiler lacks sanitizer support: {(check.stderr.strip().splitlines() or ['cannot run'])[0]}"
        print(why)
        pytest.skip(why)
    manifest = json.loads((pkg / "manifest.json").read_text())
    seed = 20240611
    driver = tmp_path / "driver.c"
    driver.write_text(_sanitizer_driver(pkg.name, manifest["nv"], manifest["functions"], seed))
    exe = tmp_path / "driver"
    cc = _gcc(["-std=c99", "-O1", *flags, f"-I{pkg}", str(driver), str(pkg / f"{pkg.name}.c"), "-lm", "-o", str(exe)], tmp_path)
    assert cc.returncode == 0, cc.stderr
    env = dict(os.environ, ASAN_OPTIONS="detect_leaks=0:abort_on_error=0", UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1")
    run = subprocess.run([str(exe)], capture_output=True, text=True, env=env, timeout=300)
    report = run.stderr
    assert run.returncode == 0 and run.stdout.strip() == "ok" and "runtime error" not in report \
        and "Sanitizer" not in report, f"seed {seed}: {run.stdout}{report}"


@pytest.mark.parametrize("left", ["free lock", "no lock, old"])
def test_package_a_killed_build_had_moved_aside_is_put_back(tmp_path, left):
    """A build killed between its two renames (where the system cannot swap two folders)
    leaves the previous package only in .NAME.old-TOKEN, and its lock file .NAME.lock-TOKEN
    free; the next build puts it back (and, without --force, stops there). So it does without
    a lock file (a filesystem without locks) once the folder is older than STALE_AGE."""
    robot = robots.make("serial", 2, 0)
    path = build(robot, tmp_path, name="pkg", opts=BuildOptions(quantities=("M",), compile=False)).path
    before = _snapshot(path)
    aside = tmp_path / ".pkg.old-99999999-abc"
    aside.mkdir()
    os.replace(path, aside / "pkg")
    if left == "free lock":
        (tmp_path / ".pkg.lock-99999999-abc").write_text("")
    else:
        old = time.time() - package.STALE_AGE - 60
        os.utime(aside, (old, old))
    with pytest.raises(SymgenError, match="already exists"):
        build(robot, tmp_path, name="pkg", opts=BuildOptions(quantities=("M",), compile=False))
    assert _snapshot(path) == before
    _only_the_package(tmp_path)


def test_function_in_parts_without_shared_temps_is_iso_c(tmp_path, monkeypatch):
    """A prismatic chain's M is constant: printed in parts it shares no temps, and the work
    array must still not be of size zero, nor a function lack its prototype."""
    import symgen.codegen.files as codegen_files

    monkeypatch.setattr(codegen_files, "C_SPLIT_ABOVE", 4)
    monkeypatch.setattr(codegen_files, "C_PART_SIZE", 3)
    links = "".join(f'<link name="l{i}">{_inertial("1")}</link>' for i in range(4))
    joints = "".join(f'<joint name="j{i}" type="prismatic"><parent link="l{i - 1}"/><child link="l{i}"/>'
                     f'<axis xyz="{"1 0 0" if i % 2 else "0 1 0"}"/><limit lower="-1" upper="1" effort="1" velocity="1"/>'
                     f'</joint>' for i in range(1, 4))
    pkg = build(parse_urdf_string(f'<robot name="pchain">{links}{joints}</robot>'), tmp_path,
                opts=BuildOptions(quantities=("M",), compile=False)).path
    source = (pkg / "pchain.c").read_text()
    assert "_part2(" in source and "double w[1];" in source, source[-800:]
    run = _gcc([*STRICT, "-Wmissing-prototypes", "-c", "pchain.c", "-o", os.devnull], pkg)
    assert run.returncode == 0, run.stderr
