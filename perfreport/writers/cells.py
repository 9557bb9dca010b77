"""Turn DataFrame cells into plain values for writers (never ``np.float64(...)`` reprs)."""
from __future__ import annotations

import math

import numpy as np


def plain(v):
    if v is None:
        return None
    if isinstance(v, np.generic):
        v = v.item()
    if isinstance(v, float) and (math.isnan(v) or math.isinf(v)):
        return None
    return v


def rows(sheet):
    for rec in sheet.rows:
        yield [plain(v) for v in rec]
