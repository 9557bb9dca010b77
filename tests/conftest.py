from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
FIX = ROOT / "fixtures"


def fixture_path(name: str) -> Path:
    return FIX / name


@pytest.fixture(scope="session", autouse=True)
def _analyses_cache(tmp_path_factory):
    """The folder of tests/kit/cached.py's reports: the run's base temporary folder, shared by its
    pytest-xdist workers (each has its own folder below it)."""
    from tests.kit import cached

    shared = tmp_path_factory.getbasetemp()
    if shared.name.startswith("popen-gw"):
        shared = shared.parent
    (shared / "analyses").mkdir(exist_ok=True)
    cached.DIR[:] = [shared / "analyses"]
    yield
    cached.DIR.clear()


@pytest.fixture(scope="session")
def h100_tree():
    from perfreport.pipeline import load_tree

    return load_tree(str(FIX / "h100_qwen_0.5b.json.gz"))


@pytest.fixture(scope="session")
def mi300_tree():
    from perfreport.pipeline import load_tree

    return load_tree(str(FIX / "mi300_qwen_0.5b.json.gz"))


def has_gpu() -> bool:
    try:
        import torch
    except ImportError:
        return False
    return torch.cuda.is_available()


def pytest_collection_modifyitems(config, items):
    if has_gpu():
        return
    skip = pytest.mark.skip(reason="needs a CUDA or HIP GPU")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)
