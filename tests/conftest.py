from __future__ import annotations

import gc
import os
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

# torch's intra-op pool at one thread in the test processes and what they start (unless the
# caller says otherwise): two pytest-xdist workers on two cores with two spinning OpenMP threads
# each only burn CPU (the captures pin their own count: scripts/stand_in_library.py)
os.environ.setdefault("OMP_NUM_THREADS", "1")

# The cyclic collector less often in the test processes (not in the processes they start): a
# pytest-xdist worker holds torch, every test module and the session fixtures' trees, and each
# full collection walks all of them; at the default thresholds (700, 10, 10) the collections
# took ~10 CPU s a worker (~6% of the suite), ~3x less at these (measured on test_corpus,
# test_formats, test_conservation, test_excel: 3.3 -> 1.0 CPU s). What is collected is the same,
# later; perfreport collects the records' cycles itself (TraceTree.release).
gc.set_threshold(10_000, 20, 20)
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


# Scheduling under `--dist loadgroup` (pyproject's addopts), tests/conftest.py's own: every test
# module is one unit of work on one pytest-xdist worker (so a module- or session-scoped fixture is
# built once, not once per worker: with every test a unit of its own, test_diff's diffs, test_engines'
# serial analysis and the other module fixtures were built on both workers), and a few modules
# that share one fixture or one folder are one unit together (GROUPS). The units go out longest
# first (longest processing time first: the worker that finishes a unit takes the next longest),
# by the CPU seconds measured for the heaviest (COST, `benchmarks/suite_cpu.py`, approximate: only
# the order matters) and 0.05 s a test for the others, so no long unit starts last.
# (pytest-xdist 3.8 cannot group by marks under pytest 9: it renames `item._nodeid`, which pytest
# 9 no longer reads; so the groups are the scheduler's, below, by file.)
GROUPS = {
    "tests/pa/kernel/test_partition_kernel.py": "triton-interpreter",
    "tests/pa/kernel/test_partition_kernel_scales.py": "triton-interpreter",
    "tests/scripts/test_capture_": "captures",  # every test_capture_*.py (the `captured` fixture)
}
COST = {  # session 27 (benchmarks/suite_cpu.py, -n 2); wall-heavy units (Ray, Chromium, CLI processes) by their wall
    "triton-interpreter": 32.0,
    "tests/multi/test_engines.py": 21.0,  # ~9 CPU s, ~21 s wall (Ray's start)
    "tests/writers/test_html_browser.py": 14.5,  # ~8 CPU s, ~14.5 s wall (Chromium)
    "tests/cli/test_hostile.py": 14.5,
    "tests/tables/test_conservation.py": 14.0,
    "tests/read/test_collect_doc.py": 14.0,
    "tests/read/test_collect_c.py": 12.0,
    "tests/traces/test_corpus.py": 11.5,
    "tests/cli/test_hostile_readers.py": 11.5,
    "tests/cli/test_app.py": 11.5,
    "captures": 11.0,
    "tests/cli/test_hostile_outputs.py": 11.0,  # ~5 CPU s, ~11 s wall
    "tests/house/test_sheet_digests.py": 10.5,
    "tests/scripts/test_gpu_checks_script.py": 6.0,
    "tests/pa/kernel/test_compiled_checks.py": 6.0,  # 70 CPU s with an empty Triton cache
    "tests/cli/test_bench_pa.py": 5.5,
    "tests/diff/test_diff.py": 5.5,
    "tests/tables/test_coverage_statement.py": 4.5,
    "tests/cli/test_main.py": 3.5,
    "tests/writers/test_html_timeline_js.py": 3.5,
}


def xdist_group(nodeid: str) -> str:
    path = nodeid.split("::", 1)[0]
    return (
        GROUPS.get(path) or next((g for p, g in GROUPS.items() if p.endswith("_") and path.startswith(p)), None) or path
    )


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config, log):
    if config.getvalue("dist") != "loadgroup":
        return None
    from xdist.scheduler import LoadScopeScheduling

    class Grouped(LoadScopeScheduling):
        ordered = False

        def _split_scope(self, nodeid: str) -> str:
            return xdist_group(nodeid)

        def _assign_work_unit(self, node) -> None:
            if not self.ordered:  # the first assignment: the queue holds every unit
                self.ordered = True
                units = sorted(self.workqueue.items(), key=lambda u: -COST.get(u[0], 0.05 * len(u[1])))
                self.workqueue.clear()
                self.workqueue.update(units)
            super()._assign_work_unit(node)

    return Grouped(config, log)


# Bytecode for the workers, written once by the controller (`make test`: `-n auto`, bytecode
# allowed): on a clean checkout both workers otherwise start by compiling the same ~400 modules
# (perfreport's, the helpers') and rewriting the same ~230 test modules' asserts side by side,
# ~4 CPU s each. The controller does it before it starts them, in two forked processes, through
# pytest's own rewrite and pyc writer (the workers read those pycs as a second run does) and
# py_compile for the rest (the pyc `import` writes); anything that fails here is left to the
# workers, as before.
def _bytecode(paths: list, config) -> None:
    import importlib.util
    import py_compile

    from _pytest.assertion import rewrite

    state = config.stash[rewrite.assertstate_key]
    for fn in paths:
        try:
            if fn.name.startswith("test_") or fn.name == "conftest.py":
                pyc = rewrite.get_cache_dir(fn) / (fn.name[:-3] + rewrite.PYC_TAIL)
                if pyc.exists() and pyc.stat().st_mtime >= fn.stat().st_mtime:
                    continue
                if rewrite.try_makedirs(pyc.parent):
                    source_hash, co = rewrite._rewrite_test(fn, config)
                    rewrite._write_pyc(state, co, source_hash, pyc)
            else:
                pyc = Path(importlib.util.cache_from_source(str(fn)))
                if not (pyc.exists() and pyc.stat().st_mtime >= fn.stat().st_mtime):
                    py_compile.compile(str(fn), invalidation_mode=py_compile.PycInvalidationMode.TIMESTAMP)
        except Exception:  # noqa: BLE001 (the worker compiles it instead)
            pass


# A pytest-xdist worker's exit without the interpreter's finalization: once its session has ended
# and every exit handler registered after this one has run (atexit runs the latest first: torch's,
# triton's, multiprocessing's, tempfile's finalizers), the streams and logging are flushed and the
# process ends with the status it would have ended with (execnet's serve loop returns, the worker
# exits 0). Tearing down the modules and collecting a heap that holds torch, every test module and
# the session fixtures took 1-1.3 s a worker on a subset and ~4 s of the full run's end (the
# controller waits for both), measured from the last test to the controller's session end.
def _exit_now() -> None:
    import logging

    logging.shutdown()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # closed already
            pass
    os._exit(0)


def pytest_configure(config):
    if hasattr(config, "workerinput"):
        import atexit

        atexit.register(_exit_now)
        return
    if sys.dont_write_bytecode or not config.getoption("numprocesses", None):
        return

    paths = [p for d in ("perfreport", "tests", "scripts") for p in sorted((ROOT / d).rglob("*.py"))]
    pids = []
    for half in (paths[0::2], paths[1::2]):
        pid = os.fork()
        if pid == 0:
            try:
                _bytecode(half, config)
            finally:
                os._exit(0)
        pids.append(pid)
    for pid in pids:
        os.waitpid(pid, 0)


def pytest_runtest_setup(item):
    # Triton's interpreter, once a test module has imported it: tests/kit/interpreter.py (imported
    # here once triton is, with TRITON_INTERPRET=1, so the module's first launch takes it too)
    if "triton" in sys.modules and "triton.runtime.interpreter" not in sys.modules:
        if os.environ.get("TRITON_INTERPRET") == "1":
            import triton.runtime.interpreter  # noqa: F401
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
