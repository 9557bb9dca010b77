"""Paged-attention decode kernel (Triton), its torch reference and cache builders.

Nothing here is imported by ``perfreport analyze``; importing the submodules needs torch
(and triton for :mod:`perfreport.pa.kernel.partition_kernel`).
"""
