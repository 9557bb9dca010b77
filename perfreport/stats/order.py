"""Median and sorted unique values of a 1-D array, equal to ``np.median`` and ``np.unique``.

numpy 2.x's ``np.median`` (``np.lib._utils_impl._median_nancheck``) and a plain ``np.unique``
(``np.ma.is_masked``) import ``numpy.ma`` on their first call: ~0.03 CPU s of a run's fixed cost,
for arrays that are never masked here. These two give the same values by the same steps
(numpy 2.4's ``_median`` and ``_unique1d``, sorting path) without that import; the tests compare
them with numpy's on ints, floats, NaNs, odd and even lengths and empty arrays.
"""

from __future__ import annotations

import numpy as np


def median(a, overwrite: bool = False) -> np.floating:
    """``np.median(a)`` of a 1-D array (or list), without importing ``numpy.ma``: partition
    around the middle (and the last place, where a NaN sorts), then the mean of the middle one
    or two values, so the dtype and rounding are numpy's; NaN if any value is NaN, and NaN (with
    numpy's 'Mean of empty slice' warning) for an empty array. ``overwrite``: partition ``a``
    itself (numpy's ``overwrite_input``; a 1-D array's order is then lost), saving a copy."""
    a = np.asarray(a).ravel()
    n = a.size
    if n == 0:
        return np.mean(a)
    h = n // 2
    kth = [h - 1, h] if n % 2 == 0 else [h]
    nans = np.issubdtype(a.dtype, np.inexact)
    if nans:
        kth.append(-1)
    if overwrite:
        a.partition(kth)
        part = a
    else:
        part = np.partition(a, kth)
    mid = np.mean(part[h - 1 : h + 1] if n % 2 == 0 else part[h : h + 1])
    if nans and np.isnan(part[-1]):
        return part[-1]  # numpy's _median_nancheck: the NaN itself
    return mid


def sorted_unique(a) -> np.ndarray:
    """``np.unique(a)`` (sorted distinct values, NaNs as one) without importing ``numpy.ma``."""
    s = np.sort(np.asarray(a).ravel())
    if s.size == 0:
        return s
    keep = np.empty(s.size, dtype=bool)
    keep[0] = True
    np.not_equal(s[1:], s[:-1], out=keep[1:])
    if s.dtype.kind in "fc" and np.isnan(s[-1]):  # NaNs sort last; numpy keeps the first
        first = int(np.flatnonzero(np.isnan(s))[0])
        keep[first] = True
        keep[first + 1 :] = False
    return s[keep]


def list_median(values) -> float:
    """``statistics.median(values)`` of a non-empty sequence of numbers (the middle one, or the
    mean of the two middle ones as ``(a + b) / 2``) without importing ``statistics`` (which pulls
    in ``fractions``, ``decimal`` and ``random``: ~0.02 CPU s of a run's start)."""
    s = sorted(values)
    n = len(s)
    if n == 0:
        raise ValueError("no median for an empty sequence")
    h = n // 2
    return s[h] if n % 2 else (s[h - 1] + s[h]) / 2
