"""find-context through the bridge: find's choices re-ranked inside training steps, convlab train's
ranking rule (the same C++), the model given back as it was, the results in convlab train's schema."""

import copy
import json

import pytest
import torch
import torch.nn.functional as F
from torch import nn

import convlab
from convlab import _convlab
from convlab.torch import compare, find_in_context, patch, tune


def small_model():
    return nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(), nn.Conv2d(8, 8, 3, padding=1),
                         nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(8, 4))


def test_settle_uses_the_trainers_rule():
    # b is faster in every round: the rankings differ, b first, the isolated winner's cost above 1.
    order, agree, tie, cost, lo, hi = _convlab.settle_context_pair(
        [("cpu.a", 1e-3, [2.0, 2.1, 2.2, 2.0, 2.1]), ("cpu.b", 1.1e-3, [1.0, 1.1, 1.0, 1.05, 1.0])])
    assert [o[0] for o in order] == ["cpu.b", "cpu.a"] and not agree and not tie
    assert cost == pytest.approx(2.1 / 1.0) and 1 < lo <= cost <= hi
    # Overlapping samples, b's median a little smaller: a tie, the isolated winner kept.
    order, agree, tie, *_ = _convlab.settle_context_pair(
        [("cpu.a", 1e-3, [1.0, 1.3, 0.9, 1.2, 1.0]), ("cpu.b", 1.1e-3, [1.1, 0.9, 1.25, 0.95, 0.97])])
    assert order[0][0] == "cpu.b" and agree and tie
    for bad in ([], [("cpu.a", 1e-3, [1.0, 2.0]), ("cpu.b", 1e-3, [1.0])], [("cpu.a", 1e-3, [])]):
        with pytest.raises(convlab.Error):
            _convlab.settle_context_pair(bad)


def test_patch_and_tune_refuse_find_context_with_the_way_to_it():
    for call in (lambda m: patch(m, policy="find-context,deterministic"),
                 lambda m: tune(m, torch.randn(2, 3, 8, 8), policy="find-context")):
        with pytest.raises(convlab.Error, match=r"find_in_context\(model, step\)"):
            call(small_model())


def test_find_in_context_gives_the_model_back_and_ranks_every_pair_run():
    torch.manual_seed(3)
    model = small_model()
    patch(model, policy="find")
    x, y = torch.randn(4, 3, 10, 10), torch.randint(0, 4, (4,))
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)

    def step():
        opt.zero_grad()
        F.cross_entropy(model(x), y).backward()
        opt.step()

    step()  # momentum buffers exist: their state must come back too
    before = copy.deepcopy(model.state_dict())
    opt_before = copy.deepcopy(opt.state_dict())
    found = {}
    for name, m in model.named_modules():
        if isinstance(m, convlab.torch.Conv2d):
            (shape,) = m.convlab_shapes()
            found[name] = {d: c.algo for d, c in shape.choices.items()}
    lines = []
    res = find_in_context(model, step, factor=1.5, steps=2, optimizer=opt, log=lines.append)
    for k, v in model.state_dict().items():
        assert torch.equal(v, before[k]), k
    for k, v in opt.state_dict()["state"].items():
        assert torch.equal(v["momentum_buffer"], opt_before["state"][k]["momentum_buffer"])
    # The first layer is fed by the data: no input gradient, no bwd-data pair.
    assert [(p["layer"], p["direction"]) for p in res["pairs"]] == [
        ("0", "fwd"), ("0", "bwd-filter"), ("3", "fwd"), ("3", "bwd-data"), ("3", "bwd-filter")]
    assert res["factor"] == 1.5 and res["steps_per_candidate"] == 2 and res["seconds"] > 0
    many = sum(len(p["isolated"]) for p in res["pairs"] if len(p["isolated"]) > 1)
    assert res["steps"] == 2 + (2 if any(len(p["isolated"]) == 1 for p in res["pairs"]) else 0) + 5 * many
    for p in res["pairs"]:
        iso = [c["algo"] for c in p["isolated"]]
        assert iso[0] == found[p["layer"]][p["direction"]]  # the isolated winner first
        assert sorted(iso) == sorted(c["algo"] for c in p["in_context"])
        assert all(c["ms_ci"][0] <= c["ms"] <= c["ms_ci"][1] and c["ms"] > 0 for c in p["in_context"])
        meds = [c["ms"] for c in p["in_context"]]
        assert meds == sorted(meds)
        m = dict(model.named_modules())[p["layer"]]
        (shape,) = m.convlab_shapes()
        now = shape.choices[p["direction"]].algo
        assert now == (iso[0] if p["agree"] else p["in_context"][0]["algo"])
        assert shape.plans[p["direction"]].algo == now
        if len(iso) > 1:
            assert any(f"{p['layer']} {p['direction']}: alone {iso[0]}" in line for line in lines)
    # The timers are off again and hold nothing.
    for m in model.modules():
        if isinstance(m, convlab.torch.Conv2d):
            assert not m.convlab_timing
            assert all(not s for shape in m.convlab_shapes() for s in shape.seconds.values())


def test_find_in_context_refuses_what_it_cannot_run():
    with pytest.raises(convlab.Error, match="no patched convolution"):
        find_in_context(small_model(), lambda: None)
    with pytest.raises(convlab.Error, match="at least one step"):
        find_in_context(small_model(), lambda: None, steps=0)
    model = small_model()
    patch(model, policy="get")
    x = torch.randn(2, 3, 8, 8)
    with pytest.raises(convlab.Error, match="re-ranks find's choices: layer 0 runs policy 'get'"):
        find_in_context(model, lambda: model(x).sum().backward())


def test_a_failing_step_leaves_the_isolated_choices_and_the_weights():
    torch.manual_seed(4)
    model = small_model()
    patch(model, policy="find")
    x, y = torch.randn(4, 3, 10, 10), torch.randint(0, 4, (4,))
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    convs = [(n, m) for n, m in model.named_modules() if isinstance(m, convlab.torch.Conv2d)]

    def step():
        # Fails as soon as a candidate other than the isolated winner runs in some layer.
        if any(c.why == "find-context candidate" and c.algo != chosen[(n, d)]
               for n, m in convs for s in m.convlab_shapes() for d, c in s.choices.items()):
            raise RuntimeError("the step failed")
        opt.zero_grad()
        F.cross_entropy(model(x), y).backward()
        opt.step()

    chosen = {}
    step()
    before = copy.deepcopy(model.state_dict())
    chosen = {(n, d): c.algo for n, m in convs for s in m.convlab_shapes() for d, c in s.choices.items()}
    try:
        find_in_context(model, step, optimizer=opt)
        pytest.skip("no (layer, direction) of this model has a second candidate within 1.5x on this machine")
    except RuntimeError as e:
        assert "the step failed" in str(e)
    for k, v in model.state_dict().items():
        assert torch.equal(v, before[k]), k
    for n, m in model.named_modules():
        if isinstance(m, convlab.torch.Conv2d):
            assert not m.convlab_timing
            for s in m.convlab_shapes():
                for d, c in s.choices.items():
                    assert c.algo == chosen[(n, d)] and s.plans[d].algo == c.algo


def test_a_cache_policy_ranks_from_its_file(tmp_path):
    cache = tmp_path / "tune.jsonl"
    p = convlab.Problem.parse("mb2ic8ih10oc8oh10kh3ph1")
    choice = convlab.choose(p, "fwd", f"cache:{cache}")
    ranked = _convlab.find_ranking(f"cache:{cache}", p, "fwd")
    assert cache.exists() and ranked[0][0] == choice.algo
    assert all(convlab.supports(a, p, "fwd") == "" for a, _ in ranked)


def test_compare_runs_find_context_beside_find(tmp_path):
    out = tmp_path / "cmp"
    doc = compare(small_model(), batch=4, image_size=10, classes=4, policies=["find", "find-context"],
                  baselines=["pytorch"], rounds=2, steps=2, attribution_steps=1, out=str(out), log=lambda s: None,
                  context_steps=1)
    names = [p["policy"] for p in doc["policies"]]
    assert names == ["pytorch", "find", "find-context"]
    ctx = doc["policies"][2]
    assert ctx["in_context"]["steps_per_candidate"] == 1 and len(ctx["in_context"]["pairs"]) == 5
    assert doc["policies"][1]["in_context"] is None
    # Its steps trained a copy that was given back: step 0's loss is everybody's.
    first = [p["losses"][0] for p in doc["policies"]]
    assert max(first) - min(first) <= 1e-4 * abs(first[0])
    assert len(ctx["losses"]) == len(doc["policies"][0]["losses"])
    # The choices it reports are the ones its layers ran.
    chosen = {(c["layer"], c["dir"]): c["algo"] for c in ctx["choices"]}
    for p in ctx["in_context"]["pairs"]:
        assert chosen[(p["layer"], p["direction"])] == (
            p["isolated"][0]["algo"] if p["agree"] else p["in_context"][0]["algo"])
    train = json.loads((out / "train.json").read_text())
    assert train["in_context_find"] == json.loads(json.dumps(ctx["in_context"]["pairs"]))
    assert train["in_context_cost"]["policy"] == "find-context"
    md = (out / "compare.md").read_text()
    assert "## In-context find (`find-context`)" in md
    differ = sum(not p["agree"] for p in ctx["in_context"]["pairs"])
    assert (f"{differ} of 5 pairs rank differently" in md) if differ else ("No pair ranks differently" in md)
    assert "in-context" in (out / "report.html").read_text()
