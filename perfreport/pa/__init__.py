"""bench-pa: our paged-attention decode kernel (``kernel/``) and its benchmark (``bench/``)."""
