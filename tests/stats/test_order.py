"""stats/order.py: median and unique equal numpy's, without importing numpy.ma."""

import subprocess
import sys
import warnings

import numpy as np
import pytest

from perfreport.stats.order import list_median, median, sorted_unique

CASES = [
    [3.0],
    [2.0, 1.0],
    [5.0, 1.0, 4.0],
    [0.1, 0.7, 0.2, 0.30000000000000004],  # the mean of two middles rounds as numpy's does
    [1.0, np.nan, 2.0],
    [np.nan, np.nan],
    [-0.0, 0.0, -0.0],
    [7, 3, 3, 9],  # ints: the mean of 3 and 7 is 5.0
    [7, 3, 9],
]


@pytest.mark.parametrize("vals", CASES, ids=range(len(CASES)))
@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int64, np.int32])
def test_median_equals_numpy(vals, dtype):
    a = np.asarray(vals, dtype=np.float64)
    if np.dtype(dtype).kind == "i" and np.isnan(a).any():
        pytest.skip("no NaN in an int array")
    a = a.astype(dtype)
    got, want = median(a.copy()), np.median(a.copy())
    assert type(got) is type(want)
    assert np.array_equal(np.asarray(got), np.asarray(want), equal_nan=True)
    if not np.isnan(want):
        assert np.signbit(got) == np.signbit(want)  # -0.0 stays -0.0


def test_median_by_hand():
    assert median([1.0, 2.0, 4.0, 10.0]) == 3.0  # (2 + 4) / 2
    assert median([9, 1, 5]) == 5.0
    assert median(list(range(1, 1002))) == 501.0


def test_median_random_and_empty():
    rng = np.random.default_rng(7)
    for n in (1, 2, 3, 10, 11, 1000, 1001):
        a = rng.random(n) * 100
        assert median(a) == np.median(a)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        assert np.isnan(median(np.array([], dtype=np.float64)))


@pytest.mark.parametrize(
    "vals",
    [[], [3, 1, 3, 2, 1], [5], [1.0, np.nan, 0.5, np.nan, 1.0], [np.nan], [-1, 2**40, -1], ["b", "a", "b"]],
    ids=range(7),
)
def test_unique_equals_numpy(vals):
    a = np.asarray(vals) if vals else np.asarray([], dtype=np.int64)
    got, want = sorted_unique(a), np.unique(a)
    assert got.dtype == want.dtype
    assert np.array_equal(got, want, equal_nan=got.dtype.kind == "f")


def test_unique_by_hand():
    assert sorted_unique(np.array([4, 2, 4, 0, 2], dtype=np.int32)).tolist() == [0, 2, 4]
    assert sorted_unique(np.array([2, 1], dtype=np.int32)).dtype == np.int32


def test_neither_imports_numpy_ma():
    code = (
        "import sys, numpy as np; from perfreport.stats.order import median, sorted_unique; "
        "median(np.arange(10.0)); median(np.arange(5)); sorted_unique(np.array([3, 1, 3])); "
        "sorted_unique(np.array([1.0, np.nan])); print('numpy.ma' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_median_overwrite_partitions_in_place():
    a = np.array([5.0, 1.0, 4.0, 2.0])
    assert median(a, overwrite=True) == np.median(np.array([5.0, 1.0, 4.0, 2.0])) == 3.0
    assert sorted(a.tolist()) == [1.0, 2.0, 4.0, 5.0]


def test_list_median_equals_statistics():
    import statistics

    for vals in ([3.0], [2.0, 1.0], [5, 1, 4], [0.1, 0.7, 0.2, 0.30000000000000004], [7, 3, 3, 9], [1e16, 1.0, 3.0]):
        got, want = list_median(vals), statistics.median(vals)
        assert got == want and type(got) is type(want)
    assert list_median([10.0, 2.0, 4.0, 1.0]) == 3.0  # (2 + 4) / 2
    with pytest.raises(ValueError):
        list_median([])
