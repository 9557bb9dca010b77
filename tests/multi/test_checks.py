"""multi/checks.py: implausible ranks named and not used, mixed GPUs warned about, repeated inputs read once."""

from __future__ import annotations

import os

from perfreport.multi.checks import MAX_RANK, checked_rank, mixed_gpus, repeated_inputs


def test_checked_rank():
    assert checked_rank(None, 8) == (None, None)
    assert checked_rank(3, 8) == (3, None)
    assert checked_rank(3, None) == (3, None)
    assert checked_rank(3, 0) == (3, None)  # an unknown (0) world size does not bound the rank
    r, why = checked_rank(8, 8)
    assert r is None and why == (
        "distributedInfo.rank 8 is not below its world_size 8; the rank comes from the file name or position"
    )
    for bad in (-1, MAX_RANK, 10**20):
        r, why = checked_rank(bad, None)
        assert r is None and why.startswith(f"distributedInfo.rank {bad} is not a plausible rank")
    assert checked_rank(MAX_RANK - 1, None) == (MAX_RANK - 1, None)


def test_mixed_gpus():
    assert mixed_gpus([(0, "H100"), (1, "H100")]) is None
    assert mixed_gpus([]) is None
    assert mixed_gpus([(1, "MI300X"), (0, "H100"), (2, "")]) == (
        "the traces were recorded on different GPUs: H100 (rank 0); MI300X (rank 1); "
        "no deviceProperties (rank 2); are they ranks of one run?"
    )
    many = [(r, "A100") for r in range(10)] + [(10, "H100")]
    assert "A100 (ranks 0, 1, 2, 3, 4, 5, 6, 7, …)" in mixed_gpus(many)


def test_repeated_inputs_by_inode_and_by_path(tmp_path):
    a = tmp_path / "a.json"
    a.write_text("{}")
    os.link(a, tmp_path / "hard.json")
    b = tmp_path / "b.json"
    b.write_text("{}")
    assert repeated_inputs([str(a), str(b)]) == []
    assert repeated_inputs([str(a), str(tmp_path / "hard.json"), str(b), str(b)]) == [
        f"{a}: warning: given 2 times (also as {tmp_path / 'hard.json'}); read once, as one rank",
        f"{b}: warning: given 2 times; read once, as one rank",
    ]
    gone = str(tmp_path / "missing.json")
    assert repeated_inputs([gone, gone]) == [f"{gone}: warning: given 2 times; read once, as one rank"]
