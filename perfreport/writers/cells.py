"""Turn DataFrame cells into plain values for writers (never ``np.float64(...)`` reprs)."""
from __future__ import annotations

import math

import numpy as np
import pandas as pd


def plain(v):
    if v is None or v is pd.NA:
        return None
    if isinstance(v, np.generic):
        v = v.item()
    if isinstance(v, float) and (math.isnan(v) or math.isinf(v)):
        return None
    return v


def rows(df):
    for rec in df.itertuples(index=False, name=None):
        yield [plain(v) for v in rec]
