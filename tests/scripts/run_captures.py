"""Run several scripts/capture_*_fixtures.py command lines in one Python process (one torch
import instead of one per script): ``python run_captures.py OUT SCRIPT...`` runs each SCRIPT as
``python scripts/SCRIPT --out OUT`` would, and exits non-zero at the first that fails.

Scripts that register different stand-ins under one op name (capture_graph_fixtures.py and
capture_serving_fixtures.py both define ``sglang::store_cache``) must go to separate processes:
scripts/stand_in_library.py refuses the second kernel.
"""

from __future__ import annotations

import runpy
import sys
from pathlib import Path

SCRIPTS = Path(__file__).resolve().parents[2] / "scripts"


def main(out: str, scripts: list[str]) -> int:
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


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2:]))
