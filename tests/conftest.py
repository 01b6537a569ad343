"""Shared test fixtures.

Shared test utilities live in ``tests/support.py``; tests/ is not a package, so this directory is put on
``sys.path`` here and tests ``import support``.
"""
from __future__ import annotations

import os
import sys
import warnings
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

import support  # noqa: E402  (needs the path above)

# no build cache unless a test sets one up (tests/test_build_cache.py, in a folder of its own): a
# build of the suite never reads what an earlier run, or an earlier test, left (a test that
# compares two builds must compare two builds); the CLI runs the tests start inherit it
os.environ["SYMGEN_BUILD_CACHE"] = "off"


@pytest.fixture(scope="session")
def pin():
    """The pinocchio module. Missing: the test is skipped, or fails if the CI variable is set
    (then the test extra was not installed, and skipping would hide that nothing was checked)."""
    return support.require_pinocchio()


@pytest.fixture(scope="session")
def erd():
    """``erd(relative)``: a path under example-robot-data's robots directory (same skip/CI rule)."""
    return support.erd_path


@pytest.fixture(scope="session")
def c_package(tmp_path_factory):
    """``c_package(label)``: (folder, package, robot) of a small package built once a session without
    its binding, for the tests that compile its C themselves (:mod:`c_programs`); labels in
    ``c_programs.PACKAGES``."""
    import c_programs

    cache = {}

    def get(label):
        if label not in cache:
            cache[label] = c_programs.build_package(label, tmp_path_factory.mktemp(f"c-{label}"))
        return cache[label]
    return get


@pytest.fixture(autouse=True, scope="session")
def _mujoco_warnings_as_python_warnings():
    """MuJoCo's warnings (the compiler's, when a test loads a model with MuJoCo itself, the oracle)
    as Python warnings: MuJoCo's own handler appends them to MUJOCO_LOG.TXT in the working
    directory, which left that file in the checkout after every run. symgen's own reader installs
    a handler of its own around its compile (``symgen.mjcf.compile_mjcf``) and puts this one back."""
    try:
        import mujoco
    except ImportError:                   # the MJCF tests then skip or fail on their own
        yield
        return
    previous = mujoco.get_mju_user_warning()
    mujoco.set_mju_user_warning(lambda text: warnings.warn(f"MuJoCo: {' '.join(str(text).split())}", RuntimeWarning))
    yield
    mujoco.set_mju_user_warning(previous)


def pytest_terminal_summary(terminalreporter):
    """With SYMGEN_ORACLE_SUMMARY=1, print the worst relative error per robot and quantity."""
    if not os.environ.get("SYMGEN_ORACLE_SUMMARY") or not support.WORST:
        return
    tr = terminalreporter
    tr.section("symgen vs Pinocchio: worst relative error")
    robots = sorted({r for r, _ in support.WORST})
    whats = sorted({w for _, w in support.WORST})
    tr.write_line(f"{'robot':34s}" + "".join(f"{w:>12s}" for w in whats))
    for r in robots:
        cells = (f"{support.WORST[(r, w)]:12.1e}" if (r, w) in support.WORST else f"{'':12s}" for w in whats)
        tr.write_line(f"{r:34s}" + "".join(cells))
