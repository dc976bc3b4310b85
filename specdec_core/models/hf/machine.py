"""What this machine can do, timed with torch: read bandwidth, a matrix product's compute rate,
and the weight bytes a model's decode step reads.

``specdec_core.live.machine_profile`` keeps these beside each model's step costs (timed at load,
``kernel_choice.step_costs``), so the lessons quote this machine's numbers without measuring on
a page's script thread; ``bench.profile`` prints them.
"""

from __future__ import annotations

import time
from typing import Any

import torch


def bandwidth_gbs(mib: int = 512, repeats: int = 5) -> float:
    """Read bandwidth in GB/s: bytes ÷ the fastest ``torch.sum`` over `mib` MiB of float32 (far
    larger than any cache), at torch's current thread count."""
    data = torch.ones(mib * 2**18, dtype=torch.float32)
    best = float("inf")
    for _ in range(repeats + 1):  # the first touches the pages
        start = time.perf_counter()
        torch.sum(data)
        best = min(best, time.perf_counter() - start)
    return data.numel() * 4 / best / 1e9


def compute_gflops(size: int = 1536, repeats: int = 3) -> float:
    """Compute rate in GFLOP/s: 2·n³ ÷ the fastest float32 product of two n × n matrices (large
    enough to be bound by arithmetic, not by memory), at torch's current thread count."""
    a = torch.randn(size, size, dtype=torch.float32)
    b = torch.randn(size, size, dtype=torch.float32)
    best = float("inf")
    with torch.inference_mode():
        for _ in range(repeats + 1):  # the first builds the kernel's buffers
            start = time.perf_counter()
            torch.mm(a, b)
            best = min(best, time.perf_counter() - start)
    return 2.0 * size**3 / best / 1e9


def step_bytes(module: Any) -> int:
    """Bytes of weights one decode step reads: every parameter once (a tied embedding is the
    head's weight), except an untied input embedding, of which a step reads one row."""
    seen: dict[int, int] = {}
    for p in module.parameters():
        seen[p.data_ptr()] = p.numel() * p.element_size()
    embed = module.get_input_embeddings().weight
    head = module.get_output_embeddings()
    if head is None or head.weight.data_ptr() != embed.data_ptr():
        seen.pop(embed.data_ptr(), None)
    return sum(seen.values())


def threads() -> int:
    """torch's intra-op thread count now."""
    return int(torch.get_num_threads())
