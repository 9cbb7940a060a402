"""The training comparison on any PyTorch model: what each algorithm policy buys per step.

One model per policy from the same initial weights; PyTorch's own convolutions as baselines
("pytorch": its default, oneDNN on the CPU and cuDNN on a GPU, where PyTorch lets cuDNN compute in TF32
unless torch.backends.cudnn.allow_tf32 is off; "pytorch-fp32" on a GPU: cuDNN in fp32;
"pytorch-cudnn-benchmark" on a GPU; "pytorch-channels-last"); convlab's policies patched in (default, get, find, fixed:NAME, cache:FILE,
with constraints; find-context: find's choices re-ranked inside training steps, convlab.torch.find_in_context).
Rounds run every policy for the same steps in a balanced order (convlab train's
Williams square); each step is timed whole. Reported: each policy's median step with its 95 %
bootstrap interval, its speedup over "pytorch" paired by round, its losses against the fp32 drift
bound, the per-layer times that explain the difference, and the step's napkin limit.
"""

import copy
import os
import time

import torch
import torch.nn.functional as F
from torch import nn

from .. import _convlab
from .._convlab import Error
from . import method
from .attribution import LayerTimer, layer_rows, step_limit
from .context import find_in_context
from .layer import Conv2d
from .patch import check_policy, patch, tune
from .report import write_results

BASELINES_CPU = ("pytorch", "pytorch-channels-last")
BASELINES_CUDA = ("pytorch", "pytorch-fp32", "pytorch-cudnn-benchmark", "pytorch-channels-last")


def resolve_model(model, classes):
    """An nn.Module from a module, a callable returning one, or a torchvision model name."""
    if isinstance(model, nn.Module):
        return model
    if isinstance(model, str):
        import torchvision

        try:
            return torchvision.models.get_model(model, weights=None, num_classes=classes or 1000)
        except ValueError:
            names = ", ".join(sorted(torchvision.models.list_models(torchvision.models))[:12])
            raise Error(f"unknown torchvision model '{model}' (e.g. {names}, ...)") from None
    if callable(model):
        m = model()
        if not isinstance(m, nn.Module):
            raise Error(f"the model factory returned {type(m).__name__}, not an nn.Module")
        return m
    raise Error(f"model must be an nn.Module, a factory or a torchvision name, got {type(model).__name__}")


class Variant:
    """One policy's model, optimizer, losses and step times."""

    def __init__(self, name, model, lr, momentum):
        self.name = name
        self.model = model
        self.opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=momentum)
        self.losses = []
        self.rounds = []  # per timed round: its step times
        self.choose_seconds = 0.0
        self.patch_report = []
        self.tune_rows = []
        self.context = None  # find-context: what find_in_context measured
        self.layers = []
        self.channels_last = name == "pytorch-channels-last"
        self.cudnn_benchmark = name == "pytorch-cudnn-benchmark"
        self.conv_math = "fp32"  # what its convolutions compute in (conv_math())
        self.allow_tf32 = False  # cuDNN's TF32 for its PyTorch convolutions (on a GPU: conv_math == "tf32")


def _check_policies(policies, baselines):
    names = list(baselines) + list(policies)
    if len(set(names)) != len(names):
        raise Error(f"a policy is named twice in {names}")
    for p in policies:
        if p.startswith("pytorch"):
            raise Error(f"'{p}' is a baseline, not a convlab policy (baselines=...)")
        check_policy(p)
    for b in baselines:
        if b not in BASELINES_CUDA:
            raise Error(f"unknown baseline '{b}' ({', '.join(BASELINES_CUDA)})")
    if "pytorch" not in baselines:
        raise Error("the baselines must include 'pytorch' (speedups are read against it)")


def _batches(batch, image_size, classes, steps, seed, device):
    g = torch.Generator().manual_seed(seed)
    out = []
    for _ in range(steps):
        x = torch.randn(batch, 3, image_size, image_size, generator=g)
        y = torch.randint(0, classes, (batch,), generator=g)
        out.append((x.to(device), y.to(device)))
    return out


def _step(v, batches, seed, device):
    """One training step of variant v on its next batch; returns its seconds."""
    t = len(v.losses)
    x, y = batches[t % len(batches)]
    if v.channels_last:
        x = x.contiguous(memory_format=torch.channels_last)
    torch.manual_seed(seed * 100003 + t)  # dropout draws the same masks in every policy
    if device == "cuda":
        torch.backends.cudnn.benchmark = v.cudnn_benchmark
        torch.backends.cudnn.allow_tf32 = v.allow_tf32
        torch.cuda.synchronize()
    t0 = time.perf_counter()
    v.opt.zero_grad(set_to_none=True)
    loss = F.cross_entropy(v.model(x), y)
    loss.backward()
    v.opt.step()
    if device == "cuda":
        torch.cuda.synchronize()
    seconds = time.perf_counter() - t0
    v.losses.append(float(loss.detach()))
    return seconds


def conv_math(name, device, allow_tf32):
    """What a baseline's or policy's convolutions compute in: "tf32" where PyTorch lets cuDNN use
    the tensor cores (its default on a GPU) or a convlab policy allows them (",tf32"), else "fp32"."""
    if device != "cuda":
        return "fp32"
    if name.startswith("pytorch"):
        return "tf32" if allow_tf32 and name != "pytorch-fp32" else "fp32"
    return "tf32" if "tf32" in name.split(",")[1:] else "fp32"


def _build(model, policies, baselines, cache, batches, lr, momentum, log, device="cpu", allow_tf32=True,
           seed=1, context=(1.5, 3)):
    example = batches[0][0]
    variants = []
    for name in list(baselines) + list(policies):
        m = copy.deepcopy(model)
        v = Variant(name, m, lr, momentum)
        v.conv_math = conv_math(name, device, allow_tf32)
        # cuDNN's TF32 as the row says: a convlab policy's layers that fall back to PyTorch compute as it does.
        v.allow_tf32 = v.conv_math == "tf32"
        if v.channels_last:
            m.to(memory_format=torch.channels_last)
        if not name.startswith("pytorch"):
            t0 = time.perf_counter()
            head, sep, constraints = name.partition(",")
            file = cache if head in ("find", "find-context", "get") else None  # the others measure nothing
            chosen = "find" + sep + constraints if head == "find-context" else name  # the isolated find first
            v.patch_report = patch(m, policy=chosen, cache=file)
            v.tune_rows = tune(m, example, policy=chosen, cache=file).rows
            v.choose_seconds = time.perf_counter() - t0
            log(f"  {name}: chose {len(v.tune_rows)} (layer, direction) pairs in {v.choose_seconds:.1f} s")
            if head == "find-context":
                factor, steps = context
                v.context = find_in_context(m, lambda: _step(v, batches, seed, device), factor=factor, steps=steps,
                                            optimizer=v.opt, log=lambda line: log("  " + line))
                v.losses.clear()  # its steps trained the model; the weights and the optimizer were given back
                v.tune_rows = tune(m, example, policy=chosen, cache=file).rows  # the choices as they now stand
                differ = sum(not p["agree"] for p in v.context["pairs"])
                log(f"  {name}: {differ} of {len(v.context['pairs'])} pairs re-chosen inside the step, "
                    f"{v.context['steps']} steps, {v.context['seconds']:.1f} s")
        variants.append(v)
    return variants


def _control(model, rounds_losses, batches, seed, device, lr, momentum, allow_tf32=True):
    """The drift control: the baseline again from its initial weights moved by 2^-22 relative
    (deterministic signs), trained on the same batches; its relative loss difference per step."""
    m = copy.deepcopy(model)
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for p in m.parameters():
            sign = torch.randint(0, 2, p.shape, generator=g).to(p.device) * 2 - 1
            p.mul_(1 + sign * method.CONTROL_DELTA)
    v = Variant("control", m, lr, momentum)
    v.allow_tf32 = allow_tf32  # as the baseline "pytorch" computes
    for _ in range(len(rounds_losses)):
        _step(v, batches, seed, device)
    return method.relative_diffs(v.losses, rounds_losses)


def _reduction(model):
    k = 0
    for m in model.modules():
        if isinstance(m, nn.Conv2d):
            cg, r, s = m.weight.shape[1:]
            k = max(k, cg * r * s)
    return k


def compare(model, *, batch=16, image_size=224, classes=None, policies=("default", "get", "find"), baselines=None,
            rounds=5, steps=2, warmup_rounds=1, attribution_steps=2, lr=0.01, momentum=0.9, seed=1, device="cpu",
            cache=None, out=None, log=print, context_factor=1.5, context_steps=3):
    """Trains one copy of `model` per policy and baseline and compares their steps (see the module's
    doc). `model`: an nn.Module, a factory, or a torchvision name ("resnet50"). `out`: a results
    folder written whole at the end (compare.json, compare.csv, layers.csv, compare.md,
    report.html). `context_factor` / `context_steps`: find-context's budget (candidates within that
    factor of the isolated best, timed steps per candidate). Returns the results as a dict (the JSON's
    content)."""
    if device not in ("cpu", "cuda"):
        raise Error(f"device must be cpu or cuda, got '{device}'")
    if device == "cuda" and not torch.cuda.is_available():
        raise Error("device cuda: PyTorch sees no CUDA device here")
    baselines = tuple(baselines) if baselines is not None else (BASELINES_CUDA if device == "cuda" else BASELINES_CPU)
    policies = tuple(policies)
    _check_policies(policies, baselines)
    for what, value in (("batch", batch), ("image_size", image_size), ("rounds", rounds), ("steps", steps),
                        ("attribution_steps", attribution_steps)):
        if not isinstance(value, int) or value < 1:
            raise Error(f"{what} must be a positive integer, got {value!r}")
    if not isinstance(context_steps, int) or context_steps < 1 or not context_factor >= 1:
        raise Error(f"find-context needs context_steps >= 1 and context_factor >= 1, got {context_steps!r} and "
                    f"{context_factor!r}")
    if out is not None:
        parent = os.path.dirname(os.path.abspath(out)) or "."
        if not os.path.isdir(parent) or not os.access(parent, os.W_OK):
            raise Error(f"cannot write the results folder '{out}': '{parent}' is not a writable folder")
    torch.manual_seed(seed)
    model_arg = model
    model = resolve_model(model, classes).to(device).train()
    threads = torch.get_num_threads()
    with torch.no_grad():
        classes = classes or int(model(torch.randn(1, 3, image_size, image_size, device=device)).shape[-1])
    batches = _batches(batch, image_size, classes, steps, seed, device)
    limits = _convlab.machine_limits(threads) if device == "cpu" else None
    name = model_arg if isinstance(model_arg, str) else type(model).__name__
    log(f"compare: {name}, batch {batch}, {image_size}x{image_size}, {classes} classes, {threads} threads, {device}")
    # The caller's cuDNN settings, restored at the end (the rounds switch them per variant).
    user_cudnn = (torch.backends.cudnn.benchmark, torch.backends.cudnn.allow_tf32)
    try:
        doc = _compare(model, name, policies, baselines, cache, batches, dict(
            batch=batch, image_size=image_size, classes=classes, rounds=rounds, steps=steps,
            warmup_rounds=warmup_rounds, attribution_steps=attribution_steps, lr=lr, momentum=momentum, seed=seed,
            device=device, threads=threads, limits=limits, log=log, allow_tf32=user_cudnn[1],
            context=(context_factor, context_steps)))
    finally:
        torch.backends.cudnn.benchmark, torch.backends.cudnn.allow_tf32 = user_cudnn
    if out is not None:
        write_results(out, doc)
    return doc


def _compare(model, name, policies, baselines, cache, batches, c):
    """compare()'s rounds, control, attribution and summary on checked arguments `c`."""
    device, seed, lr, momentum, log = c["device"], c["seed"], c["lr"], c["momentum"], c["log"]
    variants = _build(model, policies, baselines, cache, batches, lr, momentum, log, device, c["allow_tf32"], seed,
                      c["context"])
    result = _run_rounds(variants, batches, c["rounds"], c["steps"], c["warmup_rounds"], seed, device, log)
    base = variants[0]
    control = _control(model, base.losses, batches, seed, device, lr, momentum, c["allow_tf32"])
    bound0, sensitivity, bounds = method.drift_bound(_reduction(model), control)
    attribution = "hooks around every convolution layer, one pass per policy after the rounds"
    try:
        _attribute(variants, batches, c["attribution_steps"], seed, device)
    except (RuntimeError, Error) as e:  # the timed rounds stand without it
        attribution = f"failed: {str(e).splitlines()[0]}"
        log(f"  attribution {attribution}")
    limit = (step_limit(model, batches[0][0], c["threads"], c["limits"]) if device == "cpu"
             else (0.0, {"skipped": "cpu only"}))
    summary = _summarise(variants, bounds, limit[0])
    return {"command": "compare", "model": name, "batch": c["batch"], "image_size": c["image_size"],
           "classes": c["classes"], "threads": c["threads"], "device": device, "cpu_isa": _convlab.cpu_isa(),
           "torch": torch.__version__, "rounds": c["rounds"], "steps": c["steps"],
           "warmup_rounds": c["warmup_rounds"], "order": result, "sgd": {"lr": lr, "momentum": momentum}, "seed": seed,
           "drift": {"bound0": bound0, "sensitivity": sensitivity, "reduction": _reduction(model), "control": control,
                     "bounds": bounds},
           "limit_s": limit[0], "limit": limit[1], "attribution": attribution, "policies": summary}


def _run_rounds(variants, batches, rounds, steps, warmup_rounds, seed, device, log):
    orders = []
    for r in range(warmup_rounds + rounds):
        order = method.round_order(len(variants), r)
        orders.append([variants[i].name for i in order])
        for i in order:
            v = variants[i]
            times = [_step(v, batches, seed, device) for _ in range(steps)]
            if r >= warmup_rounds:
                v.rounds.append(times)
        if r >= warmup_rounds:
            log(f"  round {r - warmup_rounds + 1}/{rounds}: " +
                ", ".join(f"{v.name} {min(v.rounds[-1]) * 1e3:.1f} ms" for v in variants))
    return orders


def _attribute(variants, batches, attribution_steps, seed, device):
    for v in variants:
        timer = LayerTimer(v.model, device)
        for m in v.model.modules():
            if isinstance(m, Conv2d):
                m.convlab_timing = True
        try:
            for _ in range(attribution_steps):
                _step(v, batches, seed, device)
        finally:
            timer.remove()
            for m in v.model.modules():
                if isinstance(m, Conv2d):
                    m.convlab_timing = False
        v.layers = layer_rows(timer, v.model)


def _workspace_bytes(model):
    """The workspace convlab's plans in a patched model hold (each plan owns its own)."""
    return sum(p.workspace_bytes for m in model.modules() if isinstance(m, Conv2d)
               for shape in m.convlab_shapes() for p in shape.plans.values() if p is not None)


def _summarise(variants, bounds, limit_s):
    base = variants[0]
    base_meds = [method.median_ci(r)[0] for r in base.rounds]
    fp32 = next((v for v in variants if v.name == "pytorch-fp32"), None)
    fp32_meds = [method.median_ci(r)[0] for r in fp32.rounds] if fp32 else None
    out = []
    for v in variants:
        steps = [t for r in v.rounds for t in r]
        med, ci = method.median_ci(steps)
        meds = [method.median_ci(r)[0] for r in v.rounds]
        speedup, sci = method.paired_ratio_ci(base_meds, meds)
        n = min(len(v.losses), len(base.losses), len(bounds))
        diffs = method.relative_diffs(v.losses[:n], base.losses[:n])
        exceeds = next((t for t in range(n) if diffs[t] > bounds[t]), -1)
        out.append({
            "policy": v.name, "step_s_median": med, "step_s_ci": list(ci), "round_medians_s": meds,
            "steps_s": steps,
            "speedup_vs_pytorch": speedup, "speedup_ci": list(sci),
            "verdict": "baseline" if v is base else method.verdict(sci),
            "x_limit": med / limit_s if limit_s else None, "choose_s": v.choose_seconds,
            "losses": v.losses, "loss_rel_diffs": diffs, "loss_agrees": exceeds < 0, "loss_exceeds_at": exceeds,
            "layers": v.layers, "patch": [list(r) for r in v.patch_report],
            "workspace_bytes": _workspace_bytes(v.model) if not v.name.startswith("pytorch") else None,
            "choices": [r._asdict() for r in v.tune_rows], "conv_math": v.conv_math, "in_context": v.context})
        if fp32_meds:  # against PyTorch's cuDNN in fp32, paired by round as against "pytorch"
            s32, ci32 = method.paired_ratio_ci(fp32_meds, meds)
            out[-1].update({"speedup_vs_pytorch_fp32": s32, "speedup_fp32_ci": list(ci32)})
    return out
