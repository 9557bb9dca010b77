"""A local Ray instance's session folder (perfreport/multi/ray_connect.py, engines._ray) without
starting Ray: a stand-in ``ray`` module records what the engine asks of it.

* the folder is made under $TMPDIR (or $RAY_TMPDIR), or under /tmp when that path would make
  Ray's socket paths longer than 107 bytes;
* ray.init gets it as ``_temp_dir``; ray.shutdown runs while it still exists, then it is removed
  with whatever Ray wrote there;
* an init that fails half-way: shutdown still runs, the folder is removed, and the error is one
  BadInput line naming the engine;
* a cluster address gets no folder of ours (the cluster's own temp dir is its business).
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from pathlib import Path
from types import SimpleNamespace

import pytest

from perfreport.errors import BadInput
from perfreport.multi import engines, ray_connect


class FakeRay:
    def __init__(self, fail: Exception | None = None):
        self.fail, self.up, self.log = fail, False, []
        self.temp = None

    def is_initialized(self):
        return self.up

    def init(self, **kw):
        self.log.append(("init", kw))
        self.temp = kw.get("_temp_dir")
        if self.temp:  # what a local instance writes there
            (Path(self.temp) / "session_x" / "sockets").mkdir(parents=True)
            (Path(self.temp) / "session_x" / "logs.txt").write_text("raylet\n")
        if self.fail:
            raise self.fail
        self.up = True

    def shutdown(self):
        self.log.append(("shutdown", self.temp is not None and os.path.isdir(self.temp)))
        self.up = False

    def remote(self, **kw):
        return lambda fn: SimpleNamespace(remote=fn)

    def get(self, values):
        return list(values)


@pytest.fixture
def fake_ray(monkeypatch, tmp_path):
    short = Path("/tmp") if len(str(tmp_path)) > 20 else tmp_path
    monkeypatch.delenv("RAY_TMPDIR", raising=False)
    monkeypatch.setenv("TMPDIR", str(short))
    monkeypatch.setattr(ray_connect.tempfile, "tempdir", None)  # gettempdir() reads TMPDIR again
    fake = FakeRay()
    monkeypatch.setitem(sys.modules, "ray", fake)
    return fake


def test_session_folder_under_tmpdir_given_to_init_and_removed_after_shutdown(fake_ray, tmp_path):
    missing = str(tmp_path / "missing.json")
    out = engines._ray([missing], {}, 2, None, quiet=True)
    assert len(out) == 1 and isinstance(out[0], str) and "missing.json" in out[0]  # the task ran
    (op, kw), shutdown = fake_ray.log
    assert op == "init" and kw["num_cpus"] == 2 and kw["log_to_driver"] is False and kw["logging_level"] == 40
    temp = Path(kw["_temp_dir"])
    assert temp.parent == Path(os.environ["TMPDIR"]) and temp.name.startswith("perfreport-ray-")
    assert shutdown == ("shutdown", True)  # Ray stopped while its folder was still there
    assert not temp.exists()


def test_failed_start_is_one_line_shutdown_and_folder_removed(fake_ray, tmp_path):
    fake_ray.fail = RuntimeError("Failed to start GCS\nTraceback (most recent call last): ...")
    with pytest.raises(BadInput) as e:
        engines._ray([str(tmp_path / "a.json")], {}, 2, None)
    assert str(e.value) == "--engine ray: Ray failed: RuntimeError: Failed to start GCS"
    assert [op for op, _ in fake_ray.log] == ["init", "shutdown"]
    assert "logging_level" not in fake_ray.log[0][1]  # Ray's own lines stay without -q
    assert not Path(fake_ray.temp).exists()


def test_a_cluster_address_gets_no_folder_of_ours(fake_ray, monkeypatch, tmp_path):
    monkeypatch.setattr(ray_connect, "check_address", lambda address: None)
    engines._ray([str(tmp_path / "a.json")], {}, 2, "auto", quiet=True)
    (op, kw), (op2, _) = fake_ray.log
    assert kw["address"] == "auto" and "_temp_dir" not in kw and op2 == "shutdown"


def test_session_base_falls_back_to_tmp_when_sockets_would_not_fit(monkeypatch, tmp_path):
    monkeypatch.delenv("RAY_TMPDIR", raising=False)
    long = tmp_path / ("x" * 40)
    long.mkdir()
    monkeypatch.setenv("TMPDIR", str(long))
    monkeypatch.setattr(ray_connect.tempfile, "tempdir", None)
    assert ray_connect.session_base() == "/tmp"
    monkeypatch.setenv("TMPDIR", "/tmp")
    monkeypatch.setattr(ray_connect.tempfile, "tempdir", None)
    assert ray_connect.session_base() == "/tmp"
    # the longest base that still fits: base + '/perfreport-ray-XXXXXXXX' + Ray's session tail <= 107
    fits = ray_connect.SOCKET_PATH_MAX - ray_connect.SESSION_TAIL - 1 - len(ray_connect.PREFIX) - 8
    edge = Path(tempfile.mkdtemp(prefix="e", dir="/tmp"))
    try:
        for n, want in ((fits, "itself"), (fits + 1, "/tmp")):
            base = edge / ("y" * (n - len(str(edge)) - 1))
            base.mkdir()
            monkeypatch.setenv("TMPDIR", str(base))
            monkeypatch.setattr(ray_connect.tempfile, "tempdir", None)
            assert len(str(base)) == n and ray_connect.session_base() == (str(base) if want == "itself" else want)
    finally:
        shutil.rmtree(edge)
    monkeypatch.setenv("RAY_TMPDIR", "/var/tmp")  # Ray's own variable wins over TMPDIR
    assert ray_connect.session_base() == "/var/tmp"
