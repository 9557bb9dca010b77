"""pipeline.py: load_tree and analyze on small traces built here: the spec chosen (given, detected,
none), the steps note, option refusals, a --models file whose model needs an unknown pass output,
stdin-like streams, and on_tree called before the tree's records are freed."""

from __future__ import annotations

import io

import pytest

from perfreport.errors import BadInput
from perfreport.pipeline import analyze, load_tree
from perfreport.specs import load_arch
from tests.kit import X, shape_args, write_trace

EV = [
    X("user_annotation", "ProfilerStep#4", 0, 200),
    X("cpu_op", "aten::mm", 10, 50, **shape_args([[64, 64], [64, 64]], ["float", "float"])),
    X("cuda_runtime", "cudaLaunchKernel", 12, 2, correlation=1),
    X("kernel", "gemm", 100, 20, pid=0, tid=7, device=0, stream=7, correlation=1),
]
H100_META = {"deviceProperties": [{"id": 0, "name": "NVIDIA H100 80GB HBM3", "computeMajor": 9, "computeMinor": 0}]}


def test_load_tree_notes_the_steps_and_runs_the_passes(tmp_path):
    t = load_tree(write_trace(tmp_path, EV))
    assert t.steps_note == "steps: 1 ProfilerStep step(s) (4), all analysed (--steps picks some)"
    assert [o.name for o in t.ops_named("aten::mm")] == ["aten::mm"]
    bare = load_tree(write_trace(tmp_path, [X("cpu_op", "aten::mm", 0, 1)], name="bare.json"), passes=False)
    assert bare.steps_note.startswith("steps: none found")


def test_the_spec_given_detected_or_none(tmp_path):
    p = write_trace(tmp_path, EV, H100_META)
    detected = analyze(p)
    assert detected.spec is not None and "(detected from deviceProperties, peak figures)" in detected.arch_msg
    given = analyze(p, arch="h200")
    assert given.spec.key == "h200" and "(from --arch, peak figures)" in given.arch_msg
    spec = load_arch("b200")
    assert analyze(p, arch=spec).arch_msg == f"GPU spec: {spec.name} (given, peak figures)"
    none = analyze(write_trace(tmp_path, EV, {"deviceProperties": [{"name": "Toy GPU"}]}, name="toy.json"))
    assert none.spec is None
    assert none.arch_msg.startswith(
        "GPU spec: none matched the trace's deviceProperties (saw: Toy GPU); roofline columns left empty (pass --arch"
    )


def test_the_report_holds_sheets_notes_and_the_tree_for_on_tree(tmp_path):
    seen = []
    rep = analyze(write_trace(tmp_path, EV, H100_META), on_tree=lambda t: seen.append(len(t.gpu)))
    assert seen == [1] and rep.has_gpu
    assert "unified_perf_summary" in rep.sheet_names
    assert rep.notes[0] == f"source: {tmp_path / 't.json'}"
    assert "steps: 1 ProfilerStep step(s) (4), all analysed (--steps picks some)" in rep.notes


def test_a_binary_stream_is_a_trace(tmp_path):
    with open(write_trace(tmp_path, EV), "rb") as fh:
        rep = analyze(io.BytesIO(fh.read()), arch="h100_sxm")
    assert rep.has_gpu


@pytest.mark.parametrize(
    ("kw", "what"),
    [
        ({"basis": "typical"}, "--basis"),
        ({"target_roofline": 0}, "--target-roofline"),
        ({"target_roofline": 1.5}, "--target-roofline"),
    ],
)
def test_bad_options(tmp_path, kw, what):
    with pytest.raises(BadInput) as e:
        analyze(write_trace(tmp_path, EV), **kw)
    assert e.value.source == what


@pytest.fixture
def registry_restored():
    from perfreport.models import registry

    saved, pats = dict(registry.MODELS), list(registry.MODEL_PATTERNS)
    yield
    registry.MODELS.clear()
    registry.MODELS.update(saved)
    registry.MODEL_PATTERNS[:] = pats


def test_a_models_file_needing_an_unknown_pass_output_is_refused(tmp_path, registry_restored):
    f = tmp_path / "mine.py"
    f.write_text(
        "from perfreport.models.base import PerfModel\n"
        "from perfreport.models.registry import register\n"
        "@register('mine::op_h18m_test')\n"
        "class MineNeedsMagic(PerfModel):\n"
        "    needs = ('magic_h18m',)\n"
    )
    with pytest.raises(BadInput, match="model MineNeedsMagic needs perf_meta magic_h18m, which no pass writes"):
        analyze(write_trace(tmp_path, EV), models=[str(f)])
