"""The convlab convolution layer: nn.Conv2d's parameters, convlab's algorithms.

A patched layer keeps its class's parameters and hooks; only its forward changes. Per input shape it
holds one problem and, per direction, the policy's algorithm and a plan (chosen and planned on first
use). Where convlab cannot run the layer (a padding mode other than zeros, another dtype, a device
convlab was not built for, a problem no algorithm supports), it runs PyTorch's own convolution and
says why in `convlab_fallback`.
"""

import time

import torch
from torch import nn

from .. import api
from .._convlab import Error

DIRECTIONS = api.DIRECTIONS


def policy_with_cache(policy, cache):
    """The policy string that `policy` with a cache file means: find -> cache:FILE (find on a miss,
    then stored), get -> get:FILE (calibrated from it); constraints after ',' kept."""
    if cache is None:
        return policy
    head, sep, constraints = policy.partition(",")
    if head in ("find", "cache"):
        head = f"cache:{cache}"
    elif head == "get":
        head = f"get:{cache}"
    else:
        raise Error(f"a cache file goes with the policies find, cache and get, not '{head}'")
    return head + sep + constraints


class LayerShape:
    """One input shape of a layer: its problem and, per direction, the chosen algorithm and its plan,
    or why convlab cannot run that direction (then PyTorch's convolution does)."""

    def __init__(self, problem, device, policy):
        self.problem = problem
        self.dst_shape = problem.dst_shape
        self.device = device
        self.policy = policy
        self.choices = {}  # dir -> api.Choice
        self.plans = {}  # dir -> Plan
        self.fallback = {}  # dir -> why PyTorch's convolution runs it
        self.seconds = {d: [] for d in DIRECTIONS}  # per-call times while timing is on

    def plan(self, dir):
        """The plan for `dir`, chosen and planned on first use; None (and fallback[dir] says why)
        when convlab cannot run it."""
        p = self.plans.get(dir)
        if p is None and dir not in self.fallback:
            try:
                choice = self.choices.get(dir)
                if choice is None:
                    choice = api.choose(self.problem, dir, self.policy, self.device, torch.get_num_threads())
                    self.choices[dir] = choice
                p = api.plan(choice.algo, self.problem, dir, self.device, torch.get_num_threads())
                self.plans[dir] = p
            except Error as e:
                self.fallback[dir] = str(e)
        return p

    def run(self, dir, src, wei, dst, timing):
        """Runs `dir` on convlab's plan; False when convlab cannot (the caller runs PyTorch's)."""
        p = self.plan(dir)
        if p is None:
            return False
        # The layer checked the buffers (float32, contiguous, this problem's shapes, this device):
        # raw pointers spare DLPack's per-tensor import.
        stream = torch.cuda.current_stream(src.device).cuda_stream if self.device == "cuda" else 0
        ptrs = (src.data_ptr(), wei.data_ptr(), dst.data_ptr(), stream)
        if not timing:
            p.run_pointers(*ptrs)
            return True
        if self.device == "cuda":
            torch.cuda.synchronize(src.device)
        t0 = time.perf_counter()
        p.run_pointers(*ptrs)
        if self.device == "cuda":
            torch.cuda.synchronize(src.device)
        self.seconds[dir].append(time.perf_counter() - t0)
        return True


def _forward(x, w, bias, shape, timing):
    y = x.new_empty(shape.dst_shape)
    shape.run("fwd", x, w, y, timing)  # the layer planned fwd before calling: it runs
    if bias is not None:
        y += bias.view(1, -1, 1, 1)
    return y


class _ConvFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, weight, bias, state):
        shape, timing = state
        x = x.contiguous()
        w = weight.contiguous()
        y = _forward(x, w, bias, shape, timing)
        ctx.save_for_backward(x, w)
        ctx.state = state
        return y

    @staticmethod
    def backward(ctx, dy):
        x, w = ctx.saved_tensors
        shape, timing = ctx.state
        dy = dy.contiguous()
        dx = dw = db = None
        p = shape.problem
        geometry = dict(stride=p.stride, padding=p.pad, dilation=p.dilation, groups=p.groups)
        if ctx.needs_input_grad[0]:
            dx = torch.empty_like(x)
            if not shape.run("bwd-data", dx, w, dy, timing):
                dx = torch.nn.grad.conv2d_input(x.shape, w, dy, **geometry)
        if ctx.needs_input_grad[1]:
            dw = torch.empty_like(w)
            if not shape.run("bwd-filter", x, dw, dy, timing):
                dw = torch.nn.grad.conv2d_weight(x, w.shape, dy, **geometry)
        if ctx.needs_input_grad[2]:
            db = dy.sum(dim=(0, 2, 3))
        return dx, dw, db, None


def _padding_pair(layer):
    """The layer's padding as (pad_h, pad_w), or a reason convlab cannot take it."""
    pad = layer.padding
    if isinstance(pad, str):
        if pad == "valid":
            return (0, 0), ""
        total = [d * (k - 1) for d, k in zip(layer.dilation, layer.kernel_size)]
        if any(t % 2 for t in total):
            return None, "padding='same' with an even filter extent pads unequally on the two sides"
        return tuple(t // 2 for t in total), ""
    return tuple(pad), ""


class Conv2d(nn.Conv2d):
    """nn.Conv2d running convlab's chosen algorithm per (input shape, direction).

    Build one as nn.Conv2d (same arguments, plus policy=) or patch an existing model (`patch`).
    """

    def __init__(self, *args, policy="find", **kwargs):
        super().__init__(*args, **kwargs)
        self._convlab_init(policy, "")

    def _convlab_init(self, policy, name):
        self.convlab_policy = policy
        self.convlab_name = name
        self.convlab_timing = False
        self.convlab_fallback = ""  # why PyTorch's convolution ran the last call ("" when convlab's did)
        # (input shape, dtypes, device) -> (LayerShape, "") or (None, why PyTorch's convolution runs it)
        self._convlab_entries = {}

    def convlab_shapes(self):
        """The LayerShapes convlab runs (one per input shape seen)."""
        return [shape for shape, _ in self._convlab_entries.values() if shape is not None]

    def convlab_unsupported(self, x):
        """Why convlab cannot run this layer on `x` ("" when it can)."""
        if self.padding_mode != "zeros":
            return f"padding_mode='{self.padding_mode}' (convlab pads with zeros only)"
        if x.dtype != torch.float32 or self.weight.dtype != torch.float32:
            return f"dtype {x.dtype if x.dtype != torch.float32 else self.weight.dtype} (convlab runs float32)"
        if x.dim() != 4:
            return f"a {x.dim()}-D input (convlab runs batched NCHW, 4-D)"
        if x.device.type not in ("cpu", "cuda") or self.weight.device != x.device:
            return f"a {x.device.type} tensor (convlab runs CPU and CUDA tensors, the weights on the same device)"
        _, why = _padding_pair(self)
        return why

    def _convlab_entry(self, x):
        w = self.weight
        key = (x.shape, x.dtype, x.is_cuda, w.dtype, w.is_cuda)
        entry = self._convlab_entries.get(key)
        if entry is None:
            why = self.convlab_unsupported(x)
            shape = None
            if not why:
                pad, _ = _padding_pair(self)
                problem = api.problem(tuple(x.shape), tuple(self.weight.shape), stride=tuple(self.stride),
                                      padding=pad, dilation=tuple(self.dilation), groups=self.groups,
                                      name=self.convlab_name)
                shape = LayerShape(problem, x.device.type, self.convlab_policy)
                if shape.plan("fwd") is None:
                    why = shape.fallback["fwd"]
            entry = (shape, why)
            self._convlab_entries[key] = entry
        return entry

    def convlab_prepare(self, x, directions=DIRECTIONS):
        """Chooses and plans the algorithms for input `x` (what the first calls would do). Returns the
        LayerShape, or None with why PyTorch's convolution runs the layer instead."""
        shape, why = self._convlab_entry(x)
        if shape is None:
            return None, why
        for d in directions:
            shape.plan(d)
        if "fwd" in shape.fallback:
            return None, shape.fallback["fwd"]
        return shape, ""

    def forward(self, x):
        w = self.weight
        entry = self._convlab_entries.get((x.shape, x.dtype, x.is_cuda, w.dtype, w.is_cuda))
        shape, why = entry if entry is not None else self._convlab_entry(x)
        self.convlab_fallback = why
        if why:
            return self._conv_forward(x, w, self.bias)
        b = self.bias
        if torch.is_grad_enabled() and (x.requires_grad or w.requires_grad or (b is not None and b.requires_grad)):
            return _ConvFunction.apply(x, w, b, (shape, self.convlab_timing))
        return _forward(x.contiguous(), w.contiguous(), b, shape, self.convlab_timing)  # nothing to differentiate

    def extra_repr(self):
        return super().extra_repr() + f", policy={self.convlab_policy!r}"
