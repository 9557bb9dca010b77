"""Capture the serving-op fixture traces (CPU, real torch.profiler runs).

    . .venv/bin/activate && python scripts/capture_serving_fixtures.py [--out fixtures]

Stand-in custom ops registered with torch.library under the exact names and positional
signatures of the serving stacks compute small real results in torch, run under
``torch.profiler.profile(activities=[CPU], record_shapes=True)``:

* ``fixtures/serving_moe.json.gz``: ``vllm::moe_forward(hidden_states[T,H],
  router_logits[T,E], layer_name)`` whose body runs the triton_kernels routing
  ``TopK`` / ``SortTokens`` autograd Functions (cpu_ops named by class) and views the
  MXFP4 expert weights as ``unsigned char`` ``[E, H/2, 2I]`` / ``[E, I/2, H]`` (the layout
  of the vLLM GPT-OSS decode capture) before a reference MoE on the dequantized weights;
  ``vllm::outplace_fused_experts(hidden, w1[E,2I,H], w2[E,H,I], topk_weights, topk_ids)``
  in BF16, once with E=8, k=2 and once with E=1, k=1 (a dense gated MLP whose two GEMMs
  are recorded as ``aten::mm`` children); ``_moe_C::topk_softmax`` and
  ``_moe_C::moe_align_block_size``; aiter's ``aiter::fmoe_g1u1(out, input, gate, down,
  sorted_token_ids, sorted_weights, sorted_expert_ids, num_valid_ids, topk, input_scale,
  fc1_scale, fc2_scale)`` with FP8 (e4m3fnuz) activations and weights and per-channel
  scales, and the two-stage ``aiter::ck_moe_stage1`` / ``ck_moe_stage2`` in BF16, all on
  the same sorted routing (token·k + slot ids grouped by expert in blocks of 4); vLLM's
  CUTLASS grouped GEMM ``_C::cutlass_moe_mm`` (first expert GEMM, FP8 e4m3fn rows permuted
  by expert, per-tensor activation scale, per-expert weight scales).

* ``fixtures/serving_kv_cache.json.gz``: ``_C_cache_ops::reshape_and_cache_flash`` with a
  BF16 cache and an FP8 cache stored as ``uint8``, ``_C_cache_ops::reshape_and_cache``
  (5-D K cache), ``_C_cache_ops::concat_and_cache_mla`` and ``sglang::store_cache(k, v,
  k_cache, v_cache, indices, *, row_bytes, num_split, size_limit)`` (SGLang
  python/sglang/jit_kernel/kvcache.py: 2-d new K/V ``[T, H*D]`` and cache rows ``[slots, H*D]``);
* ``fixtures/serving_quant.json.gz``: ``_C::static_scaled_fp8_quant``,
  ``_C::dynamic_scaled_fp8_quant``, ``_C::dynamic_per_token_scaled_fp8_quant`` (result,
  input, scale, ...) and ``_C::per_token_group_fp8_quant(input, output_q, output_s, ...)``;
* ``fixtures/serving_inductor.json.gz``: Inductor Triton kernel cpu_ops recorded the way
  Inductor's launcher records them (``torch._C._profiler._RecordFunctionFast(kernel name,
  [kernel arguments])``): pointwise, reduction, persistent reduction, a gather and an mm
  template, each computing its result in torch inside the record;
* ``fixtures/serving_vision.json.gz``: ``aten::max_pool2d_with_indices`` and its backward,
  ``aten::upsample_nearest1d/2d`` (real aten ops on the CPU), ``aten::miopen_batch_norm_backward``
  (a CPU kernel registered for the real aten schema) and ``aiter::_groupnorm_run(y,
  workspace, input, num_groups, weight, bias, eps)``.

MoE sizes (scripts/serving_moe_ops.py): T 6 tokens, H 64, I 96, E 8, k 2 (2I != H, so the
packed uint8 shapes cannot also be read as 8-bit weights). Seeded: shapes and dtypes are
the same on every run (only timestamps differ).

Where things are: the stand-in ops per family in scripts/serving_moe_ops.py,
serving_routing_ops.py, serving_kv_cache_ops.py, serving_quant_ops.py and
serving_vision_ops.py (registered through scripts/stand_in_library.py); the profiled calls in
scripts/serving_workloads.py; this file only profiles and writes (scripts/fixture_io.py).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from fixture_io import write_profile  # scripts/ is on sys.path when a script runs
from serving_workloads import FAMILIES, register_ops

import torch


def _write(prof, path: Path, family: str) -> int:
    return write_profile(
        prof, path, {"generator": "scripts/capture_serving_fixtures.py", "family": family, "torch": torch.__version__}
    )


def capture(family: str, path: Path) -> int:
    register_ops()
    gen = torch.Generator().manual_seed(1234)
    act = [torch.profiler.ProfilerActivity.CPU]
    with torch.no_grad():
        setup = FAMILIES[family](gen)
        with torch.profiler.profile(activities=act, record_shapes=True) as prof:
            setup()
    return _write(prof, path, family)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=str(Path(__file__).resolve().parents[1] / "fixtures"))
    ap.add_argument(
        "families",
        nargs="*",
        default=list(FAMILIES),
        metavar="FAMILY",
        help=f"families to capture (default all): {', '.join(FAMILIES)}",
    )
    a = ap.parse_args(argv)
    unknown = [f for f in a.families if f not in FAMILIES]
    if unknown:
        ap.error(f"unknown family {', '.join(unknown)} (known: {', '.join(FAMILIES)})")
    torch.manual_seed(0)
    for fam in a.families:
        name = f"serving_{fam}.json.gz"
        print(f"{name}: {capture(fam, Path(a.out) / name)} bytes", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
