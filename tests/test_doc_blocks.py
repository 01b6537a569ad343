"""Every code block of README.md and docs/**/*.md runs, so that an example that breaks fails CI.

The convention, for whoever writes a page:

- A fenced block tagged ``python``, ``bash`` or ``sh`` is executed; one tagged ``text``,
  ``console``, ``c``, ``cmake``, ``xml`` (or anything else, or nothing) is shown and not run.
- Each page is one test: its blocks run in order, in ONE Python process (the python blocks share
  one namespace, like a notebook's cells; each shell block is ``bash -euo pipefail``), with the
  working directory a scratch copy of the repository root: ``symgen/``, ``templates/``,
  ``examples/``, ``tests/data``, ``cli.py`` and ``pyproject.toml`` linked in, nothing generated.
  So a page builds what it uses, under relative paths such as ``symgen/examples/arm4.urdf``.
- ``symgen`` on PATH is ``python -m symgen.cli`` of this checkout. Builds are deterministic (the
  same robot file and options give the same bytes), so within one test run the second and later
  runs of the same ``symgen build`` command line on the same robot file copy the package the first
  one wrote (each distinct build runs for real once).
- README.md's set-up block: its ``pip install ... &&`` parts are dropped (CI installed the package
  before running the tests) and ``python -m pytest`` is not run (it is this suite); the rest runs.
- A page whose first lines hold ``<!-- doc-blocks: slow -->`` is marked slow (``pytest -m slow``):
  only for pages whose blocks take long (big robots, long compiles). Keep the pages CI runs small
  (arm4, a few quantities): together they should stay under about a minute.
- A failing block is reported with its page, line and output.
"""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
RUN = ("python", "bash", "sh")
LINKED = ("symgen", "templates", "examples", "cli.py", "pyproject.toml")
FENCE = re.compile(r"^(?P<indent>[ \t]*)(?P<fence>`{3,}|~{3,})(?P<info>[^\n`]*)$")
SLOW = "<!-- doc-blocks: slow -->"


def pages() -> list[Path]:
    return [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]


def blocks(text: str) -> list[tuple[int, str, str]]:
    """``(line, language, code)`` of every fenced block of a Markdown text, in order (indented
    fences too, their indentation removed)."""
    out, lines, i = [], text.splitlines(), 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        indent, fence = m["indent"], m["fence"]
        language = m["info"].strip().split()[0].lower() if m["info"].strip() else ""
        start, body, i = i + 1, [], i + 1
        while i < len(lines) and not re.match(rf"^{re.escape(indent)}{fence[0]}{{{len(fence)},}}\s*$", lines[i]):
            body.append(lines[i][len(indent):] if lines[i].startswith(indent) else lines[i].lstrip())
            i += 1
        out.append((start, language, "\n".join(body) + "\n"))
        i += 1
    return out


def readme_setup(code: str) -> str:
    """The README's set-up commands without the installs CI already ran and without the suite."""
    kept = []
    for line in code.splitlines():
        parts = [p.strip() for p in line.split("&&")]
        parts = [p for p in parts if not p.startswith("pip install") and not p.startswith("python -m pytest")]
        if parts:
            kept.append(" && ".join(parts))
    return "\n".join(kept) + "\n"


def runnable(page: Path) -> list[tuple[int, str, str]]:
    found = [(line, lang, code) for line, lang, code in blocks(page.read_text(encoding="utf-8")) if lang in RUN]
    if page.name == "README.md" and page.parent == ROOT:
        found = [(line, lang, readme_setup(code) if "pip install" in code else code) for line, lang, code in found]
    return found


#: the driver each page's blocks run in: python blocks exec'd in one namespace, shell blocks through bash
DRIVER = textwrap.dedent('''
    import json, subprocess, sys, traceback
    blocks = json.load(open(sys.argv[1]))
    namespace = {"__name__": "__main__"}
    for line, lang, code in blocks:
        print(f"--- block at line {line} ({lang})", flush=True)
        if lang == "python":
            try:
                exec(compile(code, f"<block at line {line}>", "exec"), namespace)
            except BaseException:
                traceback.print_exc()
                print(f"FAILED: block at line {line}", flush=True)
                sys.exit(1)
        else:
            sys.stdout.flush()
            rc = subprocess.run(["bash", "-euo", "pipefail", "-c", code]).returncode
            if rc:
                print(f"FAILED: block at line {line}: exit code {rc}", flush=True)
                sys.exit(1)
        sys.stdout.flush()
''')

#: ``symgen`` on PATH: this checkout's CLI; a build whose command line and robot file were built
#: before in this test run is copied from that build (see the module's docstring)
SHIM = textwrap.dedent('''
    #!{python}
    import hashlib, json, os, re, shutil, subprocess, sys
    from pathlib import Path
    args = sys.argv[1:]
    cache = os.environ.get("SYMGEN_DOC_BUILDS")
    if not cache or not args or args[0] != "build":
        os.execv(sys.executable, [sys.executable, "-m", "symgen.cli", *args])
    robot = next((a for a in args[1:] if not a.startswith("-") and Path(a).is_file()), None)
    key = hashlib.sha256(json.dumps(args).encode() + (Path(robot).read_bytes() if robot else b"")).hexdigest()[:20]
    entry = Path(cache) / key
    if (entry / "done.json").is_file():
        record = json.loads((entry / "done.json").read_text())
        for target, stored in record["packages"]:
            if Path(target).exists():
                shutil.rmtree(target)
            Path(target).parent.mkdir(parents=True, exist_ok=True)
            shutil.copytree(entry / stored, target, symlinks=True)
        sys.stdout.write(record["stdout"])
        sys.exit(0)
    run = subprocess.run([sys.executable, "-m", "symgen.cli", *args], stdout=subprocess.PIPE, text=True)
    sys.stdout.write(run.stdout)
    if run.returncode == 0:
        packages = []
        for i, m in enumerate(re.finditer(r"^wrote (\\S+?)/? \\(", run.stdout, re.M)):
            target = m.group(1).rstrip("/")
            if Path(target).is_dir():
                shutil.copytree(target, entry / f"p{{i}}", symlinks=True)
                packages.append((target, f"p{{i}}"))
        entry.mkdir(parents=True, exist_ok=True)
        (entry / "done.json").write_text(json.dumps({{"packages": packages, "stdout": run.stdout}}))
    sys.exit(run.returncode)
''').lstrip()


def scratch_root(path: Path) -> Path:
    """A scratch copy of the repository root: the sources linked, nothing generated, ``symgen`` on
    PATH through ``bin/``."""
    path.mkdir(parents=True, exist_ok=True)
    for name in LINKED:
        (path / name).symlink_to(ROOT / name)
    (path / "tests").mkdir()
    (path / "tests" / "data").symlink_to(ROOT / "tests" / "data")
    for name in ("support.py", "conftest.py"):
        (path / "tests" / name).symlink_to(ROOT / "tests" / name)
    (path / "bin").mkdir()
    shim = path / "bin" / "symgen"
    shim.write_text(SHIM.format(python=sys.executable))
    shim.chmod(0o755)
    return path


@pytest.fixture(scope="session")
def doc_builds(tmp_path_factory):
    """One cache of ``symgen build`` results for the whole run (pytest's session scope)."""
    return tmp_path_factory.mktemp("doc-builds")


def _params():
    out = []
    for page in pages():
        if not runnable(page):
            continue
        head = "\n".join(page.read_text(encoding="utf-8").splitlines()[:3])
        marks = [pytest.mark.slow] if SLOW in head else []
        out.append(pytest.param(page, id=str(page.relative_to(ROOT)), marks=marks))
    return out


@pytest.mark.parametrize("page", _params())
def test_page_blocks_run(page, tmp_path, doc_builds):
    root = scratch_root(tmp_path / "repo")
    (tmp_path / "blocks.json").write_text(json.dumps(runnable(page)), encoding="utf-8")
    (tmp_path / "driver.py").write_text(DRIVER, encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": str(root), "PATH": f"{root / 'bin'}{os.pathsep}{os.environ.get('PATH', '')}",
           "SYMGEN_DOC_BUILDS": str(doc_builds), "MPLBACKEND": "Agg", "PYTHONDONTWRITEBYTECODE": "1"}
    env.pop("PYTEST_XDIST_WORKER", None)
    run = subprocess.run([sys.executable, str(tmp_path / "driver.py"), str(tmp_path / "blocks.json")], cwd=root,
                         env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=600)
    assert run.returncode == 0, f"{page.relative_to(ROOT)}: a code block failed\n{run.stdout[-6000:]}"


def test_collector_reads_fences():
    """The block reader on the cases pages use: tagged, untagged, indented (in a list), longer fences."""
    text = ("a\n```python\nx = 1\n```\n- item\n\n  ```bash\n  echo hi\n  ```\n"
            "````text\n```python\nnot run\n```\n````\n```\nplain\n```\n")
    assert [(lang, code) for _, lang, code in blocks(text)] == [
        ("python", "x = 1\n"), ("bash", "echo hi\n"), ("text", "```python\nnot run\n```\n"), ("", "plain\n")]
    assert readme_setup("pip install -e . && symgen build a.urdf\npip install -e \".[test]\" && python -m pytest\n") \
        == "symgen build a.urdf\n"
