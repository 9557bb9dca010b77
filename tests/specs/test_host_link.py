"""Every built-in spec has a cited host-link figure and a last-level cache size."""

from __future__ import annotations

import json

import pytest

from perfreport.specs import list_archs, load_arch


def test_every_spec_has_cited_host_link_and_llc():
    for s in list_archs():
        assert s.host_link_gbps and s.llc_bytes, s.key
        assert "host_link_gbps" in s.sources and "llc_bytes" in s.sources, s.key


def test_pcie_gen5_x16_figure():
    # PCIe Gen5 x16: 32 GT/s x 16 lanes x 128/130 encoding / 8 bits = 63.0 GB/s per direction;
    # datasheets round it to 128 GB/s bidirectional = 64 GB/s per direction (32 x 16 / 8 = 64,
    # before encoding). B200: PCIe Gen5 x16 in DGX B200 (NVIDIA's MLPerf system description)
    assert 32 * 16 * 128 / 130 / 8 == pytest.approx(63.0, abs=0.02)
    assert 32 * 16 / 8 == 64.0
    for key in ("h100_sxm", "h200", "b200", "mi300x", "mi325x", "mi355x"):
        assert load_arch(key).host_link_gbps == 64.0


def test_spec_file_host_link(tmp_path):
    p = tmp_path / "g.json"
    p.write_text(json.dumps({"key": "g", "mem_bw_tbps": 1.0, "peaks_tflops": {}, "host_link_gbps": 32}))
    assert load_arch(str(p)).host_link_gbps == 32.0
    p.write_text(json.dumps({"key": "g", "mem_bw_tbps": 1.0, "peaks_tflops": {}}))
    assert load_arch(str(p)).host_link_gbps is None


def test_spec_file_bad_host_link(tmp_path):
    from perfreport.errors import BadInput

    p = tmp_path / "g.json"
    p.write_text(json.dumps({"key": "g", "mem_bw_tbps": 1.0, "peaks_tflops": {}, "host_link_gbps": "fast"}))
    with pytest.raises(BadInput, match="host_link_gbps must be a number"):
        load_arch(str(p))
