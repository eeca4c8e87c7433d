"""Run a script of ``scripts/`` or ``benchmarks/`` as ``python PATH ARGS...`` runs it, in the test's process."""

from __future__ import annotations

import contextlib
import io
import runpy
import shlex
import sys

import torch

from tests.conftest import ROOT


def run_script(rel: str, args: str = "") -> str:
    """Run ``ROOT/rel`` as ``__main__`` with the command line ``args`` (split as a shell splits it; its folder
    first on ``sys.path``, as Python puts it) and return what it printed. A non-zero exit fails; ``sys.argv``,
    ``sys.path`` and torch's thread count (scripts set it) are restored."""
    path = ROOT / rel
    argv, sys_path, threads = sys.argv, list(sys.path), torch.get_num_threads()
    out = io.StringIO()
    sys.argv = [str(path), *shlex.split(args)]
    sys.path.insert(0, str(path.parent))
    try:
        with contextlib.redirect_stdout(out):
            runpy.run_path(str(path), run_name="__main__")
    except SystemExit as stop:
        if stop.code not in (None, 0):
            raise AssertionError(f"{rel} {args} exited with {stop.code}:\n{out.getvalue()}") from stop
    finally:
        sys.argv, sys.path[:] = argv, sys_path
        torch.set_num_threads(threads)
    return out.getvalue()
