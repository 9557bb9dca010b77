"""Every committed trace of the public corpus (fixtures/corpus/MANIFEST.json) through the checks of
scripts/corpus.py: exit 0 or the documented refusal, GPU detected or named, kernels kept = kernels in
the raw file, conservation, no row above 100% without a cause, no "model inputs suspect" row counted
as modelled. The larger traces run through the script (docs/corpus.md)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts"))

import corpus  # noqa: E402
from tests.kit.cached import analyzed  # noqa: E402

ENTRIES = [e for e in corpus.manifest() if e.get("fixture")]


def test_manifest_names_sources_licenses_and_files():
    entries = corpus.manifest()
    assert len(entries) >= 30
    repos = {e["repo"] for e in entries}
    assert len(repos) >= 4
    for e in entries:
        assert e["commit"] and len(e["commit"]) == 40 and e["license"] in ("MIT", "BSD-3-Clause"), e["id"]
        assert (corpus.CORPUS / e["id"].split("/")[0] / "LICENSE").is_file()
        if e.get("fixture"):
            assert (corpus.CORPUS / e["fixture"]).is_file(), e["fixture"]
    committed = sum((corpus.CORPUS / e["fixture"]).stat().st_size for e in ENTRIES)
    assert committed < 4_000_000  # a few MB in all; the larger ones go through the script


@pytest.mark.parametrize("entry", ENTRIES, ids=[e["id"] for e in ENTRIES])
def test_committed_trace_passes_the_corpus_checks(entry):
    res = corpus.check(corpus.CORPUS / entry["fixture"], entry.get("refusal"), analyze=analyzed)
    assert res["problems"] == []
    assert res["exit"] == ("refused" if entry.get("refusal") else "ok")
