"""Run the scripts/capture_*_fixtures.py command lines of several groups from one Python process:
``python run_captures.py OUT SCRIPT... [-- SCRIPT...]...`` imports torch once, then forks one child
per group (``--`` separates them); the children run side by side, and each runs its SCRIPTs in
turn as ``python scripts/SCRIPT --out OUT`` would. Exits non-zero when a script fails (its group
stops there; the others finish).

Before forking, the parent imports what every script imports anyway: torch, and
``torch._inductor``, which ``torch.profiler``'s ``prepare_trace`` imports at the first profile
(``hasattr(torch, "_inductor")``; ~3.9 CPU s, as much as torch itself). Nothing else is set up
there: the stand-in ops, the seeds and the thread count are each script's own, in its child.

Scripts that register different stand-ins under one op name (capture_graph_fixtures.py and
capture_serving_fixtures.py both define ``sglang::store_cache``) go to separate groups:
scripts/stand_in_library.py refuses the second kernel.
"""

from __future__ import annotations

import os
import runpy
import sys
from pathlib import Path

SCRIPTS = Path(__file__).resolve().parents[2] / "scripts"


def run_group(out: str, scripts: list[str]) -> int:
    sys.path.insert(0, str(SCRIPTS))
    for script in scripts:
        sys.argv = [str(SCRIPTS / script), "--out", out]
        try:
            runpy.run_path(str(SCRIPTS / script), run_name="__main__")
        except SystemExit as e:
            if e.code not in (0, None):
                print(f"{script}: exit status {e.code}", file=sys.stderr)
                return 1
    return 0


def groups(args: list[str]) -> list[list[str]]:
    out: list[list[str]] = [[]]
    for a in args:
        if a == "--":
            out.append([])
        else:
            out[-1].append(a)
    return [g for g in out if g]


def main(out: str, args: list[str]) -> int:
    import torch
    import torch._inductor  # noqa: F401  (what the first torch.profiler.profile imports)

    kids = []
    for g in groups(args):
        sys.stdout.flush()
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:  # the child: run the group, exit without the parent's atexit handlers
            code = 1
            try:
                code = run_group(out, g)
            except BaseException as e:  # a traceback in the child's stderr, then exit 1
                import traceback

                traceback.print_exception(e)
            finally:
                sys.stdout.flush()
                sys.stderr.flush()
                os._exit(code)
        kids.append((pid, g))
    bad = 0
    for pid, g in kids:
        _, status = os.waitpid(pid, 0)
        if os.waitstatus_to_exitcode(status) != 0:
            print(f"{', '.join(g)}: exit {os.waitstatus_to_exitcode(status)}", file=sys.stderr)
            bad = 1
    del torch
    return bad


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2:]))
