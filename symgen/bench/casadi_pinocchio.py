"""Pinocchio's algorithms taped in CasADi: the path a CasADi user actually takes, as a rival of
``symgen bench --casadi`` beside CasADi's tape of symgen's own algorithms (:mod:`.casadi`).

Pinocchio's CasADi scalar type is not in the ``pin`` wheel; the ``cmeel-casadi-kin-dyn`` wheel
(casadi_kin_dyn: Pinocchio's templated algorithms evaluated on ``casadi::SX``) has it, but pins
Pinocchio 2.6 and CasADi 3.7, so it lives in an environment of its own: a virtual environment
under ``$SYMGEN_CACHE/casadi-kin-dyn-<version>/``, made once (``pip install``) like the Pinocchio
C++ harness is built once. There a small script (:data:`_TAPE_SCRIPT`) loads the URDF with
Pinocchio, tapes ``crba`` and ``rnea`` on SX and saves both CasADi Functions; CasADi reads its own
serialization across these versions, so the rest (C by AD of the taped M, CSE, the check, the C
code, the C loop) is :mod:`.casadi`'s, unchanged: the two rivals differ only in whose algorithm
was taped.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from .harness import BenchError, cache_dir

#: the wheel (and its version, which pins Pinocchio 2.6.20 and CasADi 3.7) of the environment
WHEEL = "cmeel-casadi-kin-dyn==1.6.14"
#: seconds for pip to make the environment, and for one tape
INSTALL_TIMEOUT = 900
TAPE_TIMEOUT = 300

_TAPE_SCRIPT = r"""
import json, sys
import casadi_kin_dyn
urdf, out = sys.argv[1], sys.argv[2]
kd = casadi_kin_dyn.CasadiKinDyn(open(urdf).read())
names = [n for n in kd.joint_names() if n != "universe"]
kd.crba().save(out + "/crba.casadi")
kd.rnea().save(out + "/rnea.casadi")
kd.aba().save(out + "/aba.casadi")
print(json.dumps({"joint_names": names, "nq": kd.nq(), "nv": kd.nv()}))
"""


def environment() -> tuple[str, dict]:
    """(python, env) of the casadi_kin_dyn environment, made on first use."""
    root = cache_dir() / ("casadi-kin-dyn-" + WHEEL.partition("==")[2])
    python = root / "bin" / "python"
    done = root / ".complete"
    if not done.exists():
        tmp = Path(tempfile.mkdtemp(prefix=root.name + ".tmp-", dir=root.parent))
        try:
            for command in ([sys.executable, "-m", "venv", str(tmp)],
                            [str(tmp / "bin" / "python"), "-m", "pip", "install", "--quiet", WHEEL]):
                proc = subprocess.run(command, capture_output=True, text=True, timeout=INSTALL_TIMEOUT)
                if proc.returncode:
                    last = (proc.stderr or proc.stdout).strip().splitlines()[-1:] or ["?"]
                    raise BenchError(f"CasADi-taped Pinocchio: making its environment failed ({' '.join(command[-2:])}): "
                                     f"{last[0]}")
            (tmp / ".complete").write_text(WHEEL + "\n")
            if root.exists():
                import shutil
                shutil.rmtree(root)
            tmp.rename(root)                # the venv's scripts name their folder: made in place below
        except subprocess.TimeoutExpired:
            raise BenchError(f"CasADi-taped Pinocchio: pip install {WHEEL} took over {INSTALL_TIMEOUT} s") from None
        finally:
            if tmp.exists():
                import shutil
                shutil.rmtree(tmp, ignore_errors=True)
    # the venv was made under its temporary name: call its interpreter by path, never its scripts
    prefix = next(root.glob("lib/python*/site-packages/cmeel.prefix"), None)
    if prefix is None:
        raise BenchError(f"CasADi-taped Pinocchio: {root} has no cmeel.prefix (a broken environment: delete it)")
    env = dict(os.environ, LD_LIBRARY_PATH=os.pathsep.join(filter(None, [str(prefix / "lib"),
                                                                         os.environ.get("LD_LIBRARY_PATH")])))
    env.pop("PYTHONPATH", None)
    return str(python), env


def pinocchio_functions(urdf, joint_names) -> dict:
    """``{"crba": Function(q) -> M, "rnea": Function(q, v, a) -> tau, "aba": Function(q, v, tau)
    -> qdd}``: Pinocchio's algorithms
    taped on CasADi SX by casadi_kin_dyn, for the robot of ``urdf`` whose symgen joints are
    ``joint_names`` (Pinocchio's must be the same, in the same order, one coordinate each)."""
    import casadi as ca

    python, env = environment()
    with tempfile.TemporaryDirectory(prefix="symgen-casadi-pin-") as tmp:
        try:
            proc = subprocess.run([python, "-c", _TAPE_SCRIPT, str(Path(urdf).resolve()), tmp], capture_output=True,
                                  text=True, timeout=TAPE_TIMEOUT, env=env)
        except subprocess.TimeoutExpired:
            raise BenchError(f"CasADi-taped Pinocchio: taping {Path(urdf).name} took over {TAPE_TIMEOUT} s") from None
        if proc.returncode:
            last = (proc.stderr or proc.stdout).strip().splitlines()[-1:] or ["?"]
            raise BenchError(f"CasADi-taped Pinocchio: {Path(urdf).name}: {last[0]}")
        info = json.loads(proc.stdout.strip().splitlines()[-1])
        if tuple(info["joint_names"]) != tuple(joint_names) or info["nq"] != info["nv"]:
            raise BenchError(f"CasADi-taped Pinocchio: its joints ({info['nq']} coordinates, {info['nv']} speeds, "
                             f"{', '.join(info['joint_names'][:4])}...) are not the package's one coordinate per joint "
                             f"in the same order")
        return {name: ca.Function.load(str(Path(tmp) / f"{name}.casadi")) for name in ("crba", "rnea", "aba")}
