"""convlab inside PyTorch: tune a model's convolutions, train it on the chosen algorithms, and
measure what the choice buys.

    import convlab.torch as ct
    print(ct.tune(model, example_batch, policy="find"))   # each layer's choice per direction
    ct.patch(model, policy="find")                          # every nn.Conv2d runs convlab's choice
    ct.find_in_context(model, train_step)                   # re-ranked inside training steps
    ct.compare(make_model, make_batch, policies=["find", "get"])  # the training comparison

A patched layer runs float32 NCHW on the CPU, and CUDA tensors on PyTorch's current stream when
convlab was built with CUDA; anything else keeps PyTorch's convolution and says why.
"""

from .compare import compare
from .context import find_in_context
from .layer import Conv2d, policy_with_cache
from .patch import TuneReport, layer_inputs, patch, tune, unpatch

__all__ = ["Conv2d", "TuneReport", "compare", "find_in_context", "layer_inputs", "patch", "policy_with_cache", "tune", "unpatch"]
