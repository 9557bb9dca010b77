"""Older and other Kineto category spellings read like today's (perfreport/read/schema.py
CAT_ALIASES, docs/formats.md), on small real traces from fixtures/corpus/.

* ``kineto/tb_plugin_test_gpu_metrics_input.json.gz``: pytorch/kineto tb_plugin test input (2021,
  ``Operator`` / ``Runtime`` / ``Kernel`` / ``Memcpy``, ``async`` flows, lower-case ``external id``);
* ``hta/trace_file_list_inference_rank_1.json.gz``: HTA test data (``Runtime`` / ``Kernel``,
  ``async_gpu`` flows);
* ``hta/mtia_inference_rank_0.json.gz``: HTA test data, an MTIA inference trace (``mtia_runtime``,
  ``mtia_ccp_events``).

On main before this change every one of them read "no GPU events".
"""

from __future__ import annotations

import gzip
import json
from collections import Counter
from pathlib import Path

import msgspec
import pytest

import perfreport
from perfreport.pipeline import load_tree
from perfreport.read.schema import CAT_ALIASES, GPU_CATS

CORPUS = Path(__file__).resolve().parents[2] / "fixtures" / "corpus"
OLD = CORPUS / "kineto" / "tb_plugin_test_gpu_metrics_input.json.gz"
OLD_HTA = CORPUS / "hta" / "trace_file_list_inference_rank_1.json.gz"
MTIA = CORPUS / "hta" / "mtia_inference_rank_0.json.gz"
ARRAY = CORPUS / "kineto" / "resnet50_num_workers_0_worker0_2d19c634.json.gz"  # tb_plugin sample, Jan 2021


def _raw_counts(path: Path | list | dict) -> Counter:
    d = json.loads(gzip.open(path).read()) if isinstance(path, Path) else path
    evs = d["traceEvents"] if isinstance(d, dict) else d
    return Counter(e.get("cat") for e in evs if isinstance(e, dict) and e.get("ph") == "X")


def _gpu_in_raw(counts: Counter) -> int:
    gpu_names = set(GPU_CATS) | {k for k, v in CAT_ALIASES.items() if v in GPU_CATS}
    return sum(n for c, n in counts.items() if c in gpu_names)


def test_aliases_name_only_todays_categories():
    assert CAT_ALIASES["Kernel"] == "kernel" and CAT_ALIASES["Operator"] == "cpu_op"
    assert CAT_ALIASES["Runtime"] == "cuda_runtime" and CAT_ALIASES["mtia_ccp_events"] == "kernel"
    assert set(CAT_ALIASES.values()) <= {"cpu_op", "cuda_runtime", "kernel", "gpu_memcpy", "gpu_memset"}


def test_capitalised_2021_categories_keep_every_kernel_and_op():
    raw = _raw_counts(OLD)
    assert (raw["Kernel"], raw["Memcpy"], raw["Operator"], raw["Runtime"]) == (30, 2, 179, 42)
    tree = load_tree(OLD)
    assert len(tree.gpu) == _gpu_in_raw(raw) == 32
    assert Counter(g.cat for g in tree.gpu) == {"kernel": 30, "gpu_memcpy": 2}
    # every kernel launched from an op: correlation links Runtime -> Kernel, as today
    assert not tree.unlinked
    mm = [g for g in tree.gpu if g.op is not None and g.op.name == "aten::mm"]
    assert mm and all(g.launch_name == "cudaLaunchKernel" for g in mm)


def test_capitalised_categories_report_gpu_time():
    r = perfreport.analyze(OLD)
    assert not any("no GPU events" in n for n in r.notes)
    assert any(n.startswith("coverage of 50.0 µs GPU time") for n in r.notes)
    assert "kernel_summary" in r.sheet_names


def test_hta_runtime_kernel_trace_with_async_gpu_flows():
    raw = _raw_counts(OLD_HTA)
    assert (raw["Kernel"], raw["Runtime"]) == (4, 8)
    tree = load_tree(OLD_HTA)
    assert len(tree.gpu) == 4
    assert all(g.launch_name == "cudaLaunchKernel" for g in tree.gpu)


@pytest.mark.parametrize("path", [MTIA], ids=["mtia"])
def test_mtia_device_events_read_as_gpu_events(path):
    raw = _raw_counts(path)
    assert (raw["mtia_ccp_events"], raw["mtia_runtime"]) == (1313, 823)
    tree = load_tree(path)
    assert len(tree.gpu) == _gpu_in_raw(raw) == 1313
    assert {g.device for g in tree.gpu} == {17}  # the MTIA device's pid ("MTIA 17")
    # device events carrying a correlation are linked to their mtia_runtime call
    linked = [g for g in tree.gpu if g.launcher is not None]
    assert len(linked) >= 1313 - 322  # 322 device events carry no correlation (event waits ...)
    assert any(g.launch_name == "runFunction - job_prep_and_submit_for_execution" for g in linked)
    r = perfreport.analyze(path)
    assert not any("no GPU events" in n for n in r.notes)


def test_json_array_format_of_2020_reads_every_event():
    # pytorch/kineto tb_plugin/samples/resnet50_num_workers_0/worker0.pt.trace.json.gz at eebfef30:
    # a bare event list (Kineto before 9c66d1eb); main refused it ("JSON array at top level")
    d = msgspec.json.decode(gzip.open(ARRAY).read())  # json.loads's values here, ~4x sooner (30 MB)
    assert isinstance(d, list)
    raw = _raw_counts(d)  # the same document, parsed once
    assert (raw["Kernel"], raw["Memcpy"], raw["Memset"]) == (9538, 12, 377)
    tree = load_tree(ARRAY)
    assert len(tree.gpu) == _gpu_in_raw(raw) == 9927
    assert tree.meta == {}
    assert sum(1 for g in tree.gpu if g.op is not None) > 9000


@pytest.mark.parametrize(
    "data, needle",
    [
        (b"[]", "top-level event array is empty"),
        (b'[{"ph": "M", "name": "x"}] 1', "data after the top-level event array"),
    ],
)
def test_json_array_format_bad_input(tmp_path, data, needle):
    p = tmp_path / "t.json"
    p.write_bytes(data)
    with pytest.raises(perfreport.BadInput, match=needle):
        perfreport.analyze(p)
