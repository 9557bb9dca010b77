"""Interconnect figures in the spec files: every GPU has a cited GPU-to-GPU link figure, and
per direction is half the datasheet's bidirectional figure (what busbw is set against)."""

from __future__ import annotations

import pytest

from perfreport.specs import list_archs, load_arch


def test_every_spec_has_a_cited_link_figure():
    for s in list_archs():
        ic = s.interconnect
        assert ic.get("link") and "interconnect" in s.sources, s.key
        assert ic["link_per_direction_GBps"] == pytest.approx(ic["link_bidirectional_GBps"] / 2), s.key
        if "pcie_bidirectional_GBps" in ic:
            assert ic["pcie_per_direction_GBps"] == pytest.approx(ic["pcie_bidirectional_GBps"] / 2), s.key


def test_datasheet_figures():
    # H100 SXM: NVLink 900 GB/s; MI300X: 7 Infinity Fabric links x 128 GB/s = 896 GB/s;
    # MI355X: 7 x 153.6 = 1075.2 GB/s; B200: NVLink 5, 1.8 TB/s (all bidirectional)
    assert load_arch("h100").interconnect["link_per_direction_GBps"] == 450
    assert load_arch("mi300x").interconnect["link_bidirectional_GBps"] == 7 * 128
    assert load_arch("mi355x").interconnect["link_bidirectional_GBps"] == pytest.approx(7 * 153.6)
    assert load_arch("b200").interconnect["link_per_direction_GBps"] == 1800 / 2
    assert load_arch("h100").interconnect["pcie_per_direction_GBps"] == 64  # PCIe Gen5 x16
    # B200 in DGX B200: PCIe Gen5 x16, 32 GT/s x 16 lanes / 8 = 64 GB/s per direction, 128 both ways
    b200 = load_arch("b200").interconnect
    assert (b200["pcie"], b200["pcie_per_direction_GBps"], b200["pcie_bidirectional_GBps"]) == (
        "PCIe Gen5 x16",
        32 * 16 // 8,
        2 * 64,
    )
