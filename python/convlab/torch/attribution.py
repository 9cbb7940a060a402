"""Where a training step's time goes, layer by layer, and the step's napkin limit.

Per-layer times come from hooks around every convolution layer (forward: pre-hook to hook;
backward: from its output's gradient to its weight's, see LayerTimer), synchronised on CUDA. A patched
layer also reports its backward split into bwd-data and bwd-filter (its own timers). The limit
counts what the step must do at the machine's measured FMA peak and memory bandwidth.
"""

import statistics
import time

import torch
from torch import nn

from .. import _convlab

DIRS = ("fwd", "bwd-data", "bwd-filter")


class LayerTimer:
    """Hooks timing every nn.Conv2d of a model: forward from its pre-hook to its hook; backward from
    the moment its output's gradient is ready (a hook on the output tensor, registered in the forward
    hook, so an in-place op after the layer changes nothing) to the moment its weight's gradient is
    (a hook on the weight: the convolution's backward node computes both gradients together)."""

    def __init__(self, model, device):
        self.device = device
        self.times = {}  # layer name -> {"fwd": [...], "bwd": [...]}
        self._start = {}
        self._handles = []
        for name, m in model.named_modules():
            if isinstance(m, nn.Conv2d):
                self.times[name] = {"fwd": [], "bwd": []}
                self._handles += [m.register_forward_pre_hook(self._forward_start(name)),
                                  m.register_forward_hook(self._forward_stop(name))]
                if m.weight.requires_grad:
                    self._handles.append(m.weight.register_hook(self._backward_stop(name)))

    def _sync(self):
        if self.device == "cuda":
            torch.cuda.synchronize()

    def _now(self):
        self._sync()
        return time.perf_counter()

    def _forward_start(self, name):
        def hook(module, args):
            self._start[(name, "fwd")] = self._now()
        return hook

    def _forward_stop(self, name):
        def hook(module, args, out):
            self.times[name]["fwd"].append(self._now() - self._start.pop((name, "fwd")))
            if isinstance(out, torch.Tensor) and out.requires_grad:
                def backward_start(grad):
                    self._start[(name, "bwd")] = self._now()
                out.register_hook(backward_start)
        return hook

    def _backward_stop(self, name):
        def hook(grad):
            t0 = self._start.pop((name, "bwd"), None)
            if t0 is not None:
                self.times[name]["bwd"].append(self._now() - t0)
        return hook

    def remove(self):
        for h in self._handles:
            h.remove()


def step_limit(model, example_input, threads, limits=None):
    """The step's napkin limit (seconds) and how it was counted: every convolution and linear layer's
    passes at max(flops / peak, bytes / bandwidth) -- fwd, bwd-filter, and bwd-data where the input
    gradient is computed -- plus every other leaf module's tensors (input and output forward, their
    gradients backward), the loss (8 bytes a logit) and the SGD update (20 bytes a parameter) at the
    bandwidth. `limits`: (flop/s, bytes/s, isa) measured before (else measured now)."""
    peak, bandwidth, isa = limits if limits is not None else _convlab.machine_limits(threads)
    passes = []
    fc_flops = [0.0]
    other_bytes = 0.0
    data_ids = {id(example_input)}

    def hook(module, args, out):
        nonlocal other_bytes
        x = args[0] if args else None
        if not isinstance(x, torch.Tensor) or not isinstance(out, torch.Tensor):
            return
        needs_dx = id(x) not in data_ids
        if isinstance(module, nn.Conv2d):
            n = x.shape[0]
            k, cg, r, s = module.weight.shape
            flops = 2.0 * n * k * out.shape[2] * out.shape[3] * cg * r * s
            nbytes = 4.0 * (x.numel() + module.weight.numel() + out.numel())
            passes.extend([(flops, nbytes)] * (3 if needs_dx else 2))
        elif isinstance(module, nn.Linear):
            flops = 2.0 * x.numel() / x.shape[-1] * module.in_features * module.out_features
            nbytes = 4.0 * (x.numel() + module.weight.numel() + out.numel())
            passes.extend([(flops, nbytes)] * (3 if needs_dx else 2))
            fc_flops[0] += flops * (3 if needs_dx else 2)
        elif not list(module.children()):
            other_bytes += 4.0 * 2 * (x.numel() + out.numel())

    handles = [m.register_forward_hook(hook) for m in model.modules()]
    try:
        with torch.no_grad():
            logits = model(example_input)
    finally:
        for h in handles:
            h.remove()
    other_bytes += 8.0 * logits.numel() + 20.0 * sum(p.numel() for p in model.parameters())
    seconds = sum(max(f / peak, b / bandwidth) for f, b in passes) + other_bytes / bandwidth
    compute = [f / peak for f, b in passes if f / peak >= b / bandwidth]
    memory = [b / bandwidth for f, b in passes if f / peak < b / bandwidth]
    return seconds, {"peak_flops": peak, "bandwidth_bytes": bandwidth, "isa": isa, "passes": len(passes),
                     "other_bytes": other_bytes, "conv_flops": sum(f for f, _ in passes) - fc_flops[0],
                     "fc_flops": fc_flops[0],
                     "compute_bound_seconds": sum(compute), "memory_bound_seconds": sum(memory),
                     "memory_bound_passes": len(memory)}


def layer_rows(timer, model):
    """Per convolution layer: median fwd and bwd seconds (hooks) and, for a patched layer, its own
    median per direction and the algorithms it ran."""
    rows = []
    mods = dict(model.named_modules())
    for name, t in timer.times.items():
        row = {"layer": name,
               "fwd_s": statistics.median(t["fwd"]) if t["fwd"] else 0.0,
               "bwd_s": statistics.median(t["bwd"]) if t["bwd"] else 0.0,
               "algos": {}, "own_s": {}, "fallback": ""}
        m = mods[name]
        shapes = m.convlab_shapes() if hasattr(m, "convlab_shapes") else []
        if hasattr(m, "convlab_fallback"):
            row["fallback"] = m.convlab_fallback
        for shape in shapes:
            row["problem"] = str(shape.problem)
            for d in DIRS:
                if d in shape.choices:
                    row["algos"][d] = shape.choices[d].algo
                elif d in shape.fallback:
                    row["algos"][d] = "pytorch"
                if shape.seconds[d]:
                    row["own_s"][d] = statistics.median(shape.seconds[d])
        rows.append(row)
    return rows
