"""One thread pool: PyTorch's wheel carries its own OpenMP runtime (libgomp.so.1); convlab's kernels,
OpenBLAS and oneDNN in the same process bind to that one. After a patched model's training step has
run every CPU family with T threads, the process has exactly the threads it had after PyTorch's own
step -- a second OpenMP runtime would add its T - 1 workers. Deterministic; run in a fresh process."""

import os

import torch
from torch import nn

import convlab
import convlab.torch as ct


def process_threads():
    return len(os.listdir("/proc/self/task"))


def loaded_libgomps():
    paths = set()
    with open("/proc/self/maps") as f:
        for line in f:
            path = line.split()[-1]
            if "libgomp" in os.path.basename(path):
                paths.add(os.path.realpath(path))
    return paths


def step(model, x):
    model.zero_grad()
    model(x).square().sum().backward()


def test_a_patched_training_step_adds_no_thread_pool():
    torch.set_num_threads(2)
    x = torch.randn(2, 8, 12, 12, requires_grad=True)
    model = nn.Sequential(nn.Conv2d(8, 8, 3, padding=1), nn.Conv2d(8, 8, 1))
    step(model, x)  # PyTorch's own pools exist now
    base = process_threads()
    algos = [a["name"] for a in convlab.algos(device="cpu", available=True) if not a["oracle"]]
    assert {"onednn.auto", "cpu.im2col_openblas", "cpu.fft_fftw", "cpu.direct"} <= set(algos)
    for algo in algos:
        ct.patch(model, policy=f"fixed:{algo}")
        step(model, x)
        step(model, x)
    assert process_threads() == base, f"{process_threads() - base} more threads after convlab's kernels ran"
    assert len(loaded_libgomps()) == 1, loaded_libgomps()
