from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
FIX = ROOT / "fixtures"


def fixture_path(name: str) -> Path:
    return FIX / name


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
