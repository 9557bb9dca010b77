"""Pass "kernel element size": the element size of ops whose arguments record no dtype.

A ``TensorList`` argument (``aten::cat``, ``aten::stack``) is recorded with shapes but no dtype.
PyTorch's CUDA/HIP concatenation kernel is a template on an opaque element type of the right
width, so its name says the element size: ``CatArrayBatchedCopy<...OpaqueType<2u>, ...>`` moves
2-byte elements (``aten/src/ATen/native/cuda/Shape.cu``). This pass writes that width to
``perf_meta["element_bytes"]`` of the op that launched the kernel (directly or in its subtree);
ops whose kernels disagree, or name no width, get nothing (their model then says why).
"""

from __future__ import annotations

import re

from perfreport.passes import register_pass

OPS = ("aten::cat", "aten::stack", "aten::_cat", "aten::concat", "aten::concatenate")
_OPAQUE = re.compile(r"OpaqueType<(\d+)u?>")


@register_pass("kernel element size", writes=("element_bytes",), order=30)
def element_size_from_kernels(tree) -> None:
    for name in OPS:
        for op in tree.ops_named(name):
            widths = set()
            for k in op.subtree_kernels():
                m = _OPAQUE.search(k.name)
                if m:
                    widths.add(int(m.group(1)))
            if len(widths) == 1:
                op.set_meta("element_bytes", widths.pop())
