"""Attention perf models: SDPA, serving (paged / varlen / MLA) attention, FlashInfer, FlashMLA."""
