"""passes/kernel_element_size.py: a cat/stack op's element size from its kernel's OpaqueType<N>."""

from __future__ import annotations

from perfreport.pipeline import load_tree
from tests.kit import X, write_trace


def _cat(ts, corr_kernels):
    ev = [X("cpu_op", "aten::cat", ts, 50)]
    for i, (corr, kname) in enumerate(corr_kernels):
        ev.append(X("cuda_runtime", "cudaLaunchKernel", ts + 1 + i, 1, correlation=corr))
        ev.append(X("kernel", kname, 1000 + corr * 10, 2, pid=0, tid=7, device=0, stream=7, correlation=corr))
    return ev


CAT2 = "void at::native::(anonymous namespace)::CatArrayBatchedCopy<at::native::(anonymous namespace)::OpaqueType<2u>, unsigned int, 2, 128, 1>"
CAT4 = CAT2.replace("OpaqueType<2u>", "OpaqueType<4u>")


def test_the_width_in_the_kernel_name_is_the_element_size(tmp_path):
    ev = _cat(0, [(1, CAT2), (2, CAT2)]) + _cat(100, [(3, CAT2), (4, CAT4)]) + _cat(200, [(5, "some_copy_kernel")])
    t = load_tree(write_trace(tmp_path, ev))
    same, mixed, none = sorted(t.ops_named("aten::cat"), key=lambda o: o.ts)
    assert same.perf_meta["element_bytes"] == 2
    assert "element_bytes" not in mixed.perf_meta  # kernels disagree: nothing written
    assert "element_bytes" not in none.perf_meta
