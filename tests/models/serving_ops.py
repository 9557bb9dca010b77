"""Shared helper: the first op of a name in a serving_* fixture, with its registered model."""

from functools import lru_cache
from pathlib import Path

from perfreport.models.registry import model_for
from perfreport.pipeline import load_tree

FIX = Path(__file__).resolve().parents[2] / "fixtures"


@lru_cache(maxsize=None)
def tree(family: str):
    return load_tree(str(FIX / f"serving_{family}.json.gz"))


def model(family: str, name: str, i: int = 0):
    op = tree(family).ops_named(name)[i]
    cls = model_for(name)
    assert cls is not None, name
    return cls(op)
