"""``perfreport bench-pa``: measure paged-attention decode kernels against the roofline.

Importing this package needs nothing beyond the standard library; torch is imported when
the command runs.
"""
