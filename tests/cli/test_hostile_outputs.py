"""Hostile inputs, part two (issue 22): outputs that never collide, gates that cannot be
disarmed, nothing left half-written. Same contract as test_hostile.py (hostile_cases.run_case):
exit code, the exact stderr lines, no traceback, inputs byte-identical, no file left that the
case does not allow, no process left running."""

from __future__ import annotations

import importlib.util
import os
import resource
import shutil
import signal
import tempfile
from pathlib import Path

import pytest

from hostile_cases import Case, Spec, doc, dump, run_case, write

FIFO = "t.fifo"  # a FIFO nobody writes to: a run that read it would hang (the timeout)


def _fifo(d: Path) -> None:
    os.mkfifo(d / FIFO)


def _traces(d: Path, n: int = 2, bad: int | None = None, kernels: int = 1) -> list[str]:
    names = []
    for i in range(n):
        data = b'{"traceEvents": [' if i == bad else dump(doc([f"k{j}" for j in range(kernels)]))
        names.append(write(d, f"rank{i}.json", data))
    return names


def _refused(name, args, needle, prep=None, command="analyze", trace=FIFO) -> Case:
    """Refused before any work: exit 2, one line (the trace, when used, is a FIFO nobody writes)."""

    def make(d: Path) -> Spec:
        if trace == FIFO:
            _fifo(d)
        extra = prep(d) if prep else None
        lead = [trace] if trace and command == "analyze" else []
        return Spec([*lead, *(extra or []), *args], command=command)

    return Case(name, make, 2, needle, timeout=120, max_s=60)  # the FIFO trace: any read would hang


def _mkdir(*names):
    def prep(d: Path):
        for n in names:
            (d / n).mkdir(parents=True, exist_ok=True)

    return prep


def _two_traces(*dirs):
    def prep(d: Path):
        _mkdir(*dirs)(d)
        return _traces(d)

    return prep


def _trace_named_like_a_per_rank_workbook(d: Path):
    (d / "per").mkdir()
    return [*_traces(d, 1), write(d, "per/rank0_perf_report.xlsx", dump(doc()))]


def _diff_inputs(d: Path):
    return [write(d, "a.json", dump(doc())), write(d, "b.json", dump(doc()))]


_BENCH = ["--context", "40", "--batch", "1", "--query-len", "2", "--q-heads", "4", "--head-dim", "32"]
_BENCH += ["--v-head-dim", "16", "--page-size", "16", "--kv-dtype", "bf16", "--backend", "torch", "-q"]


def _no_torch():
    return None if importlib.util.find_spec("torch") else "bench-pa needs torch"


PLAN = [
    _refused("o_and_html_same_file", ["-o", "F.xlsx", "--html", "F.xlsx"], "-o and --html would both write"),
    _refused("o_html_with_html", ["-o", "report.html", "--with-html"], "-o and --with-html"),
    _refused(
        "o_csv_inside_csv_dir",
        ["-o", "csv/ops_summary.csv", "--csv-dir", "csv"],
        "inside --csv-dir",
        _mkdir("csv"),
    ),
    _refused("csv_dir_is_o", ["-o", "out", "--csv-dir", "out"], "is the directory --csv-dir writes into"),
    _refused(
        "multi_o_is_a_per_rank_workbook",
        ["-o", "per/rank0_perf_report.xlsx", "--per-rank", "per"],
        "would both write",
        _two_traces("per"),
        trace=None,
    ),
    _refused(
        "per_rank_workbook_is_an_input",
        ["--per-rank", "per"],
        "refusing to overwrite an input",
        _trace_named_like_a_per_rank_workbook,
        trace=None,
    ),
    _refused(
        "per_rank_workbook_is_the_model_config",
        ["--per-rank", "per", "--model-config", "per/rank0_perf_report.xlsx"],
        "--model-config file",
        lambda d: (_mkdir("per")(d), write(d, "per/rank0_perf_report.xlsx", b"{}"), _traces(d))[-1],
        trace=None,
    ),
    _refused(
        "diff_o_and_json_same", ["-o", "F", "--json", "F"], "-o and --json would both write", _diff_inputs, "diff"
    ),
    _refused(
        "bench_csv_and_trace_same",
        [*_BENCH, "--csv", "F", "--trace", "F"],
        "--csv and --trace would both write",
        command="bench-pa",
        trace=None,
    ),
    _refused(
        "bench_trace_is_the_csv_partial",
        [*_BENCH, "--csv", "F.csv", "--trace", ".F.csv.partial"],
        "would both write",
        command="bench-pa",
        trace=None,
    ),
]
for c in PLAN[-2:]:  # refused before the GPU probe imports torch (test_app checks it); room to spare all the same
    c.skip, c.timeout, c.max_s = _no_torch, 120, None

NUMBERS = [
    _refused(f"min_coverage_{tag}", ["--min-coverage", v], "--min-coverage: must be a finite number in [0, 100]")
    for tag, v in (("nan", "nan"), ("inf", "inf"), ("negative", "-1"), ("over_100", "101"))
] + [
    _refused("short_kernel_us_nan", ["--short-kernel-us", "nan"], "--short-kernel-us: must be a finite number"),
    _refused("short_kernel_us_negative", ["--short-kernel-us", "-5"], "--short-kernel-us"),
    _refused("top_negative", ["--top", "-1"], "--top: must be a whole number in [0, 1000000], not -1"),
    _refused("jobs_zero", ["--jobs", "0"], "--jobs: must be a whole number in [1, 4096], not 0"),
    _refused("jobs_huge_multi", ["--jobs", "10000000000"], "--jobs", _two_traces(), trace=None),
    _refused(
        "diff_fail_if_slower_nan",
        ["--fail-if-slower", "nan"],
        "--fail-if-slower: must be a finite",
        _diff_inputs,
        "diff",
    ),
    _refused("diff_fail_if_slower_negative", ["--fail-if-slower", "-5"], "--fail-if-slower", _diff_inputs, "diff"),
    _refused("diff_top_negative", ["--top", "-3"], "--top", _diff_inputs, "diff"),
    _refused("one_trace_per_rank", ["--per-rank", "p"], "--per-rank: needs several traces"),
    _refused("one_trace_engine", ["--engine", "process"], "--engine: needs several traces"),
    _refused("one_trace_keep_going", ["--keep-going"], "--keep-going: needs several traces"),
]


def _one_trace_jobs(d: Path) -> Spec:
    return Spec([write(d, "t.json", dump(doc())), "--jobs", "4", "-q", "-o", "o.xlsx"], outputs=("o.xlsx",))


NUMBERS.append(Case("one_trace_jobs_warns", _one_trace_jobs, 0, "--jobs 4 has no effect with one trace"))


# one case per kind in a fresh interpreter; the others in children forked from a server that
# has imported the command line (hostile_cases.run_case)
for c in PLAN + NUMBERS:
    c.real = c.name in ("o_and_html_same_file", "top_negative")


@pytest.mark.parametrize("case", PLAN + NUMBERS, ids=[c.name for c in PLAN + NUMBERS])
def test_refused_before_any_work(case, tmp_path):
    why = case.skip()
    if why:
        pytest.skip(why)
    run_case(case, tmp_path)


# -- transactions: all of a run's outputs, or none ------------------------------------------
def _bad_rank(*extra, jobs="1", outputs=()):
    def make(d: Path) -> Spec:
        names = _traces(d, 3, bad=1)
        return Spec([*names, "--per-rank", "per", "-o", "m.xlsx", "-q", "--jobs", jobs, *extra], outputs=outputs)

    return make


_HTML_ENOSPC = """
import errno, pathlib, sys
orig = pathlib.Path.write_text
def write_text(self, *a, **k):
    if self.name.endswith(".html"):
        raise OSError(errno.ENOSPC, "No space left on device")
    return orig(self, *a, **k)
pathlib.Path.write_text = write_text
sys.argv = ["perfreport", *sys.argv[1:]]
from perfreport.cli.main import main
main()
"""


def _later_output_fails(d: Path) -> Spec:
    write(d, "t.json", dump(doc()))
    write(d, "out.xlsx", b"previous")
    return Spec(["t.json", "-q", "-o", "out.xlsx", "--html", "out.html", "--csv-dir", "csv"], wrapper=_HTML_ENOSPC)


_SIGNAL_AT = """
import os, signal, sys, time
{patch}
sys.argv = ["perfreport", *sys.argv[1:]]
from perfreport.cli.main import main
main()
"""
# all workers done, their workbooks staged: the signal arrives before the merge
_AFTER_WORKERS = """
import perfreport.multi.merge as m
orig = m.merged_sheets
def merged_sheets(*a, **k):
    os.kill(os.getpid(), signal.SIGTERM)
    time.sleep(10)
m.merged_sheets = merged_sheets
"""
# the first rank is back, the others are still running in the pool
_AMONG_WORKERS = """
from concurrent.futures import process as p
orig = p.ProcessPoolExecutor.map
def map_(self, *a, **k):
    for i, r in enumerate(orig(self, *a, **k)):
        yield r
        os.kill(os.getpid(), signal.SIGTERM)
        time.sleep(10)
p.ProcessPoolExecutor.map = map_
"""
# inside openpyxl's save: the archive is half-written
_INSIDE_SAVE = """
import zipfile
orig = zipfile.ZipFile.writestr
def writestr(self, *a, **k):
    os.kill(os.getpid(), signal.{sig})
    return orig(self, *a, **k)
zipfile.ZipFile.writestr = writestr
"""


def _signalled(patch: str, multi: bool = True):
    def make(d: Path) -> Spec:
        if multi:
            args = [*_traces(d, 3, kernels=50), "--per-rank", "per", "-o", "m.xlsx", "--jobs", "2", "-q"]
        else:
            args = [write(d, "t.json", dump(doc())), "-o", "out.xlsx", "--html", "out.html", "-q"]
        return Spec(args, wrapper=_SIGNAL_AT.replace("{patch}", patch))

    return make


def _fsize_limit():
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # EFBIG instead of being killed (children too)
    resource.setrlimit(resource.RLIMIT_FSIZE, (4096, 4096))


def _worker_write_fails(d: Path) -> Spec:
    # a short $TMPDIR of its own (the forkserver's socket path must fit AF_UNIX's 108 bytes)
    tmp = tempfile.mkdtemp(prefix="h22-", dir="/tmp")
    (d / "tmpdir.txt").write_text(tmp)
    names = _traces(d, 2, kernels=300)
    return Spec(
        [*names, "--per-rank", "per", "-o", "m.xlsx", "--jobs", "2", "-q"],
        preexec=_fsize_limit,
        env={"TMPDIR": tmp},
    )


def _tmp_empty(d: Path, proc) -> None:
    tmp = Path((d / "tmpdir.txt").read_text())
    left = list(tmp.iterdir())
    shutil.rmtree(tmp, ignore_errors=True)
    assert left == [], left


def _long_tmpdir(d: Path) -> Spec:
    long = d / ("t" * 120)
    long.mkdir()
    return Spec([*_traces(d, 2), "--jobs", "2", "-q", "-o", "m.xlsx"], env={"TMPDIR": str(long)})


def _keep_going_check(d: Path, proc) -> None:
    assert sorted(p.name for p in (d / "per").iterdir()) == ["rank0_perf_report.xlsx", "rank2_perf_report.xlsx"]


TRANSACTIONS = [
    Case("bad_rank_leaves_no_per_rank_workbook", _bad_rank(), 2, "rank1.json: truncated JSON"),
    Case("bad_rank_process_pool_leaves_nothing", _bad_rank(jobs="2"), 2, "rank1.json: truncated JSON"),
    Case(
        "keep_going_merges_the_good_ranks",
        _bad_rank("--keep-going", outputs=("per", "m.xlsx")),
        3,
        "left out: rank1.json: truncated JSON",
        check=_keep_going_check,
    ),
    Case("later_output_fails_leaves_none", _later_output_fails, 2, "out.html: write failed (No space left on device)"),
    Case("sigterm_after_workers", _signalled(_AFTER_WORKERS), 143, "interrupted (SIGTERM); no partial output"),
    Case("sigterm_among_workers", _signalled(_AMONG_WORKERS), 143, "interrupted (SIGTERM); no partial output"),
    Case("sigint_inside_save", _signalled(_INSIDE_SAVE.replace("{sig}", "SIGINT"), multi=False), 130, "SIGINT"),
    Case("sigterm_inside_save", _signalled(_INSIDE_SAVE.replace("{sig}", "SIGTERM"), multi=False), 143, "SIGTERM"),
    Case("worker_write_fails_no_tmp_left", _worker_write_fails, 2, "write failed", check=_tmp_empty),
    Case("tmpdir_too_long_for_the_pool", _long_tmpdir, 2, "--jobs: worker processes failed"),
]


for c in TRANSACTIONS:  # process pools and analyses: slow on a loaded 2-core machine
    c.timeout = 240


# one case per kind in a fresh interpreter; the others in children forked from a server that
# has imported the command line (hostile_cases.run_case)
for c in TRANSACTIONS:
    c.real = c.name in ("sigterm_after_workers",)


@pytest.mark.parametrize("case", TRANSACTIONS, ids=[c.name for c in TRANSACTIONS])
def test_all_outputs_or_none(case, tmp_path):
    run_case(case, tmp_path)


def test_case_names_unique():
    names = [c.name for c in PLAN + NUMBERS + TRANSACTIONS]
    assert len(names) == len(set(names))
