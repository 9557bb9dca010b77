"""Hostile inputs and output targets: the case table, run under a time limit each.

Every case asserts the exit code, the exact number of stderr lines (the error, or the
warnings of what was recovered), no traceback, no file left that the case does not allow,
and every input byte-identical afterwards; recovered cases also check the report's numbers.
"""

from __future__ import annotations

import json
import os
import resource
import signal
import zlib
from pathlib import Path

import pytest

from hostile_cases import KERNEL_US, PEAK_RSS, Case, Spec, doc, dump, events, gz, run_case, write

EXPECT: dict[str, object] = {}
FIFO_TRACE = "t.fifo"  # a FIFO nobody writes to: reading it would block (timeout)


def _rows(proc) -> list[dict]:
    return json.loads(proc.stdout_bytes)["rows"]


def _kernels(proc) -> dict[str, float]:
    return {r["kernel"]: r["sum (µs)"] for r in _rows(proc)}


def sheet(name="kernel_summary"):
    return ["--sheet", name, "--format", "json", "-q"]


def kernels_are(expected: dict):
    def check(d, proc):
        assert _kernels(proc) == expected

    return check


# -- inputs that are fatal ------------------------------------------------------------------
def _early_double_comma(d: Path) -> Spec:
    data = dump(doc([f"k{i}" for i in range(3000)]))
    i = data.index(b"}, {", 5000) + 1  # after an event's closing brace
    data = data[:i] + b"," + data[i:]
    EXPECT["early_double_comma"] = (i + 1, data[:i].count(b'"ph"') - 1)  # the 2nd ','; after that event
    return Spec([write(d, "t.json", data), *sheet()])


def _check_offset(name):
    def check(d, proc):
        err = proc.stderr_text
        at, idx = EXPECT[name]
        assert f"at byte {at} (after traceEvents[{idx}])" in err, err

    return check


def _stream(block: bytes, head: bytes = b""):
    def gen():
        if head:
            yield head
        while True:
            yield block

    return gen


def _bomb(d: Path) -> Spec:
    """~1 MB of gzip members that inflate to 1 GiB of blanks inside traceEvents."""
    member = zlib.compressobj(9, zlib.DEFLATED, 31)
    one = member.compress(b" " * (1 << 20)) + member.flush()
    data = gz(b'{"traceEvents": [') + one * 1024
    return Spec([write(d, "bomb.json.gz", data), *sheet()], wrapper=PEAK_RSS, outputs=("peak_rss_kb.txt",))


def _fifo_writer(path: Path, data: bytes):
    import threading

    def feed():
        with open(path, "wb") as f:
            f.write(data)

    threading.Thread(target=feed, daemon=True).start()


def _fifo(d: Path) -> Spec:
    os.mkfifo(d / "in.fifo")
    _fifo_writer(d / "in.fifo", gz(dump(doc(["a", "b"]))))
    return Spec(["in.fifo", *sheet()])


def _no_read_fifo(d: Path) -> None:
    os.mkfifo(d / FIFO_TRACE)


def _arch(d: Path, patch: dict) -> Spec:
    spec = json.loads((Path(__file__).resolve().parents[2] / "perfreport/specs/data/h100_sxm.json").read_text())
    spec.update(patch)
    return Spec([write(d, "t.json", dump(doc())), "--arch", write(d, "gpu.json", dump(spec)), *sheet()])


def _deep(d: Path) -> Spec:
    ev = dump(doc())
    deep = (
        b'{"ph": "X", "cat": "cpu_op", "name": "x", "pid": 1, "tid": 1, "ts": 1, "dur": 1, "args": {"a": '
        + b"[" * 5000
        + b"]" * 5000
        + b"}}, "
    )
    i = ev.index(b'"traceEvents": [') + 16
    return Spec([write(d, "t.json", ev[:i] + deep + ev[i:]), *sheet()])


def _long_event(d: Path) -> Spec:
    name = b"x" * (65 << 20)
    data = b'{"traceEvents": [{"ph": "X", "cat": "kernel", "name": "' + name + b'"}]}'
    return Spec([write(d, "t.json", data), *sheet()])


INPUT_FATAL = [
    Case("early_double_comma", _early_double_comma, 2, "invalid JSON", check=_check_offset("early_double_comma")),
    Case(
        "utf8_between_events",
        lambda d: Spec([write(d, "t.json", dump(doc()).replace(b"}, {", b"}, \xff{", 1)), *sheet()]),
        2,
        "at byte 380 (after traceEvents[0]): invalid character",
    ),
    Case(
        "nan_dur",
        lambda d: Spec([write(d, "t.json", dump(doc()).replace(b'"dur": 10.0', b'"dur": NaN', 1)), *sheet()]),
        2,
        "has no ts/dur",
    ),
    Case(
        "huge_ts",
        lambda d: Spec([write(d, "t.json", dump(doc()).replace(b'"ts": 20.0', b'"ts": ' + b"9" * 5000, 1)), *sheet()]),
        2,
        "malformed trace event traceEvents[2]",
    ),
    Case("deep_args", _deep, 2, "nested too deeply"),
    Case(
        "truncated_mid_event",
        lambda d: Spec([write(d, "t.json", dump(doc(["a", "b"]))[:300]), *sheet()]),
        2,
        "truncated JSON: the input ends inside traceEvents[0] (which starts at byte ",
    ),
    Case("two_documents", lambda d: Spec([write(d, "t.json", dump(doc()) * 2), *sheet()]), 2, "concatenated"),
    Case(
        "trace_events_not_array",
        lambda d: Spec([write(d, "t.json", b'{"traceEvents": {"a": 1}}'), *sheet()]),
        2,
        "is not an array",
    ),
    Case(
        "element_not_object",
        lambda d: Spec(
            [write(d, "t.json", dump(doc()).replace(b'"traceEvents": [{', b'"traceEvents": [1, {')), *sheet()]
        ),
        2,
        "malformed trace event traceEvents[0]: Expected `object`, got `int`",
    ),
    Case("binary_garbage", lambda d: Spec([write(d, "t.json", bytes(range(256)) * 64), *sheet()]), 2, "not JSON"),
    Case("event_over_64mib", _long_event, 2, "longer than 64 MiB", timeout=90),
    Case(
        "stdin_endless_blanks",
        lambda d: Spec(["-", *sheet()], stdin=_stream(b" " * (1 << 20))),
        2,
        "no JSON value in the first 64 MiB",
    ),
    Case(
        "stdin_endless_blanks_in_array",
        lambda d: Spec(["-", *sheet()], stdin=_stream(b"\n" * (1 << 20), b'{"traceEvents": [')),
        2,
        "more than 64 MiB of blanks",
    ),
    Case("stdin_endless_zeros", lambda d: Spec(["-", *sheet()], stdin=_stream(b"0" * (1 << 20))), 2, "not JSON"),
    Case("stdin_endless_nul", lambda d: Spec(["-", *sheet()], stdin=_stream(b"\0" * (1 << 20))), 2, "not JSON"),
    Case("gzip_bomb", _bomb, 2, "more than 64 MiB of blanks", max_rss_mb=400),
    Case(
        "symlink_loop",
        lambda d: (os.symlink("b", d / "a"), os.symlink("a", d / "b"), Spec(["a", *sheet()]))[-1],
        2,
        "symbolic links",
    ),
    Case(
        "arch_peak_wrong_type",
        lambda d: _arch(d, {"peaks_tflops": {"matrix_bf16": "fast"}}),
        2,
        "peaks_tflops.matrix_bf16 must be a positive finite number",
    ),
    Case("arch_peaks_not_object", lambda d: _arch(d, {"peaks_tflops": [1, 2]}), 2, "peaks_tflops must be an object"),
    Case(
        "arch_negative_peak",
        lambda d: _arch(d, {"peaks_tflops": {"matrix_bf16": -989.4}}),
        2,
        "must be a positive finite number, not -989.4",
    ),
    Case("arch_negative_bandwidth", lambda d: _arch(d, {"mem_bw_tbps": -3.35}), 2, "mem_bw_tbps"),
    Case(
        "arch_nan_bandwidth",
        lambda d: Spec(
            [
                write(d, "t.json", dump(doc())),
                "--arch",
                write(d, "gpu.json", b'{"key": "x", "mem_bw_tbps": NaN}'),
                *sheet(),
            ]
        ),
        2,
        "mem_bw_tbps",
    ),
    Case("arch_llc_text", lambda d: _arch(d, {"llc_bytes": "50 MB"}), 2, "llc_bytes"),
    Case(
        "arch_not_object",
        lambda d: Spec([write(d, "t.json", dump(doc())), "--arch", write(d, "gpu.json", b"[1, 2]"), *sheet()]),
        2,
        "JSON object",
    ),
    Case(
        "models_system_exit",
        lambda d: Spec(
            [write(d, "t.json", dump(doc())), "--models", write(d, "m.py", b"raise SystemExit(0)\n"), *sheet()]
        ),
        2,
        "SystemExit",
    ),
]


# -- inputs that are recovered (with a warning line when something was changed) -----------
def _name_bytes(d: Path, raw_name: bytes) -> Spec:
    data = dump(doc(["PLACEHOLDER", "gemm"])).replace(b"PLACEHOLDER", raw_name)
    return Spec([write(d, "t.json", data), *sheet()])


def _huge_name_workbook(d: Path) -> Spec:
    return Spec([write(d, "t.json", dump(doc(["n" * 40_000, "gemm"]))), "-o", "out.xlsx", "-q"], outputs=("out.xlsx",))


def _check_workbook(d, proc):
    from openpyxl import load_workbook

    ws = load_workbook(d / "out.xlsx", read_only=True)["kernel_summary"]
    names = [r[2] for r in ws.iter_rows(min_row=2, values_only=True)]
    cut = [n for n in names if n.startswith("nnn")]
    assert len(cut) == 1 and len(cut[0]) == 32_767 and cut[0].endswith("…[truncated]")


def _formula_names(d: Path) -> Spec:
    names = ['=HYPERLINK("http://evil.example","x")', "+1+1", "-2+3", "@SUM(A1)", "plain"]
    return Spec(
        [write(d, "t.json", dump(doc(names))), "-o", "out.xlsx", "--csv-dir", "csv", "-q"], outputs=("out.xlsx", "csv")
    )


def _check_formulas(d, proc):
    from openpyxl import load_workbook

    ws = load_workbook(d / "out.xlsx")["kernel_summary"]
    cells = {c.value: c.data_type for row in ws.iter_rows(min_row=2, max_col=3) for c in row[2:3]}
    assert cells['=HYPERLINK("http://evil.example","x")'] == "s"  # text, not a formula
    assert all(t == "s" for t in cells.values())
    import csv

    with open(d / "csv" / "kernel_summary.csv", newline="", encoding="utf-8") as f:
        got = {r["kernel"] for r in csv.DictReader(f)}
    assert got == {"'=HYPERLINK(\"http://evil.example\",\"x\")", "'+1+1", "'-2+3", "'@SUM(A1)", "plain"}


def _meta_with_trace_events(d: Path) -> Spec:
    bogus = events(["bogus"])
    data = b'{"metadata": {"traceEvents": ' + dump(bogus) + b'}, ' + dump(doc(["real"]))[1:]
    return Spec([write(d, "t.json", data), *sheet()])


def _bigint_annotation(d: Path) -> Spec:
    ev = doc()
    ev["traceEvents"].insert(
        0,
        {
            "ph": "X",
            "cat": "user_annotation",
            "name": "step",
            "pid": 1,
            "tid": 1,
            "ts": 0.0,
            "dur": 90.0,
            "args": {"n": "PLACEHOLDER"},
        },
    )
    data = dump(ev).replace(b'"PLACEHOLDER"', b"9" * 5000)
    return Spec([write(d, "t.json", data), *sheet()])


PUNCT = '},{"]:[,\\' * 500_000  # 4.5 MB of JSON punctuation (escaped quotes and backslashes)


def _check_markup_shown(d, proc):
    assert b"[/bold][red]x" in proc.stdout_bytes  # shown as text, not applied as markup


def _row(proc, name="aten::mm"):
    return next(r for r in _rows(proc) if r["name"] == name)


def _check_negative_dims(d, proc):
    r = _row(proc)
    assert r["GFLOP"] is None and "impossible dimension" in r["reason"]


def _check_not_tensor(d, proc):
    r = _row(proc)
    assert r["GFLOP"] is None and "is not a tensor" in r["reason"]


def _check_gemm_numbers(d, proc):
    r = _row(proc)
    # aten::mm [64,128] x [128,32]: 2*M*N*K = 2*64*32*128 = 524,288 FLOP = 0.000524288 GFLOP
    assert r["GFLOP"] == pytest.approx(0.000524288) and r["time sum (µs)"] == KERNEL_US


def _process_substitution(d: Path) -> Spec:
    write(d, "t.json.gz", gz(dump(doc(["a", "b"]))))
    return Spec([], shell='"$@" analyze <(zcat t.json.gz) --sheet kernel_summary --format json -q')


RECOVERED = [
    Case(
        "utf8_in_kernel_name",
        lambda d: _name_bytes(d, b"ge\xffmm"),
        0,
        "1 invalid UTF-8 byte sequences",
        check=kernels_are({"ge\ufffdmm": KERNEL_US, "gemm": KERNEL_US}),
    ),
    Case(
        "lone_surrogate_in_name",
        lambda d: _name_bytes(d, b"ge\\ud800mm"),
        0,
        "lone UTF-16 surrogate",
        check=kernels_are({"ge\ufffdmm": KERNEL_US, "gemm": KERNEL_US}),
    ),
    Case(
        "nan_in_args",
        lambda d: Spec(
            [
                write(d, "t.json", dump(doc(op_args={"scale": "X"})).replace(b'"scale": "X"', b'"scale": NaN')),
                *sheet("unified_perf_summary"),
            ]
        ),
        0,
        "NaN/Infinity literals read as null",
        check=_check_gemm_numbers,
    ),
    Case(
        "infinity_in_args",
        lambda d: Spec(
            [
                write(d, "t.json", dump(doc(op_args={"scale": "X"})).replace(b'"scale": "X"', b'"scale": -Infinity')),
                *sheet("unified_perf_summary"),
            ]
        ),
        0,
        "NaN/Infinity",
        check=_check_gemm_numbers,
    ),
    Case(
        "ansi_and_controls_in_name",
        lambda d: _name_bytes(d, b"\\u001b[31mred\\u001b[0m\\u0007\\n\\u202e"),
        0,
        None,
        lines=0,
        check=kernels_are({"\\x1b[31mred\\x1b[0m\\x07\\x0a\\u202e": KERNEL_US, "gemm": KERNEL_US}),
    ),
    Case(
        "rich_markup_in_name",
        lambda d: Spec(
            [write(d, "t.json", dump(doc(["[/bold][red]x"]))), "--sheet", "kernel_summary", "--format", "table", "-q"]
        ),
        0,
        None,
        lines=0,
        check=_check_markup_shown,
    ),
    Case(
        "name_over_excel_cell_limit",
        _huge_name_workbook,
        0,
        "cells over 32767 characters were shortened",
        check=_check_workbook,
    ),
    Case(
        "punctuation_name_4mb",
        lambda d: Spec([write(d, "t.json", dump(doc([PUNCT]))), *sheet()]),
        0,
        None,
        lines=0,
        check=kernels_are({PUNCT: KERNEL_US}),
    ),
    Case("formula_injection", _formula_names, 0, None, lines=0, check=_check_formulas),
    Case(
        "input_dims_int",
        lambda d: Spec([write(d, "t.json", dump(doc(dims=5))), *sheet("unified_perf_summary")]),
        0,
        "not lists wrapped in one",
        check=_check_not_tensor,
    ),
    Case(
        "input_dims_mixed",
        lambda d: Spec([write(d, "t.json", dump(doc(dims=[[64, 128], 7]))), *sheet("unified_perf_summary")]),
        0,
        None,
        lines=0,
        check=_check_not_tensor,
    ),
    Case(
        "negative_gemm_dims",
        lambda d: Spec([write(d, "t.json", dump(doc(dims=[[64, -128], [-128, 32]]))), *sheet("unified_perf_summary")]),
        0,
        None,
        lines=0,
        check=_check_negative_dims,
    ),
    Case(
        "metadata_holds_trace_events", _meta_with_trace_events, 0, None, lines=0, check=kernels_are({"real": KERNEL_US})
    ),
    Case(
        "bigint_in_annotation",
        _bigint_annotation,
        0,
        "integers beyond 64 bits kept as text",
        check=kernels_are({"gemm": KERNEL_US}),
    ),
    Case(
        "device_properties_garbage",
        lambda d: Spec([write(d, "t.json", dump(doc(meta={"deviceProperties": "junk"}))), *sheet()]),
        0,
        "deviceProperties ignored",
        check=kernels_are({"gemm": KERNEL_US}),
    ),
    Case(
        "device_properties_bad_fields",
        lambda d: Spec(
            [write(d, "t.json", dump(doc(meta={"deviceProperties": [7, {"name": 5, "numSms": "x"}]}))), *sheet()]
        ),
        0,
        "deviceProperties",
        lines=2,
        check=kernels_are({"gemm": KERNEL_US}),
    ),
    Case("fifo_gzip", _fifo, 0, None, lines=0, check=kernels_are({"a": KERNEL_US, "b": KERNEL_US})),
    Case(
        "process_substitution",
        _process_substitution,
        0,
        None,
        lines=0,
        check=kernels_are({"a": KERNEL_US, "b": KERNEL_US}),
    ),
    Case(
        "utf8_bom",
        lambda d: Spec([write(d, "t.json", b"\xef\xbb\xbf" + dump(doc())), *sheet()]),
        0,
        None,
        lines=0,
        check=kernels_are({"gemm": KERNEL_US}),
    ),
    Case(
        "trace_events_as_a_value",
        lambda d: Spec([write(d, "t.json", dump({"traceName": "traceEvents", **doc(["v"])})), *sheet()]),
        0,
        None,
        lines=0,
        check=kernels_are({"v": KERNEL_US}),
    ),
    Case(
        "gzip_members",
        lambda d: Spec(
            [
                write(d, "t.json.gz", b"".join(gz(part) for part in (lambda b: (b[:100], b[100:]))(dump(doc(["m"]))))),
                *sheet(),
            ]
        ),
        0,
        None,
        lines=0,
        check=kernels_are({"m": KERNEL_US}),
    ),
]


# -- output targets: refused before any work (the trace is a FIFO nobody writes to) --------
def _out_case(name, args, needle, prep=None, trace=FIFO_TRACE, skip=None) -> Case:
    return Case(name, _out(args, prep, trace), 2, needle, timeout=20, max_s=10, **({"skip": skip} if skip else {}))


def _out(args: list, prep=None, trace=FIFO_TRACE):
    def make(d: Path) -> Spec:
        if trace == FIFO_TRACE:
            _no_read_fifo(d)
        if prep:
            prep(d)
        return Spec([trace, "-q", *args])

    return make


def _real(d: Path) -> None:
    write(d, "t.json", dump(doc()))


def _not_root():
    return "root ignores directory permissions" if os.geteuid() == 0 else None


def _ro(d: Path) -> None:
    (d / "ro").mkdir()
    os.chmod(d / "ro", 0o555)


OUTPUT = [
    _out_case("o_missing_dir", ["-o", "nodir/out.xlsx"], "does not exist"),
    _out_case("o_is_directory", ["-o", "sub"], "is a directory", lambda d: (d / "sub").mkdir()),
    _out_case("o_parent_is_file", ["-o", "f.txt/out.xlsx"], "not a directory", lambda d: write(d, "f.txt", b"x")),
    _out_case("o_name_too_long", ["-o", "n" * 300 + ".xlsx"], "file name too long"),
    _out_case("o_read_only_dir", ["-o", "ro/out.xlsx"], "cannot write", _ro, skip=_not_root),
    _out_case("o_dev_null", ["-o", "/dev/null"], "character device"),
    _out_case(
        "o_symlink_to_stdout",
        ["-o", "fd1.xlsx"],
        "not a regular file",
        lambda d: os.symlink("/proc/self/fd/1", d / "fd1.xlsx"),
    ),
    _out_case("o_fifo", ["-o", "o.fifo"], "a FIFO", lambda d: os.mkfifo(d / "o.fifo")),
    _out_case("o_dangling_symlink", ["-o", "dl.xlsx"], "dangling", lambda d: os.symlink("nowhere/x", d / "dl.xlsx")),
    _out_case("csv_dir_is_file", ["--csv-dir", "f.txt"], "not a directory", lambda d: write(d, "f.txt", b"x")),
    _out_case(
        "csv_dir_holds_dir",
        ["--csv-dir", "c"],
        "is a directory",
        lambda d: (d / "c" / "ops_summary.csv").mkdir(parents=True),
    ),
    _out_case("csv_dir_parent_is_file", ["--csv-dir", "f.txt/c"], "not a directory", lambda d: write(d, "f.txt", b"x")),
    _out_case("o_is_the_trace", ["-o", "t.json"], "is the input trace", _real, trace="t.json"),
    _out_case("csv_dir_is_the_trace", ["--csv-dir", "t.json"], "is the input trace", _real, trace="t.json"),
    _out_case(
        "o_hardlink_to_trace",
        ["-o", "h.xlsx"],
        "is the input trace",
        lambda d: (_real(d), os.link(d / "t.json", d / "h.xlsx")),
        trace="t.json",
    ),
    _out_case(
        "o_symlink_to_trace",
        ["-o", "s.xlsx"],
        "is the input trace",
        lambda d: (_real(d), os.symlink("t.json", d / "s.xlsx")),
        trace="t.json",
    ),
    _out_case(
        "o_is_graph_capture",
        ["--graph-capture", "cap.json", "-o", "cap.json"],
        "--graph-capture",
        lambda d: write(d, "cap.json", b"{}"),
    ),
    _out_case(
        "o_is_arch_file",
        ["--arch", "gpu.json", "-o", "gpu.json"],
        "--arch spec file",
        lambda d: write(d, "gpu.json", b"{}"),
    ),
    _out_case("o_is_models_file", ["--models", "m.py", "-o", "m.py"], "--models file", lambda d: write(d, "m.py", b"")),
    _out_case(
        "csv_dir_holds_models_file",
        ["--models", "c/ops_summary.csv", "--csv-dir", "c"],
        "--models file",
        lambda d: ((d / "c").mkdir(), write(d, "c/ops_summary.csv", b"")),
    ),
]


# -- failures while writing -------------------------------------------------------------------
def _fsize_limit():
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # EFBIG instead of being killed
    resource.setrlimit(resource.RLIMIT_FSIZE, (4096, 4096))


def _big(d: Path, *args) -> Spec:
    write(d, "t.json", dump(doc([f"kernel_{i}" for i in range(200)])))
    write(d, "out.xlsx", b"previous")
    return Spec(["t.json", "-q", *args], preexec=_fsize_limit)


_SIGNAL_SAVE = """
import os, signal, sys, time
import perfreport.writers.excel as excel
orig = excel.write_package
def save(path, parts, clean):
    orig(path, parts, clean)                  # the temporary workbook is complete on disk
    os.kill(os.getpid(), signal.{sig})
    time.sleep(10)
excel.write_package = save
sys.argv = ["perfreport", *sys.argv[1:]]
from perfreport.cli.main import main
main()
"""


def _signal(sig: str):
    def make(d: Path) -> Spec:
        write(d, "t.json", dump(doc()))
        write(d, "out.xlsx", b"previous")
        return Spec(["t.json", "-q", "-o", "out.xlsx"], wrapper=_SIGNAL_SAVE.replace("{sig}", sig))

    return make


def _full_stdout(d: Path) -> Spec:
    write(d, "t.json", dump(doc()))
    return Spec([], shell='"$@" analyze t.json --sheet kernel_summary -q > /dev/full')


WRITING = [
    Case("sheet_to_full_stdout", _full_stdout, 2, "No space left on device"),
    Case("workbook_file_too_large", lambda d: _big(d, "-o", "out.xlsx"), 2, "write failed"),
    Case("csv_file_too_large", lambda d: _big(d, "--sheet", "gpu_timeline", "--csv-dir", "csv"), 2, "write failed"),
    Case("sigterm_while_saving", _signal("SIGTERM"), 143, "interrupted (SIGTERM)"),
    Case("sigint_while_saving", _signal("SIGINT"), 130, "interrupted (SIGINT)"),
]

ALL = INPUT_FATAL + RECOVERED + OUTPUT + WRITING


# one case per kind in a fresh interpreter; the others in children forked from a server that
# has imported the command line (hostile_cases.run_case)
for c in ALL:
    c.real = c.name in ("binary_garbage", "o_missing_dir", "sigterm_while_saving", "utf8_in_kernel_name")


@pytest.mark.parametrize("case", ALL, ids=[c.name for c in ALL])
def test_hostile(case: Case, tmp_path):
    why = case.skip()
    if why:
        pytest.skip(why)
    run_case(case, tmp_path)


def test_case_names_unique():
    names = [c.name for c in ALL]
    assert len(names) == len(set(names))


@pytest.fixture
def tiny_fs(tmp_path):
    """A 16 KiB tmpfs at ``tmp_path/full`` (needs mount rights: skipped without them)."""
    import shutil
    import subprocess

    m = tmp_path / "full"
    m.mkdir()
    if (
        not shutil.which("mount")
        or subprocess.run(["mount", "-t", "tmpfs", "-o", "size=16k", "tmpfs", str(m)], capture_output=True).returncode
    ):
        pytest.skip("cannot mount a small tmpfs here")
    yield m
    subprocess.run(["umount", str(m)], capture_output=True)


def _disk_full(*args):
    def make(d: Path) -> Spec:
        write(d, "t.json", dump(doc([f"kernel_{i}" for i in range(400)])))
        write(d, "full/out.xlsx", b"previous")
        return Spec(["t.json", "-q", *args])

    return make


@pytest.mark.parametrize(
    "case",
    [
        Case("workbook_disk_full", _disk_full("-o", "full/out.xlsx"), 2, "write failed (No space left on device)"),
        Case(
            "csv_disk_full",
            _disk_full("--sheet", "gpu_timeline", "--csv-dir", "full/csv"),
            2,
            "write failed (No space left on device)",
        ),
    ],
    ids=lambda c: c.name,
)
def test_disk_full(case, tmp_path, tiny_fs):
    """A real ENOSPC: one line, exit 2, nothing left on the full disk, the previous file intact."""
    run_case(case, tmp_path)
    assert sorted(p.name for p in tiny_fs.iterdir()) == ["out.xlsx"]
