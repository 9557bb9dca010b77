"""Every sheet of every committed fixture, cell for cell, against ``tests/data/sheet_digests.json``.

A refactor must leave the digests unchanged. A change that is meant to alter figures regenerates
them (``python scripts/sheet_digests.py --update``) in the same commit and says why there.
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest
from tests.kit.cached import analyzed

ROOT = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("sheet_digests", ROOT / "scripts" / "sheet_digests.py")
SD = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(SD)
WANT = json.loads(SD.DIGESTS.read_text())


def test_every_case_has_digests():
    assert sorted(WANT) == sorted(name for name, _, _ in SD.CASES)


@pytest.mark.parametrize("name,trace,kw", SD.CASES, ids=[c[0] for c in SD.CASES])
def test_sheets_unchanged(name, trace, kw):
    got = SD.digest_case(trace, kw, analyze=analyzed)
    want = WANT[name]
    changed = sorted(k for k in set(got) | set(want) if got.get(k) != want.get(k))
    assert not changed, f"{name}: sheets changed: {', '.join(changed)} (scripts/sheet_digests.py --update if meant)"
