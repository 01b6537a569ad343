"""The symbolic runs of a build on several processes, made so that nothing can hang.

Each worker is a fresh interpreter (``python -m symgen.codegen.worker``), not a fork: no copy of
a parent that may have run threads (an OpenMP batch, a test runner's), no re-import of the
user's ``__main__``, no lock shared between processes. Each has a pipe pair of its own and
speaks in frames (8-byte length, then a pickle):

- parent -> worker: ``(robot, options)`` once, then one sweep group (a tuple of quantity keys)
  at a time; the end of its stdin tells it to exit;
- worker -> parent, on its own stdout (``sys.stdout`` and fd 1 go to stderr, so nothing else
  writes there): ``("message", text)``, ``("tick", label, done, total)``, then
  ``("done", {key: (printed context, op counts, seconds)}, timing)`` (:func:`print_sweep`) or ``("error", exception or None,
  traceback text)``.

The parent hands out the groups costliest first as workers become free, multiplexes the pipes
with :mod:`selectors` and, whatever ends the build (a result, an error, Ctrl-C, the CLI's
SIGTERM/SIGHUP handler, the timeout), kills and reaps every worker still alive. A worker ignores
SIGINT (the parent handles Ctrl-C), keeps the default SIGTERM and SIGHUP, dies with its parent
(``PR_SET_PDEATHSIG``) and exits at the end of its stdin.
"""
from __future__ import annotations

import os
import pickle
import selectors
import signal
import struct
import subprocess
import sys
import time
import traceback
from pathlib import Path

from .. import quantities as Q
from ..errors import BuildError
from . import Progress
from . import program as P
from .files import function_context
from .symbolic import optimize, trace_all

_HEADER = struct.Struct("!Q")
_ROOT = Path(__file__).resolve().parents[2]          # the folder that holds this symgen package


def print_sweep(robot, opts, keys, progress: Progress) -> tuple[dict, dict]:
    """``({key: (printed context, op counts, seconds)}, timing)`` for the quantities of one
    sweep; ``timing``: the sweep's seconds in all and in its symbolic runs (``trace``: the
    variants tried included, ``runs`` of them), the program passes and the printing."""
    start = t0 = time.perf_counter()
    times: dict = {}
    traced = trace_all(robot, keys, opts.sweep, tick=progress.tick, times=times)
    passes, printing = times.get("passes", 0.0), 0.0
    out = {}
    for key in keys:
        t1 = time.perf_counter()
        fn = optimize(traced[key], opts.cse)
        counts = P.count_ops(fn)
        t2 = time.perf_counter()
        progress.message(f"{key}: {counts['total']} operations")
        context = function_context(robot, fn, key, opts.scalar)
        t3 = time.perf_counter()
        passes, printing = passes + t2 - t1, printing + t3 - t2
        out[key] = (context, counts, round(t3 - t0, 3))
        t0 = t3
    timing = {"sweep": Q.QUANTITIES[keys[0]].sweep, "quantities": list(keys), "runs": times.get("runs", 0),
              "trace": round(times.get("trace", 0.0), 3), "passes": round(passes, 3), "print": round(printing, 3),
              "seconds": round(time.perf_counter() - start, 3)}
    return out, timing


def frame(obj) -> bytes:
    data = pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL)
    return _HEADER.pack(len(data)) + data


def sweep_label(keys) -> str:
    return f"sweep {Q.QUANTITIES[keys[0]].sweep} ({', '.join(keys)})"


# ---------------------------------------------------------------------------- the worker's side

class _Relay(Progress):
    """A worker's progress: its messages and ticks go to the parent, which reports them."""

    def __init__(self, send):
        self.send = send

    def message(self, text):
        self.send(("message", text))

    def tick(self, label, done, total):
        self.send(("tick", label, done, total))


def _die_with_parent(parent: int) -> None:
    """SIGKILL when the parent dies (Linux); exit now if it already has."""
    if sys.platform.startswith("linux"):
        import ctypes
        try:
            ctypes.CDLL(None, use_errno=True).prctl(1, int(signal.SIGKILL), 0, 0, 0)    # PR_SET_PDEATHSIG
        except (OSError, AttributeError):
            pass
    if os.getppid() != parent:
        os._exit(1)


def _read_exactly(fd: int, size: int) -> bytes | None:
    chunks, left = [], size
    while left:
        chunk = os.read(fd, left)
        if not chunk:
            return None
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


def _receive(fd: int):
    header = _read_exactly(fd, _HEADER.size)
    data = header and _read_exactly(fd, _HEADER.unpack(header)[0])
    return None if data is None else pickle.loads(data)


def main(argv=None) -> None:
    argv = sys.argv[1:] if argv is None else argv
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    for name in ("SIGTERM", "SIGHUP"):
        if hasattr(signal, name):
            signal.signal(getattr(signal, name), signal.SIG_DFL)
    _die_with_parent(int(argv[0]) if argv else os.getppid())
    out = os.dup(1)                             # the frames' pipe; print() and C code write to stderr
    os.dup2(2, 1)
    sys.stdout = sys.stderr

    def send(obj):
        data = memoryview(frame(obj))
        while data:
            data = data[os.write(out, data):]

    setup = _receive(0)
    robot, opts = setup if setup is not None else (None, None)
    while setup is not None and (keys := _receive(0)) is not None:
        try:
            send(("done", *print_sweep(robot, opts, keys, _Relay(send))))
        except Exception as exc:                # a bug or a bad robot: reported, the parent decides
            try:
                pickle.loads(pickle.dumps(exc))
            except Exception:
                exc = None
            send(("error", exc, traceback.format_exc()))
    sys.stderr.flush()
    os._exit(0)                                 # nothing to clean up; the interpreter's teardown costs ~0.3 s


# ---------------------------------------------------------------------------- the parent's side

class _Worker:
    def __init__(self, setup: bytes):
        env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(_ROOT), os.environ.get("PYTHONPATH")])))
        self.proc = subprocess.Popen([sys.executable, "-m", "symgen.codegen.worker", str(os.getpid())],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, cwd=_ROOT, env=env)
        self.stdin, self.stdout = self.proc.stdin.fileno(), self.proc.stdout.fileno()
        os.set_blocking(self.stdin, False)
        os.set_blocking(self.stdout, False)
        self.outgoing, self.incoming = bytearray(setup), bytearray()
        self.keys = None                        # the sweep group it is running

    def give(self, keys) -> None:
        self.keys = keys
        self.outgoing += frame(keys)

    def flush(self) -> None:
        try:
            del self.outgoing[:os.write(self.stdin, self.outgoing)]
        except BlockingIOError:
            pass
        except BrokenPipeError:                 # it died; its stdout's end says how
            self.outgoing.clear()

    def frames(self):
        while len(self.incoming) >= _HEADER.size:
            size = _HEADER.unpack_from(self.incoming)[0]
            if len(self.incoming) < _HEADER.size + size:
                return
            data = bytes(self.incoming[_HEADER.size:_HEADER.size + size])
            del self.incoming[:_HEADER.size + size]
            yield pickle.loads(data)

    def end(self) -> str:
        """How the process ended, once its stdout has closed."""
        try:
            code = self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            code = self.proc.wait()
        if code < 0:
            return f"killed by {signal.Signals(-code).name}"
        return f"exit code {code}"


def run_sweeps(robot, opts, groups, jobs: int, progress: Progress, timeout: float = 0,
               timings: list | None = None) -> dict:
    """``{key: (printed context, op counts, seconds)}`` of every group of ``groups`` (in the order
    given: costliest first), run on ``jobs`` worker processes; BuildError when a worker dies
    without its result or ``timeout`` seconds (0: none) pass. ``timings``, a list, gets each
    sweep's timing (:func:`print_sweep`) with the number of the worker that ran it."""
    setup = frame((robot, opts))
    pending, done, workers, finished = list(groups), {}, [], False
    deadline = time.monotonic() + timeout if timeout else None
    selector = selectors.DefaultSelector()
    try:
        for _ in range(min(jobs, len(pending))):
            worker = _Worker(setup)
            workers.append(worker)
            worker.give(pending.pop(0))
            selector.register(worker.stdout, selectors.EVENT_READ, worker)
        while any(w.keys is not None for w in workers):
            for worker in workers:
                if worker.outgoing:
                    worker.flush()
            writing = [w.stdin for w in workers if w.outgoing]
            left = None if deadline is None else deadline - time.monotonic()
            if left is not None and left <= 0:
                running = "; ".join(sweep_label(w.keys) for w in workers if w.keys is not None)
                raise BuildError(f"symbolic runs: timed out after {timeout:g} s (--timeout) with {running} still "
                                 f"running; raise --timeout (0: none) or limit --quantities")
            # short waits: a SIGTERM the kernel hands to another thread (a BLAS one) runs the
            # CLI's handler only when this thread next wakes
            events = selector.select(0.05 if writing else 0.5 if left is None else min(left, 0.5))
            for key, _ in events:
                worker = key.data
                try:
                    chunk = os.read(worker.stdout, 1 << 16)
                except BlockingIOError:
                    continue
                if not chunk:
                    selector.unregister(worker.stdout)
                    if worker.keys is not None:
                        raise BuildError(f"symbolic runs: the worker process of {sweep_label(worker.keys)} ended "
                                         f"without its result ({worker.end()})")
                    continue
                worker.incoming += chunk
                for kind, *args in worker.frames():
                    if kind == "done":
                        done.update(args[0])
                        if timings is not None:
                            timings.append({**args[1], "worker": workers.index(worker) + 1})
                        worker.keys = None
                        if pending:
                            worker.give(pending.pop(0))
                    elif kind == "error":
                        _raise(worker.keys, *args)
                    else:
                        getattr(progress, kind)(*args)
        finished = True
    finally:
        selector.close()
        _stop(workers, finished)
    return done


def _raise(keys, exc, text):
    if exc is not None:
        raise exc from _Remote(text)
    last = (text.strip().splitlines() or ["(no traceback)"])[-1]
    raise BuildError(f"symbolic runs: {sweep_label(keys)} failed in its worker process: {last}") from _Remote(text)


class _Remote(Exception):
    """The traceback of an error in a worker process, as text (the cause of the error raised)."""

    def __str__(self):
        return "\n" + self.args[0]


def _stop(workers, finished: bool) -> None:
    """End every worker: after a whole build, by the end of its stdin (then SIGKILL after a
    second); otherwise at once by SIGKILL. Reaped either way, so no zombie is left."""
    for worker in workers:
        try:
            worker.proc.stdin.close()
        except OSError:
            pass
        if not finished and worker.proc.poll() is None:
            worker.proc.kill()
    deadline = time.monotonic() + 1
    for worker in workers:
        try:
            worker.proc.wait(timeout=max(0.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            worker.proc.kill()
            worker.proc.wait()
        worker.proc.stdout.close()


if __name__ == "__main__":
    # run the copy imported under its own name, so the pickles name symgen.codegen.worker
    from symgen.codegen.worker import main as _main
    _main()
