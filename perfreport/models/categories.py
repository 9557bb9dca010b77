"""Categories of ops that have no perf model: (regex, category), first full match wins; an op
matching none is ``"other"`` (:func:`perfreport.models.registry.category_of`).

GEMM: composite/other matmuls and any vendor op with "gemm" in its name. comm: collectives.
memcpy: data movement, fills, gathers/scatters, concatenation. elementwise / reduce: Inductor
pointwise (triton_poi_) / reduction (triton_red_, triton_per_) kernels' ops, foreach ops, other
aten pointwise/reduction ops.
"""

from __future__ import annotations

CATEGORIES: tuple[tuple[str, str], ...] = (
    (
        r"aten::(linear|matmul|einsum|addbmm|addmv|mv|dot|vdot|outer|tensordot|_int_mm)"
        r"|.*gemm.*|.*::.*_mm",
        "GEMM",
    ),
    (
        r"record_param_comms|nccl:.*|(c10d|_c10d_functional|c10d_functional|nccl|rccl)::.*"
        r"|.*(all_reduce|allreduce|all_gather|allgather|reduce_scatter|all_to_all|alltoall).*",
        "comm",
    ),
    (
        r"Memcpy.*|Memset.*|aten::(clone|contiguous|cat|stack|index|index_select|gather"
        r"|scatter|scatter_|scatter_add_?|index_put_?|index_copy_?|_index_put_impl_|embedding"
        r"|fill_|zero_|zeros|ones|full|zeros_like|ones_like|full_like|arange|repeat"
        r"|repeat_interleave|flip|roll|narrow_copy|_foreach_copy_|constant_pad_nd|pad"
        r"|masked_select|nonzero|_copy_from|_copy_from_and_resize|take|put_)",
        "memcpy",
    ),
    (
        r"triton_poi_.*|aten::_foreach_.*|aten::(dropout|native_dropout|bernoulli_?|uniform_"
        r"|normal_|exponential_|rand|randn|randint|rand_like|randn_like|clamp_min_"
        r"|mish_backward|hardswish_backward|elu_backward|leaky_relu_backward|softplus_backward)",
        "elementwise",
    ),
    (
        r"triton_(red|per)_.*|aten::(topk|sort|argsort|cummax|cummin|median|mode|kthvalue"
        r"|unique.*|_unique2|bincount|histc|_softmax_backward_data|_log_softmax_backward_data"
        r"|nll_loss.*|cross_entropy_loss)",
        "reduce",
    ),
)

__all__ = ["CATEGORIES"]
