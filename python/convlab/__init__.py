"""convlab: which convolution algorithm is fastest for each layer, why, and what the choice buys.

The C++ core (``convlab._convlab``) does the work; this package gives it Python's shapes:

    >>> import convlab, numpy as np
    >>> p = convlab.Problem.parse("mb2ic3ih8oc4kh3ph1")
    >>> x = np.random.rand(*p.src_shape).astype(np.float32)
    >>> w = np.random.rand(*p.wei_shape).astype(np.float32)
    >>> y = convlab.conv(x, w, padding=1, algo="cpu.winograd_f2x3")

Arrays are NumPy arrays or PyTorch tensors (any DLPack producer), float32, NCHW, C-contiguous;
they are read and written in place, never copied. Errors are ``convlab.Error`` (a ValueError)
with the CLI's one-line message, and ``convlab.OutOfMemoryError`` (a MemoryError).
``convlab.torch`` runs PyTorch models on the chosen algorithms.
"""

import importlib.util as _importlib_util

# PyTorch, where installed, is imported first: its wheel carries its own OpenMP runtime
# (libgomp.so.1), and loading it before convlab's libraries makes them bind to that one,
# so a process that uses both has one thread pool.
if _importlib_util.find_spec("torch") is not None:
    import torch as _torch  # noqa: F401

from . import _convlab
from ._convlab import Error, OutOfMemoryError, Plan, Problem
from .api import algos, choose, conv, plan, problem, problems, run, supports, tolerance

__all__ = [
    "Error",
    "OutOfMemoryError",
    "Plan",
    "Problem",
    "algos",
    "choose",
    "conv",
    "cpu_isa",
    "plan",
    "problem",
    "problems",
    "run",
    "supports",
    "tolerance",
]


def cpu_isa():
    """The instruction set convlab's CPU kernels use here, e.g. "isa avx2"."""
    return _convlab.cpu_isa()
