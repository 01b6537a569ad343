"""The documentation site builds with warnings as errors (``mkdocs build --strict``): a broken
link, a page left out of the nav, a reference that does not render fails the suite. The built
pages are then read back: the command-line reference lists every option of every command (it is
generated from click)."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import click
import pytest

ROOT = Path(__file__).resolve().parents[1]
pytest.importorskip("mkdocs")
pytest.importorskip("material")
pytest.importorskip("mkdocs_click")


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    out = tmp_path_factory.mktemp("site")
    env = {**os.environ, "PYTHONPATH": f"{ROOT}{os.pathsep}{os.environ.get('PYTHONPATH', '')}",
           "NO_MKDOCS_2_WARNING": "1", "MPLBACKEND": "Agg"}
    run = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(out)], cwd=ROOT,
                         env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=600)
    assert run.returncode == 0, f"mkdocs build --strict failed:\n{run.stdout[-8000:]}"
    return out


def page(site: Path, name: str) -> str:
    return (site / name / "index.html").read_text(encoding="utf-8")


def test_cli_reference_lists_every_option(site):
    from symgen.cli import main

    html = page(site, "reference/cli")
    for name, command in main.commands.items():
        assert f"symgen {name}" in html, name
        for param in command.params:
            if isinstance(param, click.Option):
                assert any(opt in html for opt in param.opts), f"symgen {name}: {param.opts} missing from the CLI page"
