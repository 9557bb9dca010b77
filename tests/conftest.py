from __future__ import annotations

import sys
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


# The longest modules, each run as one unit on one pytest-xdist worker under `--dist loadgroup`
# (pyproject's addopts): xdist hands out the units with the most tests first, so the Triton
# interpreter's and compiler's minutes and the capture scripts (tests/scripts/conftest.py) start at
# the beginning, side by side, instead of ending the run on one worker while the other idles; a
# module-scoped fixture (the compiled kernels) is built once, and no worker waits on the other's
# capture lock. Every other test is a unit of its own, handed out in collection order.
# (pytest-xdist 3.8 cannot group by marks under pytest 9: it renames `item._nodeid`, which pytest
# 9 no longer reads; so the groups are the scheduler's, below, by file.)
GROUPS = {
    "tests/pa/kernel/test_partition_kernel.py": "triton-interpreter",
    "tests/pa/kernel/test_partition_kernel_scales.py": "triton-interpreter",
    "tests/pa/kernel/test_compiled_checks.py": "triton-compile",
    "tests/scripts/test_capture_": "captures",  # every test_capture_*.py (the `captured` fixture)
}


def xdist_group(nodeid: str) -> str | None:
    path = nodeid.split("::", 1)[0]
    return GROUPS.get(path) or next((g for p, g in GROUPS.items() if p.endswith("_") and path.startswith(p)), None)


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config, log):
    if config.getvalue("dist") != "loadgroup":
        return None
    from xdist.scheduler import LoadScopeScheduling

    class Grouped(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return xdist_group(nodeid) or nodeid

    return Grouped(config, log)


def pytest_runtest_setup(item):
    # Triton's interpreter, once a test module has imported it: tests/kit/interpreter.py
    if "triton.runtime.interpreter" in sys.modules:
        from tests.kit import interpreter

        interpreter.install()


def pytest_collection_modifyitems(config, items):
    if has_gpu():
        return
    skip = pytest.mark.skip(reason="needs a CUDA or HIP GPU")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)
