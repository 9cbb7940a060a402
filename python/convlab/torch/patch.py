"""Putting convlab's layers into a model, and tuning a model's convolutions."""

import collections

import torch
from torch import nn

from .. import _convlab
from .._convlab import Error
from .layer import DIRECTIONS, Conv2d, policy_with_cache


def check_policy(policy):
    """`policy` as convlab reads it (a fixed: algorithm by any name the CLI accepts, older ones
    included); Error (the CLI's one line) for a bad policy or an unknown algorithm."""
    return _convlab.check_policy(policy)


def _refuse_context(policy):
    head, sep, constraints = str(policy).partition(",")
    if head == "find-context":
        raise Error(f"'{policy}' re-times candidates inside training steps: patch with "
                    f"'find{sep}{constraints}', then call convlab.torch.find_in_context(model, step)")


def _convs(model):
    """(name, module) of every convolution layer: nn.Conv2d and convlab's own."""
    return [(name, m) for name, m in model.named_modules() if isinstance(m, nn.Conv2d)]


def patch(model, policy="find", cache=None):
    """Swaps every nn.Conv2d of `model` for convlab's layer, in place (the same parameters, buffers
    and hooks). `policy` as the CLI's: default, get, find, fixed:NAME, cache:FILE, with constraints
    ("find,tf32"); `cache`, a cache file the CLI's tune and train share. find-context needs training
    steps: patch with find, then `find_in_context(model, step)`.
    Returns [(layer name, "patched" | why not)]; a layer left alone keeps PyTorch's convolution."""
    _refuse_context(policy)
    policy = policy_with_cache(policy, cache)
    check_policy(policy)
    report = []
    for name, m in _convs(model):
        if isinstance(m, Conv2d):
            m._convlab_init(policy, name)
            report.append((name, "patched"))
        elif type(m) is nn.Conv2d:
            m.__class__ = Conv2d
            m._convlab_init(policy, name)
            report.append((name, "patched"))
        else:
            report.append((name, f"left as {type(m).__name__}: a subclass of nn.Conv2d with its own forward"))
    return report


def unpatch(model):
    """Gives every patched layer its nn.Conv2d forward back."""
    for _, m in _convs(model):
        if isinstance(m, Conv2d):
            m.__class__ = nn.Conv2d
            for attr in ("convlab_policy", "convlab_name", "convlab_timing", "convlab_fallback", "_convlab_entries"):
                m.__dict__.pop(attr, None)


def layer_inputs(model, example_input):
    """Runs `model(example_input)` once without gradients and returns, per convolution layer in the
    order it ran, (name, module, input tensor, whether its input gradient is needed)."""
    seen = collections.OrderedDict()
    inputs = example_input if isinstance(example_input, tuple) else (example_input,)
    data_ids = {id(t) for t in inputs if isinstance(t, torch.Tensor)}

    def hook(name):
        def record(module, args):
            if name not in seen:
                x = args[0]
                seen[name] = (name, module, x.detach(), id(x) not in data_ids)
        return record

    handles = [m.register_forward_pre_hook(hook(name)) for name, m in _convs(model)]
    training = model.training
    model.eval()  # shapes only: batch-norm statistics and dropout's generator stay as they were
    try:
        with torch.no_grad():
            model(*inputs)
    finally:
        model.train(training)
        for h in handles:
            h.remove()
    return list(seen.values())


TuneRow = collections.namedtuple("TuneRow", "layer problem dir algo why seconds")


class TuneReport:
    """What tune chose: one row per (layer, direction); algo "pytorch" where convlab cannot run it."""

    def __init__(self, policy, rows):
        self.policy = policy
        self.rows = rows

    def choices(self):
        """{(layer, dir): algo}"""
        return {(r.layer, r.dir): r.algo for r in self.rows}

    def to_csv(self):
        lines = ["layer,problem,dir,algo,why,seconds"]
        for r in self.rows:
            why = r.why.replace('"', "'")
            lines.append(f'{r.layer},{r.problem},{r.dir},{r.algo},"{why}",{r.seconds:.6f}')
        return "\n".join(lines) + "\n"

    def __str__(self):
        head = f"policy {self.policy}: {len(self.rows)} (layer, direction) pairs"
        width = max([len(r.layer) for r in self.rows] + [5])
        body = [f"  {r.layer:<{width}}  {r.dir:<10}  {r.algo:<26}  {r.why}" for r in self.rows]
        return "\n".join([head] + body)


def tune(model, example_input, policy="find", cache=None):
    """Finds each convolution layer's shapes with hooks (one forward pass on `example_input`) and
    chooses each (layer, direction)'s algorithm by `policy` (find measures, get predicts; `cache`, a
    file the CLI shares). Patched layers keep the choices, so training starts without choosing.
    Backward-data is left out for layers fed by the input itself (PyTorch does not need it)."""
    _refuse_context(policy)
    policy = policy_with_cache(policy, cache)
    check_policy(policy)
    rows = []
    for name, module, x, needs_dx in layer_inputs(model, example_input):
        dirs = [d for d in DIRECTIONS if needs_dx or d != "bwd-data"]
        probe = module if isinstance(module, Conv2d) else _detached_copy(module, policy, name)
        shape, why = probe.convlab_prepare(x, dirs)
        problem = str(shape.problem) if shape is not None else "-"
        for d in dirs:
            if shape is None or d in shape.fallback:
                rows.append(TuneRow(name, problem, d, "pytorch", why or shape.fallback[d], 0.0))
            else:
                c = shape.choices[d]
                rows.append(TuneRow(name, problem, d, c.algo, c.why, c.seconds))
    return TuneReport(policy, rows)


def _detached_copy(module, policy, name):
    """A convlab layer with `module`'s geometry and parameters (shared, not copied), to tune an
    unpatched model without changing it."""
    probe = Conv2d.__new__(Conv2d)
    nn.Module.__init__(probe)
    for attr in ("in_channels", "out_channels", "kernel_size", "stride", "padding", "dilation", "groups",
                 "padding_mode", "transposed", "output_padding", "_reversed_padding_repeated_twice"):
        setattr(probe, attr, getattr(module, attr))
    probe.weight = module.weight
    probe.bias = module.bias
    probe._convlab_init(policy, name)
    return probe
