"""The documentation site builds with warnings as errors (``mkdocs build --strict``): a broken
link, a page left out of the nav, a reference that does not render fails the suite. The built
pages are then read back: the command-line reference lists every option of every command (it is
generated from click)."""
from __future__ import annotations

import os
import re
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


def test_function_reference_lists_every_registry_function(site):
    """The reference is generated from the registry: every function, under its anchor, with its key
    and each output's name."""
    from symgen import quantities as Q

    html = page(site, "reference/functions")
    for x in Q.QUANTITIES.values():
        assert f'id="{x.function}"' in html, f"{x.function} has no section in the function reference"
        assert f"<code>{x.key}</code>" in html, x.key
        for o in x.outputs:
            assert f"<code>{o.name}</code>" in html, f"{x.function}: output {o.name}"


def test_every_sweep_has_its_algorithm_paper_and_file():
    from symgen import quantities as Q
    from symgen.docs_reference import ALGORITHMS, pinocchio_text, shape_text

    assert set(ALGORITHMS) == set(Q.SWEEPS), "symgen.docs_reference.ALGORITHMS and the registry's sweeps differ"
    for name, (algorithm, paper, files) in ALGORITHMS.items():
        assert algorithm and paper, name
        for f in files.split(", "):
            assert (ROOT / f).is_file(), f"{name}: {f} does not exist"
    for x in Q.QUANTITIES.values():
        assert pinocchio_text(x)
        for o in x.outputs:
            assert shape_text(o).startswith("(") or shape_text(o) == "scalar"


def test_shapes_in_words_match_a_robot():
    """The reference's shapes, read on arm4 with a free-flyer (nv 10, nq 11), give the generated
    arrays' shapes."""
    from symgen import quantities as Q
    from symgen.docs_reference import shape_text
    from symgen.mjcf import load_robot

    robot = load_robot(str(ROOT / "symgen/examples/arm4.urdf"), floating_base=True)
    opts = Q.SweepOptions()
    sizes = {"nv": robot.nv, "nq": robot.nq, "10·bodies": 10 * len(robot.link_names),
             "frames": len(Q.frames_of(robot, None))}
    for key in set(Q.available(robot)) - set(Q.contact.CONTACT_KEYS) - set(Q.loops.LOOP_KEYS):
        for o in Q.QUANTITIES[key].outputs:
            text = shape_text(o)
            if text == "scalar":
                assert o.shape(robot, opts) == ()
                continue
            words = [w.strip() for w in text.strip("(),").split(",") if w.strip()]
            expected = tuple(int(w) if w.isdigit() else sizes[w] for w in words)
            assert o.shape(robot, opts) == expected, (key, o.name, text)


def test_c_api_page_holds_the_header_contract(site):
    html = re.sub(r"<[^>]+>", "", page(site, "reference/c-api"))
    assert "restrict" in html and "_batch_threads" in html and "arm4_coriolis_matrix(" in html


def test_results_pages_name_the_run_of_every_figure(site):
    """Each results table comes from docs/results/*.json, and every run it uses is listed with its
    command and date."""
    from symgen import docs_results as R

    runs = R.runs()
    for rival in R.RIVALS:
        mine = [r for r in runs if r.rival == rival]
        html = page(site, f"results/{rival}")
        if not mine:
            assert "No run against" in html
            continue
        assert (site / "results" / f"{rival}.svg").is_file()
        if R.dof_plot(rival) is not None:             # functions timed on robots of 3+ sizes: time against nv
            assert (site / "results" / f"{rival}_dof.svg").is_file() and f"{rival}_dof.svg" in html
        for run in mine:
            assert run.path.name in html, f"{rival}: {run.path.name} is not named on its page"
            assert R.rows(rival, [run]), f"{run.path.name} gives no row of its rival's table"


def test_cli_help_names_every_input_kind():
    from click.testing import CliRunner

    from symgen.cli import main

    text = " ".join(CliRunner().invoke(main, ["--help"]).output.split())
    assert "URDF+" in text and "MJCF" in text and "described by a URDF" not in text
    assert "ROBOT" in CliRunner().invoke(main, ["build", "--help"]).output


def test_results_table_takes_each_figure_from_the_newest_run(tmp_path):
    """Two runs on one robot: a function both timed shows the newer run's figure and names it; a
    function only the older run timed keeps the older figure; a run without its command is refused."""
    import json

    from symgen import docs_results as R

    machine = {"cpu": "test CPU", "cores": 2}
    old = {"command": "symgen bench old", "date": "2026-01-01", "machine": machine,
           "us": {"M": {"c_loop": 1.0, "pin_cpp": 2.0}, "C": {"c_loop": 1.0, "pin_cpp": 5.0}}}
    new = {"command": "symgen bench new", "date": "2026-02-01", "machine": machine,
           "us": {"M": {"c_loop": 0.5, "pin_cpp": 2.0}}}
    (tmp_path / "pinocchio_robot.json").write_text(json.dumps(old))
    (tmp_path / "pinocchio_robot_again.json").write_text(json.dumps(new))
    text = R.page("pinocchio", tmp_path)
    assert "| `mass_matrix` | crba | 0.5 | 2 | **4.00x** | [2] |" in text
    assert "| `coriolis_matrix` | computeCoriolisMatrix | 1 | 5 | **5.00x** | [1] |" in text
    assert "1. `symgen bench old`, 2026-01-01" in text and "2. `symgen bench new`, 2026-02-01" in text
    assert R.plot("pinocchio", tmp_path).startswith(b"<?xml")
    (tmp_path / "pinocchio_robot_bad.json").write_text(json.dumps({"date": "x", "machine": machine}))
    with pytest.raises(ValueError, match="no 'command'"):
        R.runs(tmp_path)


def test_time_against_nv_plots_only_functions_timed_on_three_sizes(tmp_path):
    """The time-against-nv plot: a function timed on robots of three sizes is drawn, one timed on
    two is not; a rival with none of the first kind gets no plot."""
    import json

    from symgen import docs_results as R

    machine = {"cpu": "test CPU", "cores": 2}
    for robot, nv in (("a", 6), ("b", 12), ("c", 30)):
        us = {"M": {"c_loop": nv / 10, "pin_cpp": nv / 3}}
        if robot != "c":
            us["C"] = {"c_loop": 1.0, "pin_cpp": 2.0}
        (tmp_path / f"pinocchio_{robot}.json").write_text(json.dumps(
            {"command": f"symgen bench {robot}", "date": "2026-01-01", "machine": machine, "nv": nv, "us": us}))
    series = R._by_dof("pinocchio", tmp_path)
    assert list(series) == ["mass_matrix"] and [p[0] for p in series["mass_matrix"]] == [6, 12, 30]
    svg = R.dof_plot("pinocchio", tmp_path).decode()
    assert svg.startswith("<?xml") and "mass_matrix" in svg and "coriolis_matrix" not in svg
    assert "pinocchio_dof.svg" in R.page("pinocchio", tmp_path)
    (tmp_path / "pinocchio_c.json").unlink()
    assert R.dof_plot("pinocchio", tmp_path) is None and "_dof.svg" not in R.page("pinocchio", tmp_path)
