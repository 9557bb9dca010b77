"""The helpers beside these tests (``diff_traces``) stay importable by their bare name now that
this folder is a package (tests/diff/__init__.py)."""

from __future__ import annotations

import sys
from pathlib import Path

_HERE = str(Path(__file__).resolve().parent)
if _HERE not in sys.path:
    sys.path.insert(0, _HERE)
