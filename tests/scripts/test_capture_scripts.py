"""Every capture script (scripts/capture_*_fixtures.py) re-run into tmp_path (tests/scripts/
conftest.py): it writes the files it names, each tagged with its generator, and what it writes
is what is committed under fixtures/ (cpu_op names, Input Dims, Input type, Concrete Inputs in
order), so no committed fixture can drift from its generator."""

from __future__ import annotations

import pytest

from tests.scripts.kit import ROOT, WRITES, cpu_ops, load, structure

FILES = [(script, name) for script, names in WRITES.items() for name in names]


def test_the_scripts_write_their_files_and_nothing_else(captured):
    written = sorted(str(p.relative_to(captured)) for p in captured.rglob("*") if p.is_file())
    assert written == sorted(name for _, name in FILES)


@pytest.mark.parametrize("script,name", FILES)
def test_each_file_names_itself_and_its_generator(script, name, captured):
    import torch

    trace = load(captured / name)
    assert trace["traceName"] == name.rsplit("/", 1)[-1]
    assert trace["metadata"]["generator"] == f"scripts/{script}"
    assert trace["metadata"]["torch"] == torch.__version__


@pytest.mark.parametrize("script,name", FILES)
def test_the_committed_fixture_is_what_the_generator_writes(script, name, captured):
    import torch

    committed = ROOT / "fixtures" / name
    made_with = load(committed)["metadata"]["torch"]
    if made_with != torch.__version__:
        pytest.skip(f"{name} was captured with torch {made_with}, this is {torch.__version__}")
    ops = cpu_ops(captured / name)
    assert ops, name
    assert structure(ops) == structure(cpu_ops(committed))
