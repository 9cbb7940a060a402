"""convlab.torch: patched layers against PyTorch's own convolution (output and both gradients, in
float64, within each algorithm's declared bound) over the tester's sweep; fallbacks that say why;
tune's choices."""

import copy

import pytest
import torch
from torch import nn

import convlab
import convlab.torch as ct
from convlab.torch.patch import check_policy
from conftest import as_conv2d_args, assert_within, reference

CPU_ALGOS = [a["name"] for a in convlab.algos(device="cpu", available=True) if not a["oracle"]]


def _layer_for(p, bias):
    g = as_conv2d_args(p)
    return nn.Conv2d(p.c, p.k, (p.r, p.s), bias=bias, **g)


def _check_layer(policy, p, bias, seed):
    torch.manual_seed(seed)
    layer = _layer_for(p, bias)
    ct.patch(layer, policy=policy)
    x = torch.empty(p.src_shape).uniform_(-1, 1).requires_grad_()
    y = layer(x)
    assert layer.convlab_fallback == "", layer.convlab_fallback
    shape = layer.convlab_shapes()[0]
    dy = torch.empty(y.shape).uniform_(-1, 1)
    y.backward(dy)
    w = layer.weight.detach()
    fwd = y.detach() - (layer.bias.detach().view(1, -1, 1, 1) if bias else 0)
    for dir, got in (("fwd", fwd), ("bwd-data", x.grad), ("bwd-filter", layer.weight.grad)):
        ref, mag = reference(dir, p, x.detach(), w, dy)
        assert_within(shape.choices[dir].algo, dir, p, got, ref, mag)
    if bias:
        torch.testing.assert_close(layer.bias.grad, dy.sum((0, 2, 3)))
    return {d: c.algo for d, c in shape.choices.items()}


@pytest.mark.parametrize("algo", CPU_ALGOS)
def test_patched_layer_matches_pytorch_over_the_sweep(algo, sweep):
    ran = 0
    for i, (label, p) in enumerate(sweep):
        if as_conv2d_args(p) is None:
            continue
        if any(convlab.supports(algo, p, d) for d in convlab.api.DIRECTIONS):
            continue
        chosen = _check_layer(f"fixed:{algo}", p, bias=i % 2 == 0, seed=i)
        assert set(chosen.values()) == {algo}, f"{label}: {chosen}"
        ran += 1
    assert ran > 0, f"{algo} supports no sweep problem in all three directions"


def test_find_patched_layers_match_pytorch_over_the_sweep(sweep):
    for i, (label, p) in enumerate(sweep):
        if as_conv2d_args(p) is not None:
            _check_layer("find", p, bias=True, seed=i)


def test_patch_keeps_parameters_and_pytorch_where_convlab_cannot():
    model = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.Conv2d(8, 8, 3, padding=1, padding_mode="reflect"),
                          nn.Conv2d(8, 4, 2, padding="same"), nn.Conv2d(4, 4, 3, padding="same"))
    params = [id(q) for q in model.parameters()]
    ref = copy.deepcopy(model)
    report = dict(ct.patch(model, policy="default"))
    assert [id(q) for q in model.parameters()] == params
    assert all(v == "patched" for v in report.values())
    x = torch.randn(2, 3, 9, 9)
    torch.testing.assert_close(model(x), ref(x), rtol=1e-4, atol=1e-5)
    assert model[0].convlab_fallback == ""
    assert "padding_mode='reflect'" in model[2].convlab_fallback
    assert "padding='same' with an even filter" in model[3].convlab_fallback
    assert model[4].convlab_fallback == ""
    double = nn.Conv2d(3, 4, 3).double()
    ct.patch(double)
    double(torch.randn(1, 3, 5, 5, dtype=torch.float64))
    assert "float64" in double.convlab_fallback
    ct.unpatch(model)
    assert type(model[0]) is nn.Conv2d and not hasattr(model[0], "convlab_policy")


def test_subclass_with_its_own_forward_is_left_alone():
    class Mine(nn.Conv2d):
        def forward(self, x):
            return super().forward(x) * 2

    model = nn.Sequential(Mine(3, 4, 3), nn.Conv2d(4, 4, 1))
    report = dict(ct.patch(model))
    assert report["0"].startswith("left as Mine") and report["1"] == "patched"


def test_bad_policy_is_refused_before_any_layer_changes():
    model = nn.Sequential(nn.Conv2d(3, 4, 3))
    for bad, msg in (("fastest", "unknown policy"), ("fixed:cpu.nosuch", "unknown algorithm 'cpu.nosuch'")):
        with pytest.raises(convlab.Error, match=msg):
            ct.patch(model, policy=bad)
        assert type(model[0]) is nn.Conv2d
    with pytest.raises(convlab.Error, match="cache file goes with"):
        ct.patch(model, policy="default", cache="/tmp/x.jsonl")


def test_tune_chooses_per_layer_and_direction_and_skips_the_first_input_gradient(tmp_path):
    model = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.Conv2d(8, 8, 3, stride=2, padding=1, groups=8),
                          nn.Conv2d(8, 4, 1), nn.Conv2d(4, 4, 3, padding=1, padding_mode="circular"))
    cache = tmp_path / "c.jsonl"
    report = ct.tune(model, torch.randn(2, 3, 12, 12), policy="find", cache=str(cache))
    rows = {(r.layer, r.dir): r for r in report.rows}
    assert ("0", "bwd-data") not in rows and ("0", "fwd") in rows and ("2", "bwd-data") in rows
    assert rows[("4", "fwd")].algo == "pytorch" and "circular" in rows[("4", "fwd")].why
    assert all(r.algo in CPU_ALGOS for r in report.rows if r.layer != "4")
    assert cache.exists() and cache.stat().st_size > 0
    assert "layer,problem,dir,algo" in report.to_csv() and "policy cache:" in str(report)
    # The model itself is unchanged by tuning it.
    assert all(type(m) is nn.Conv2d for m in model if isinstance(m, nn.Conv2d))
    # A patched model keeps the choices: training starts without choosing again.
    ct.patch(model, policy="find", cache=str(cache))
    ct.tune(model, torch.randn(2, 3, 12, 12), policy="find", cache=str(cache))
    assert len(model[2].convlab_shapes()) == 1
    assert set(model[2].convlab_shapes()[0].plans) == {"fwd", "bwd-data", "bwd-filter"}


def test_module_built_directly_and_no_input_gradient():
    layer = ct.Conv2d(3, 5, 3, padding=1, policy="fixed:cpu.winograd_f4x3")
    x = torch.randn(2, 3, 10, 10)
    y = layer(x)
    y.sum().backward()
    shape = layer.convlab_shapes()[0]
    assert set(shape.plans) == {"fwd", "bwd-filter"}  # x needs no gradient: bwd-data never ran
    assert shape.choices["fwd"].algo == "cpu.winograd_f4x3"
    assert "policy='fixed:cpu.winograd_f4x3'" in repr(layer)


def test_fixed_policy_takes_an_algorithm_by_its_older_name():
    model = nn.Sequential(nn.Conv2d(3, 4, 3))
    assert check_policy("fixed:cpu.onednn_direct") == "fixed:cpu.onednn_direct"
    assert dict(ct.patch(model, policy="fixed:cpu.onednn_direct"))["0"] == "patched"
    model(torch.randn(2, 3, 8, 8))
    assert model[0].convlab_shapes()[0].choices["fwd"].algo == "onednn.direct"
