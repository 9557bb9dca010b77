"""Mixture-of-experts perf models: fused experts, expert parallelism, routing, vendor kernels."""
