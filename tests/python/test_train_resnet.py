"""A ResNet-18 trained for 10 steps under patch(policy="find") has losses within the derived fp32
bound of PyTorch's own run (convlab.torch.method.drift_bound: the measured control, the baseline
retrained from weights moved by 2^-22, times K * FLT_EPSILON / 2^-22)."""

import copy

import torch
import torch.nn.functional as F
import torchvision

import convlab.torch as ct
from convlab.torch import method


def train(model, batches, steps, seed):
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    losses = []
    for t in range(steps):
        x, y = batches[t % len(batches)]
        torch.manual_seed(seed + t)
        opt.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        losses.append(float(loss))
    return losses


def test_resnet18_ten_steps_patched_with_find_tracks_pytorch():
    torch.manual_seed(0)
    model = torchvision.models.resnet18(num_classes=10)
    g = torch.Generator().manual_seed(1)
    batches = [(torch.randn(4, 3, 64, 64, generator=g), torch.randint(0, 10, (4,), generator=g)) for _ in range(3)]
    base = train(copy.deepcopy(model), batches, 10, 7)
    control_model = copy.deepcopy(model)
    with torch.no_grad():
        for p in control_model.parameters():
            sign = torch.randint(0, 2, p.shape, generator=g) * 2 - 1
            p.mul_(1 + sign * method.CONTROL_DELTA)
    control = method.relative_diffs(train(control_model, batches, 10, 7), base)
    reduction = max(m.weight[0].numel() for m in model.modules() if isinstance(m, torch.nn.Conv2d))
    _, _, bounds = method.drift_bound(reduction, control)

    patched = copy.deepcopy(model)
    report = ct.patch(patched, policy="find")
    assert all(status == "patched" for _, status in report)
    tuned = ct.tune(patched, batches[0][0], policy="find")
    assert all(r.algo != "pytorch" for r in tuned.rows), [r for r in tuned.rows if r.algo == "pytorch"]
    mine = train(patched, batches, 10, 7)
    diffs = method.relative_diffs(mine, base)
    for t, (d, b) in enumerate(zip(diffs, bounds)):
        assert d <= b, f"step {t}: relative loss difference {d:.3g} over the bound {b:.3g} (control {control})"
