"""Hostile inputs, part two (issue 22): diff readers with limits, tracebacks removed, model
configs checked field by field, multi-rank warnings and --keep-going, Ray reached or refused in
one line. Same contract as test_hostile.py (hostile_cases.run_case)."""

from __future__ import annotations

import importlib.util
import json
import os
import zipfile
import zlib
from pathlib import Path

import pytest

from hostile_cases import Case, Spec, doc, dump, run_case, write


def sheet(name="kernel_summary"):
    return ["--sheet", name, "--format", "json", "-q"]


# -- diff readers ------------------------------------------------------------------------------
def _report_json(rows) -> bytes:
    return json.dumps({"source": "x", "notes": [], "sheets": {"unified_perf_summary": {"rows": rows}}}).encode()


_ROW = {"name": "aten::mm", "category": "GEMM", "input dims": "", "input types": "", "count": 1}


def _diff(a: bytes, b: bytes | None = None, name_a="a.json", name_b="b.json"):
    def make(d: Path) -> Spec:
        return Spec(
            [write(d, name_a, a), write(d, name_b, b or _report_json([dict(_ROW, **{"time sum (µs)": 5.0})]))],
            command="diff",
        )

    return make


class _RepeatDeflate:
    """zipfile's level-1 raw deflate of the part, but a block written again (the same object: the 1 GiB
    cell's 16 MiB block, 64 times) is deflated once: after a full flush the stream starts afresh, so
    the block's own full-flushed deflate is valid each time it comes (the same inflated bytes; zipfile
    still takes the CRC and the size of every byte written). 2.7 -> 0.8 CPU s on the 1 GiB cell."""

    def __init__(self):
        self.z = zlib.compressobj(1, zlib.DEFLATED, -15)
        self.last, self.out = None, None

    def compress(self, data):
        if data is self.last:
            if self.out is None:
                c = zlib.compressobj(1, zlib.DEFLATED, -15)
                self.out = c.compress(data) + c.flush(zlib.Z_FULL_FLUSH)
            return self.z.flush(zlib.Z_FULL_FLUSH) + self.out
        self.last, self.out = data, None
        return self.z.compress(data)

    def flush(self):
        return self.z.flush()


def _xlsx_with(member_xml_stream, d: Path, name: str, dimension: str | None = None) -> str:
    """A workbook perfreport could have written, its unified sheet replaced by a streamed part."""
    from openpyxl import Workbook

    wb = Workbook()
    wb.active.title = "unified_perf_summary"
    wb.active.append(["name", "time sum (µs)"])
    wb.save(d / "base.xlsx")
    # deflate level 1: the part's inflated size is what the reader refuses; level 6 cost 3.8 s
    # more CPU on the 1 GiB cell
    with (
        zipfile.ZipFile(d / "base.xlsx") as src,
        zipfile.ZipFile(d / name, "w", zipfile.ZIP_DEFLATED, compresslevel=1) as dst,
    ):
        for info in src.infolist():
            if info.filename == "xl/worksheets/sheet1.xml":
                with dst.open("xl/worksheets/sheet1.xml", "w", force_zip64=True) as out:
                    if hasattr(out, "_compressor"):  # zipfile's deflate (level 1), a repeated block once
                        out._compressor = _RepeatDeflate()
                    for block in member_xml_stream(dimension):
                        out.write(block)
            else:
                dst.writestr(info, src.read(info.filename))
    os.unlink(d / "base.xlsx")
    return name


_HEAD = b'<worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main">'


def _one_huge_cell(dimension):
    yield _HEAD + b'<sheetData><row r="1"><c r="A1" t="inlineStr"><is><t>'
    block = b"a" * (1 << 24)
    for _ in range(64):  # 1 GiB of text in one cell
        yield block
    yield b"</t></is></c></row></sheetData></worksheet>"


def _million_rows(dimension):
    yield _HEAD + (f'<dimension ref="{dimension}"/>'.encode() if dimension else b"") + b"<sheetData>"
    yield b'<row r="1"><c r="A1" t="inlineStr"><is><t>name</t></is></c></row>'
    # rows 2..1000001 without their optional r= (a row and its cells take the next numbers: ECMA-376
    # Part 1, 18.3.1.73 row and 18.3.1.4 c), so every write is the same 100,000-row block, deflated
    # once (_RepeatDeflate): 1.9 -> 0.1 CPU s for the same million rows (numbered, 1.9 s a write of
    # 100,000; 5.6 s a write a row)
    block = b'<row><c t="inlineStr"><is><t>x</t></is></c><c><v>1</v></c></row>' * 100_000
    for _ in range(10):
        yield block
    yield b"</sheetData></worksheet>"


def _diff_xlsx(stream, dimension=None):
    def make(d: Path) -> Spec:
        a = _xlsx_with(stream, d, "a.xlsx", dimension)
        return Spec([a, write(d, "b.json", _report_json([dict(_ROW, **{"time sum (µs)": 5.0})]))], command="diff")

    return make


DIFF = [
    Case("diff_xlsx_one_1gib_cell", _diff_xlsx(_one_huge_cell), 2, "inflates to", timeout=120),
    Case(
        "diff_xlsx_million_rows_declared",
        _diff_xlsx(_million_rows, "A1:B1000001"),
        2,
        "more than the 200000 a diff reads",
        timeout=120,
        max_s=60,
    ),
    Case(
        "diff_json_string_time",
        _diff(_report_json([dict(_ROW, **{"time sum (µs)": "fast"})])),
        2,
        "'time sum (µs)' is 'fast', not a number",
    ),
    Case("diff_json_no_time_column", _diff(_report_json([_ROW])), 2, "has no 'time sum (µs)' column"),
    Case(
        "diff_json_nan_time",
        _diff(_report_json([dict(_ROW, **{"time sum (µs)": 1.0})]).replace(b"1.0", b"NaN")),
        2,
        "unreadable report JSON",
    ),
    Case("diff_json_not_object", _diff(b'{"source": 1, "sheets": []}'), 2, "has no unified_perf_summary sheet"),
    Case(
        "diff_csv_dir_string_count",
        lambda d: (
            (d / "c").mkdir(),
            write(d, "c/unified_perf_summary.csv", "name,count,time sum (µs)\nx,many,3\n".encode()),
            Spec(["c", write(d, "b.json", _report_json([dict(_ROW, **{"time sum (µs)": 5.0})]))], command="diff"),
        )[-1],
        2,
        "column 'count' holds 'many'",
    ),
]


# one case per kind in a fresh interpreter; the others in children forked from a server that
# has imported the command line (hostile_cases.run_case)
for c in DIFF:
    c.real = c.name in ("diff_json_not_object",)


@pytest.mark.parametrize("case", DIFF, ids=[c.name for c in DIFF])
def test_diff_readers(case, tmp_path):
    run_case(case, tmp_path)


# -- tracebacks that were left -----------------------------------------------------------------
def _capture_dir_dev_zero(d: Path) -> Spec:
    (d / "cap").mkdir()
    os.symlink("/dev/zero", d / "cap" / "execution_details.json")
    return Spec([write(d, "t.json", dump(doc())), "--graph-capture", "cap", *sheet()])


def _annotation(name: str) -> dict:
    return {"ph": "X", "cat": "user_annotation", "name": name, "pid": 1, "tid": 1, "ts": 0.0, "dur": 90.0, "args": {}}


def _digits_annotation(d: Path) -> Spec:
    t = doc()
    t["traceEvents"].insert(0, _annotation("execute_context_1(" + "9" * 5000 + ")_generation_0(0)"))
    t["traceEvents"].insert(0, _annotation("step[DECODE bs=" + "7" * 5000 + "]"))
    return Spec([write(d, "t.json", dump(t)), *sheet()])


TRACEBACKS = [
    Case(
        "input_dims_tensorlist_of_mixed",
        lambda d: Spec([write(d, "t.json", dump(doc(dims=[[[1, 2], 3]]))), *sheet("unified_perf_summary")]),
        0,
        None,
        lines=0,
    ),
    Case("annotation_5000_digit_numbers", _digits_annotation, 0, None, lines=0),
    Case("graph_capture_details_dev_zero", _capture_dir_dev_zero, 2, "larger than 16 MiB"),
]


# -- --model-config: a message per field --------------------------------------------------------
def _config(cfg: dict | bytes):
    def make(d: Path) -> Spec:
        raw = cfg if isinstance(cfg, bytes) else json.dumps(cfg).encode()
        return Spec([write(d, "t.json", dump(doc())), "--model-config", write(d, "config.json", raw), *sheet()])

    return make


_BASE = {"hidden_size": 2048, "num_attention_heads": 16, "num_key_value_heads": 4}
CONFIG = [
    Case(
        "config_negative_experts", _config(dict(_BASE, num_local_experts=-8)), 2, "num_local_experts must be a positive"
    ),
    Case(
        "config_topk_over_experts",
        _config(dict(_BASE, num_local_experts=4, num_experts_per_tok=8)),
        2,
        "8 experts per token is more than the 4 experts",
    ),
    Case(
        "config_string_experts", _config(dict(_BASE, num_experts="8")), 2, "num_experts must be a whole number, not '8'"
    ),
    Case(
        "config_two_bad_fields_one_line",
        _config(dict(_BASE, head_dim=-1, num_hidden_layers="many")),
        2,
        "num_hidden_layers must be a whole number",
    ),
    Case("config_heads_not_multiple", _config(dict(_BASE, num_key_value_heads=3)), 2, "not a multiple of"),
    Case("config_20_mb", _config(b'{"hidden_size": 1, "pad": "' + b"x" * (20 << 20) + b'"}'), 2, "larger than 16 MiB"),
]


# one case per kind in a fresh interpreter; the others in children forked from a server that
# has imported the command line (hostile_cases.run_case)
for c in TRACEBACKS + CONFIG:
    c.real = c.name in ("config_heads_not_multiple",)


@pytest.mark.parametrize("case", TRACEBACKS + CONFIG, ids=[c.name for c in TRACEBACKS + CONFIG])
def test_no_traceback_and_config_fields(case, tmp_path):
    run_case(case, tmp_path)


# -- multi-rank: warnings and --keep-going --------------------------------------------------------
def _ranks(metas: list[dict], *extra):
    def make(d: Path) -> Spec:
        names = []
        for i, m in enumerate(metas):
            t = doc()
            if "deviceProperties" in m and m["deviceProperties"] is None:
                del t["deviceProperties"]
                m = {k: v for k, v in m.items() if k != "deviceProperties"}
            t.update(m)
            names.append(write(d, f"t{i}.json", dump(t)))
        return Spec([*names, "-q", "-o", "m.xlsx", *extra], outputs=("m.xlsx",))

    return make


def _same_three(d: Path) -> Spec:
    write(d, "t.json", dump(doc()))
    return Spec(["t.json", "t.json", "./t.json", "-q", "-o", "m.xlsx"], outputs=("m.xlsx",))


MULTI = [
    Case(
        "mixed_gpus_warned",
        _ranks([{}, {"deviceProperties": [{"id": 0, "name": "AMD Instinct MI300X"}]}, {"deviceProperties": None}]),
        0,
        "recorded on different GPUs",
    ),
    Case("same_trace_three_times", _same_three, 0, "given 3 times"),
    Case(
        "implausible_ranks",
        _ranks([{"distributedInfo": {"rank": -3}}, {"distributedInfo": {"rank": 10**20}}]),
        0,
        "not a plausible rank",
        lines=2,
    ),
    Case(
        "rank_beyond_world_size",
        _ranks([{"distributedInfo": {"rank": 0, "world_size": 2}}, {"distributedInfo": {"rank": 5, "world_size": 2}}]),
        0,
        "not below its world_size 2",
    ),
]


def _no_ray():
    return None if importlib.util.find_spec("ray") else "ray is not installed"


def _ray(address: str):
    def make(d: Path) -> Spec:
        a, b = write(d, "a.json", dump(doc())), write(d, "b.json", dump(doc()))
        return Spec([a, b, "-q", "--engine", "ray", "--ray-address", address, "-o", "m.xlsx"])

    return make


RAY = [
    Case(
        "ray_unreachable", _ray("127.0.0.1:1"), 2, "--ray-address: cannot connect to 127.0.0.1:1", timeout=60, max_s=40
    ),
    Case("ray_not_an_address", _ray("not an address"), 2, "is not an address", timeout=60, max_s=40),
    Case("ray_port_out_of_range", _ray("ray://localhost:70000"), 2, "port 70000", timeout=60, max_s=40),
]
for c in RAY:
    c.skip = _no_ray
for c in MULTI + TRACEBACKS + CONFIG:  # a process pool or an analysis per run: slow on a loaded machine
    c.timeout = 240


@pytest.mark.parametrize("case", MULTI + RAY, ids=[c.name for c in MULTI + RAY])
def test_multi_rank_warnings_and_ray(case, tmp_path):
    why = case.skip()
    if why:
        pytest.skip(why)
    run_case(case, tmp_path)


def test_case_names_unique():
    names = [c.name for c in DIFF + TRACEBACKS + CONFIG + MULTI + RAY]
    assert len(names) == len(set(names))
