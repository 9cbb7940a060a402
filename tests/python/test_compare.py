"""convlab.torch.compare: the training comparison's method and its results folder, on a model small
enough for a test; bad arguments refused before any training."""

import json
import os
import subprocess
import sys

import pytest
import torch
from torch import nn

import convlab
from convlab.torch import compare
from convlab.torch import method


def small_model():
    # In-place ReLUs right after convolutions, as torchvision's VGG has them: the timing hooks must not
    # wrap the layers' outputs in views.
    return nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(), nn.Conv2d(8, 8, 3, padding=1),
                         nn.ReLU(inplace=True), nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Dropout(0.5), nn.Linear(8, 4))


def test_round_order_is_the_trainers_williams_square():
    for n in (2, 3, 4, 5):
        rows = [method.round_order(n, r) for r in range(2 * n)]
        follows = {}
        for row in rows[: (n if n % 2 == 0 else 2 * n)]:
            assert sorted(row) == list(range(n))
            for a, b in zip(row, row[1:]):
                follows[(a, b)] = follows.get((a, b), 0) + 1
        assert len(set(follows.values())) == 1, f"n={n}: unbalanced {follows}"


def test_drift_bound_follows_the_control():
    b0, sens, bounds = method.drift_bound(100, [0.0, 2.0 ** -22 * 4, 2.0 ** -22 * 2])
    assert b0 == 100 * 2.0 ** -23
    assert bounds == [b0, 4 * b0, 4 * b0] and sens == 4


def test_compare_writes_a_consistent_results_folder(tmp_path):
    out = tmp_path / "cmp"
    doc = compare(small_model(), batch=4, image_size=12, classes=4, policies=["default", "fixed:cpu.direct"],
                  rounds=3, steps=2, attribution_steps=1, out=str(out), log=lambda s: None)
    assert sorted(os.listdir(out)) == ["compare.csv", "compare.json", "compare.md", "layers.csv", "report.html",
                                       "train.json"]
    assert json.loads((out / "compare.json").read_text()) == json.loads(json.dumps(doc))
    names = [p["policy"] for p in doc["policies"]]
    assert names == ["pytorch", "pytorch-channels-last", "default", "fixed:cpu.direct"]
    steps = 1 * 2 + 3 * 2  # warm-up round and the timed rounds, each 2 steps, then 1 attribution step
    for p in doc["policies"]:
        assert len(p["round_medians_s"]) == 3 and len(p["losses"]) == steps + 1
        lo, hi = p["step_s_ci"]
        assert lo <= p["step_s_median"] <= hi
        slo, shi = p["speedup_ci"]
        assert slo <= p["speedup_vs_pytorch"] <= shi
        assert p["verdict"] == ("baseline" if p["policy"] == "pytorch" else method.verdict((slo, shi)))
        assert p["loss_agrees"], (p["policy"], p["loss_rel_diffs"], doc["drift"]["bounds"])
        assert [r["layer"] for r in p["layers"]] == ["0", "3"]
        assert all(r["fwd_s"] > 0 and r["bwd_s"] > 0 for r in p["layers"]), p["layers"]
    assert doc["attribution"].startswith("hooks")
    direct = doc["policies"][3]
    assert all(set(r["algos"].values()) == {"cpu.direct"} for r in direct["layers"])
    assert set(direct["layers"][1]["own_s"]) == {"fwd", "bwd-data", "bwd-filter"}
    # Every run saw the same batches in the same order: equal losses at step 0 up to rounding.
    first = [p["losses"][0] for p in doc["policies"]]
    assert max(first) - min(first) <= 1e-4 * abs(first[0])
    # The page and the Markdown state what the data say.
    md = (out / "compare.md").read_text()
    best = min(doc["policies"], key=lambda p: p["step_s_median"])
    assert f"Fastest median step: **{best['policy']}**" in md
    page = (out / "report.html").read_text()
    assert "<svg" in page and "speedup vs pytorch" in page  # convlab's page, the baseline PyTorch's default
    train = json.loads((out / "train.json").read_text())  # convlab train's schema
    assert train["baseline"] == "pytorch" and [p["policy"] for p in train["policies"]] == names
    for p, q in zip(train["policies"], doc["policies"]):
        assert p["iter_median_s"] == q["step_s_median"] and p["speedup"] == q["speedup_vs_pytorch"]
        assert len(p["iter_s"]) == 3 * 2 and p["layers"][-1]["kind"].startswith("rest of the step")
    assert train["policies"][0]["workspace_bytes"] is None and train["policies"][3]["workspace_bytes"] >= 0
    # `convlab html` redraws the folder from train.json, as it redraws `convlab train`'s.
    redrawn = subprocess.run([os.environ["CONVLAB_BIN"], "html", str(out), "--out", str(tmp_path / "re.html")],
                             capture_output=True, text=True)
    assert redrawn.returncode == 0, redrawn.stderr
    assert "speedup vs pytorch" in (tmp_path / "re.html").read_text()
    assert doc["limit_s"] > 0 and all(p["x_limit"] >= 0 for p in doc["policies"])
    assert all(p["conv_math"] == "fp32" for p in doc["policies"])  # on the CPU everything is fp32


def test_conv_math_says_what_each_variant_computes_in():
    from convlab.torch.compare import conv_math
    assert conv_math("pytorch", "cuda", True) == "tf32"  # PyTorch's default lets cuDNN use TF32
    assert conv_math("pytorch", "cuda", False) == "fp32"  # the user turned it off
    assert conv_math("pytorch-fp32", "cuda", True) == "fp32"
    assert conv_math("pytorch-cudnn-benchmark", "cuda", True) == "tf32"
    assert conv_math("find", "cuda", True) == "fp32"
    assert conv_math("find,tf32", "cuda", True) == "tf32"
    assert conv_math("pytorch", "cpu", True) == conv_math("find,tf32", "cpu", True) == "fp32"


def test_claims_name_the_math_when_it_differs():
    from convlab.torch.report import _claims

    def pol(name, math, s, ci, **extra):
        return dict(policy=name, conv_math=math, step_s_median=1 / s, speedup_vs_pytorch=s, speedup_ci=ci,
                    verdict="x", loss_agrees=True, **extra)
    doc = {"policies": [pol("pytorch", "tf32", 1.0, [1.0, 1.0]), pol("pytorch-fp32", "fp32", 0.6, [0.55, 0.65]),
                        pol("find", "fp32", 0.58, [0.55, 0.65], speedup_vs_pytorch_fp32=1.05,
                            speedup_fp32_ci=[1.01, 1.09]),
                        pol("find,tf32", "tf32", 0.9, [0.85, 1.02], speedup_vs_pytorch_fp32=1.5,
                            speedup_fp32_ci=[1.4, 1.6])]}
    text = "\n".join(_claims(doc))
    assert "find against PyTorch's default (its convolutions in TF32, find's in FP32): 0.580× [0.550, 0.650]: " \
           "slower" in text
    assert "find against pytorch-fp32 (cuDNN in FP32, find in FP32): 1.050× [1.010, 1.090]: faster." in text
    assert "find,tf32 against PyTorch's default: 0.900× [0.850, 1.020]: not slower." in text


@pytest.mark.parametrize("kwargs,message", [
    (dict(policies=["fastest"]), "unknown policy"),
    (dict(policies=["find", "find"]), "named twice"),
    (dict(baselines=["pytorch", "tensorflow"]), "unknown baseline 'tensorflow' \\(pytorch, pytorch-fp32"),
    (dict(baselines=["pytorch-channels-last"]), "must include 'pytorch'"),
    (dict(batch=0), "batch must be a positive integer"),
    (dict(out="/nonexistent/dir/cmp"), "cannot write the results folder"),
    (dict(device="tpu"), "device must be cpu or cuda"),
    (dict(attribution_steps=0), "attribution_steps must be a positive integer"),
    (dict(policies=["find-context"], context_steps=0), "find-context needs context_steps >= 1"),
    (dict(policies=["find-context"], context_factor=0.5), "find-context needs context_steps >= 1 and "
                                                         "context_factor >= 1"),
])
def test_bad_arguments_are_refused_before_training(kwargs, message):
    calls = []

    def factory():
        calls.append(1)
        return small_model()

    with pytest.raises(convlab.Error, match=message):
        compare(factory, **kwargs)
    assert not calls


def test_cli_refuses_an_unknown_model_with_one_line():
    env = dict(os.environ)
    out = subprocess.run([sys.executable, "-m", "convlab.torch", "compare", "--model", "resnet5000"],
                         capture_output=True, text=True, env=env)
    assert out.returncode == 2
    assert out.stderr.strip().splitlines() == [out.stderr.strip()] and "unknown torchvision model 'resnet5000'" in out.stderr


def test_unknown_model_name_and_bad_factory():
    with pytest.raises(convlab.Error, match="unknown torchvision model"):
        compare("resnet5000")
    with pytest.raises(convlab.Error, match="not an nn.Module"):
        compare(lambda: 3, batch=2, image_size=8)
    torch.manual_seed(0)
