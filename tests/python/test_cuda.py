"""The bridge on CUDA tensors: patched layers on PyTorch's current stream, output and both gradients
within each algorithm's declared bound of the fp64 reference. Skips, with the reason, where PyTorch sees
no CUDA device or convlab was built without CUDA; scripts/gpu-check.sh runs it where both exist."""

import pytest
import torch
from torch import nn

import convlab
import convlab.torch as ct
from conftest import as_conv2d_args, assert_within, reference

CUDA_ALGOS = [a["name"] for a in convlab.algos(device="cuda") if a["math"] == "fp32"]
# bool(): a string condition is code to pytest (an empty "unavailable" reason would be evaluated).
pytestmark = pytest.mark.skipif(
    bool(not torch.cuda.is_available() or not CUDA_ALGOS or convlab.algos(device="cuda")[0]["unavailable"]),
    reason="no CUDA device: "
    + ("PyTorch sees none" if not torch.cuda.is_available()
       else (convlab.algos(device="cuda")[0]["unavailable"] if CUDA_ALGOS else "convlab built without CUDA")))


@pytest.mark.parametrize("policy", ["find", "fixed:cuda.implicit_gemm", "fixed:cuda.direct", "fixed:cudnn.implicit_gemm"])
def test_patched_cuda_layers_match_the_reference(policy, sweep):
    ran = 0
    for i, (label, p) in enumerate(sweep):
        g = as_conv2d_args(p)
        if g is None:
            continue
        torch.manual_seed(i)
        layer = nn.Conv2d(p.c, p.k, (p.r, p.s), bias=True, **g).cuda()
        ct.patch(layer, policy=policy)
        x = torch.empty(p.src_shape, device="cuda").uniform_(-1, 1).requires_grad_()
        y = layer(x)
        if layer.convlab_fallback:
            continue
        dy = torch.empty(y.shape, device="cuda").uniform_(-1, 1)
        y.backward(dy)
        torch.cuda.synchronize()
        shape = layer.convlab_shapes()[0]
        fwd = (y - layer.bias.view(1, -1, 1, 1)).detach().cpu()
        for dir, got in (("fwd", fwd), ("bwd-data", x.grad.cpu()), ("bwd-filter", layer.weight.grad.cpu())):
            if dir in shape.fallback:
                continue
            ref, mag = reference(dir, p, x.detach().cpu(), layer.weight.detach().cpu(), dy.cpu())
            assert_within(shape.choices[dir].algo, dir, p, got, ref, mag)
        ran += 1
    assert ran > 0, f"{policy}: no sweep problem ran on the GPU"


def test_cuda_tensors_run_on_the_current_stream():
    p = convlab.Problem.parse("mb2ic8ih16oc8kh3ph1")
    x = torch.randn(p.src_shape, device="cuda")
    w = torch.randn(p.wei_shape, device="cuda")
    s = torch.cuda.Stream()
    with torch.cuda.stream(s):
        y = convlab.conv(x, w, padding=1, algo="cuda.implicit_gemm")
    s.synchronize()
    torch.testing.assert_close(y, torch.nn.functional.conv2d(x, w, padding=1), rtol=1e-4, atol=1e-4)
    with pytest.raises(convlab.Error, match="cpu array but cuda.implicit_gemm runs on cuda"):
        convlab.conv(x, w.cpu(), padding=1, algo="cuda.implicit_gemm", out=torch.empty(p.dst_shape, device="cuda"))
