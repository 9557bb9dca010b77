"""Detection by every ``deviceProperties`` name spelling found in public traces and code, and the
'close specs' hint for a name that matches none."""

from __future__ import annotations

import pytest

from perfreport.specs import close_specs, detect_arch, detect_arch_from_name, list_archs, load_arch

GIB = 2**30

# (cudaDeviceProp.name / hipDeviceProp.name as Kineto records it, numSms, totalGlobalMem, spec key)
SPELLINGS = [
    ("NVIDIA A100-SXM4-40GB", 108, 42405855232, "a100_sxm4_40gb"),  # deviceQuery on an A100 40GB
    ("A100-SXM4-40GB", 108, 42405855232, "a100_sxm4_40gb"),  # older drivers, no vendor prefix
    ("NVIDIA A100-PG509-200", 108, 42405855232, "a100_sxm4_40gb"),  # PCI 20B0, as A100-SXM4-40GB
    ("NVIDIA A100-SXM4-80GB", 108, 85198045184, "a100_sxm4_80gb"),
    ("NVIDIA PG509-210", 108, 85198045184, "a100_sxm4_80gb"),  # PCI 20B2, as A100-SXM4-80GB
    ("NVIDIA A100-PCIE-40GB", 108, 42314694656, "a100_pcie_40gb"),
    ("NVIDIA A100 80GB PCIe", 108, 85100068864, "a100_pcie_80gb"),
    ("Tesla V100-SXM2-16GB", 80, 16945512448, "v100_sxm2"),
    ("Tesla V100-SXM2-32GB", 80, 34089730048, "v100_sxm2"),
    ("Tesla V100-PCIE-16GB", 80, 16945512448, "v100_pcie"),
    ("Tesla V100-PCIE-32GB", 80, 34089730048, "v100_pcie"),
    ("Tesla V100S-PCIE-32GB", 80, 34089730048, "v100s_pcie"),
    ("NVIDIA A10", 72, 24 * GIB, "a10"),
    ("NVIDIA A10G", 80, 24 * GIB, "a10g"),
    ("NVIDIA L4", 58, 24 * GIB, "l4"),
    ("NVIDIA L40S", 142, 48 * GIB, "l40s"),
    ("NVIDIA H100 80GB HBM3", 132, 85 * 10**9, "h100_sxm"),
    ("NVIDIA H100 PCIe", 114, 85 * 10**9, "h100_pcie"),
    ("NVIDIA H100 NVL", 132, 99 * 10**9, "h100_nvl"),
    ("NVIDIA H20", 78, 102 * 10**9, "h20"),
    ("NVIDIA H800", 132, 85 * 10**9, "h800"),
    ("NVIDIA H200", 132, 150 * 10**9, "h200"),
    ("NVIDIA H200 NVL", 132, 150 * 10**9, "h200_nvl"),
    ("NVIDIA GH200 480GB", 132, 95 * GIB, "gh200"),
    ("NVIDIA GH200 144G HBM3e", 132, 140 * GIB, "gh200_144gb"),
    ("NVIDIA B200", 148, 180 * GIB, "b200"),
    ("NVIDIA GB200", 152, 185 * GIB, "gb200"),
    ("AMD Instinct MI210", 104, 68702699520, "mi210"),
    ("AMD Instinct MI250X / MI250", 104, 65520 * 2**20, "mi250"),  # 104 CUs per GCD: MI250
    ("AMD Instinct MI250X / MI250", 110, 64 * GIB, "mi250x"),  # 110 CUs per GCD: MI250X
    ("AMD Instinct MI250X", 110, 64 * GIB, "mi250x"),
    ("AMD Instinct MI300A", 228, 128 * GIB, "mi300a"),
    ("AMD Instinct MI300X", 304, 192 * GIB, "mi300x"),
    ("AMD Instinct MI300X VF", 304, 192 * GIB, "mi300x"),
]


@pytest.mark.parametrize("name,sms,mem,key", SPELLINGS, ids=[f"{n}/{s}" for n, s, _, _ in SPELLINGS])
def test_each_spelling(name, sms, mem, key):
    assert detect_arch([{"name": name, "numSms": sms, "totalGlobalMem": mem}]).key == key


def test_names_alone():
    # without numSms/totalGlobalMem a name still picks its spec (constraints never rule out
    # an unrecorded field)
    assert detect_arch_from_name("NVIDIA A100-SXM4-80GB").key == "a100_sxm4_80gb"
    assert detect_arch_from_name("NVIDIA GH200 144G HBM3e").key == "gh200_144gb"
    # GH200 is not an H200, GB200 not a B200, A100 not an A10, L40S not an L4, H200 not an H20
    assert detect_arch_from_name("NVIDIA GH200 480GB").key == "gh200"
    assert detect_arch_from_name("NVIDIA GB200").key == "gb200"


def test_memory_and_cu_count_rule_out():
    # an '80GB' name on a 40 GB device is not the 80 GB spec (different HBM bandwidth)
    assert detect_arch([{"name": "NVIDIA A100-SXM4-80GB", "totalGlobalMem": 40 * GIB}]) is None


def test_mi250_gcd_is_half_the_package():
    # one GCD is one device: package 383.0 / 95.7 / 3.2 TB/s (MI250X) halved
    s = load_arch("mi250x")
    assert (s.peaks["matrix_bf16"], s.peaks["matrix_fp64"], s.mem_bw_tbps) == (191.5, 47.85, 1.6)
    assert load_arch("mi250").peaks["matrix_fp16"] == pytest.approx(362.1 / 2)


def test_a100_figures():
    # A100 datasheet: TF32 156 dense (312 sparse), BF16 312, FP32 19.5; 40 GB 1,555 GB/s, 80 GB SXM 2,039
    s = load_arch("a100")
    assert s.key == "a100_sxm4_80gb"
    assert (s.peaks["matrix_tf32"], s.peaks["matrix_bf16"], s.peaks["matrix_fp32"]) == (156.0, 312.0, 19.5)
    assert (load_arch("a100_sxm4_40gb").mem_bw_tbps, s.mem_bw_tbps) == (1.555, 2.039)


def test_sparse_halved_and_mx_peaks():
    # H100 NVL datasheet: BF16 1,671 TFLOPS with sparsity -> 835.5 dense; GB200 NVL72 FP4 1,440 PF / 72 / 2
    assert load_arch("h100_nvl").peaks["matrix_bf16"] == 835.5
    gb = load_arch("gb200")
    assert gb.peaks["matrix_fp4"] == 1440e3 / 72 / 2 == gb.peaks["matrix_mxfp4"]
    assert gb.peaks["matrix_mxfp8"] == gb.peaks["matrix_fp8"]
    assert load_arch("b200").peaks["matrix_mxfp8"] == 4500.0


def test_every_approximate_figure_says_why():
    for s in list_archs():
        for k, text in s.sources.items():
            if "APPROXIMATE" in text:
                assert len(text) > len("APPROXIMATE") + 20, (s.key, k)


def test_close_specs_for_an_unknown_name():
    keys = [s.key for s in close_specs([{"name": "Tesla V100-SXM3-32GB"}])]
    assert keys and all(k.startswith("v100") for k in keys)
    assert [s.key for s in close_specs([{"name": "NVIDIA H800 PCIe"}])] == ["h800"]
    # a nameless gfx942 device with an unknown CU count: same compute capability
    keys = {s.key for s in close_specs([{"name": "", "computeMajor": 9, "computeMinor": 4, "numSms": 80}])}
    assert {"mi300x", "mi300a"} <= keys
    assert close_specs([{"name": "Some Accelerator"}]) == []
