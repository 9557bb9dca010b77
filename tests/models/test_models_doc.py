"""docs/models.md: the out-of-tree attention model example runs and gets the pass outputs."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from perfreport.errors import BadInput
from perfreport.models import registry
from perfreport.pipeline import analyze

ROOT = Path(__file__).resolve().parents[2]
FIX = ROOT / "fixtures"


def _block(marker: str) -> str:
    text = (ROOT / "docs" / "models.md").read_text()
    return next(b for b in re.findall(r"```python\n(.*?)```", text, flags=re.S) if marker in b)


@pytest.fixture
def restore_registry():
    saved, pats = dict(registry.MODELS), list(registry.MODEL_PATTERNS)
    yield
    registry.MODELS.clear()
    registry.MODELS.update(saved)
    registry.MODEL_PATTERNS[:] = pats


def test_out_of_tree_model_gets_iteration_statistics(tmp_path, restore_registry):
    f = tmp_path / "my_attention.py"
    f.write_text(_block("# my_attention.py"))
    rep = analyze(
        str(FIX / "vllm_decode_graph.json.gz"), graph_capture=str(FIX / "vllm_decode_capture"), models=[str(f)]
    )
    rows = [
        r for r in rep.sheet("unified_perf_summary").records() if r["name"] == "vllm::unified_attention_with_output"
    ]
    # without --model-config the alternating sliding/full layers are one bimodal group, split
    # by kernel list (tables/flags.py); each part carries the same model figures
    assert sum(r["count"] for r in rows) == 24
    for row in rows:
        assert row["perf model"] == "MyDecodeAttention" and row["reason"] == ""
        # 2*64*55086*2*64 FLOPs; (55086 - 32)*8*2*64*2 bytes
        assert row["GFLOP"] == pytest.approx(902_529_024 / 1e9)
        assert row["data moved (MB)"] == pytest.approx(112_750_592 / 1e6)


def test_a_model_needing_an_unknown_pass_output_is_refused(tmp_path, restore_registry):
    f = tmp_path / "bad.py"
    f.write_text(_block("# my_attention.py").replace('needs = ("iteration",)', 'needs = ("iteration", "kv_hit_rate")'))
    with pytest.raises(BadInput, match="needs perf_meta kv_hit_rate, which no pass writes"):
        analyze(str(FIX / "vllm_decode_graph.json.gz"), models=[str(f)])
