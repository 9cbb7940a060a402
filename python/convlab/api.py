"""Problems, algorithms, policies and runs on NumPy arrays and PyTorch tensors."""

import collections

from . import _convlab
from ._convlab import Error, Problem

DIRECTIONS = ("fwd", "bwd-data", "bwd-filter")

Choice = collections.namedtuple("Choice", "algo why seconds")
Choice.__doc__ = "A policy's choice for one (problem, direction): the algorithm, why, seconds spent choosing."


def _pair(value, what):
    if isinstance(value, int):
        return (value, value)
    try:
        a, b = value
        return (int(a), int(b))
    except (TypeError, ValueError):
        raise Error(f"{what} must be an int or a pair of ints, got {value!r}") from None


def _shape4(shape, what):
    try:
        dims = tuple(int(d) for d in shape)
    except (TypeError, ValueError):
        raise Error(f"{what} must be a 4-D shape (N, C, H, W), got {shape!r}") from None
    if len(dims) != 4:
        raise Error(f"{what} must be 4-D (NCHW), got {len(dims)}-D {dims}")
    return dims


def problem(input_shape, weight_shape, *, stride=1, padding=0, dilation=1, groups=1, name=""):
    """The problem of a convolution of an (N, C, H, W) input with a (K, C/groups, R, S) filter."""
    n, c, h, w = _shape4(input_shape, "input_shape")
    k, cg, r, s = _shape4(weight_shape, "weight_shape")
    if groups < 1 or c != cg * groups:
        raise Error(
            f"weight_shape {tuple(weight_shape)} with groups={groups} reads {cg * groups} input channels, "
            f"but input_shape {tuple(input_shape)} has {c}")
    return Problem.make(n, c, h, w, k, r, s, stride=_pair(stride, "stride"), pad=_pair(padding, "padding"),
                        dilation=_pair(dilation, "dilation"), groups=groups, name=name)


def problems(*args, batch=0):
    """NET | LAYER | PROBLEM | @FILE, as every CLI command reads them: [(label, Problem, dir or None, count)]."""
    return _convlab.problems([str(a) for a in args], batch)


def algos(device=None, family=None, available=False):
    """The registry in its order, one dict per algorithm (name, device, family, math, description,
    unavailable: why it cannot run here or "", vendor, deterministic, oracle)."""
    out = []
    for a in _convlab.algorithms():
        if device is not None and a["device"] != device:
            continue
        if family is not None and a["family"] != family:
            continue
        if available and a["unavailable"]:
            continue
        out.append(a)
    return out


def supports(algo, problem, dir="fwd"):
    """"" when `algo` runs `problem` in `dir`, else why not."""
    return _convlab.supports(algo, problem, dir)


def tolerance(algo, problem, dir="fwd"):
    """The error `algo` promises against the fp64 reference: (elem, global, basis); per output i,
    |y_i - ref_i| <= elem * mag_i + global * max_j mag_j with mag the sum of |terms|."""
    return _convlab.tolerance(algo, problem, dir)


def choose(problem, dir="fwd", policy="default", device="cpu", threads=0):
    """The policy's algorithm for (problem, dir): default, fixed:NAME, get, find, cache[:FILE]
    (the CLI's cache files), with constraints after commas ("find,deterministic")."""
    return Choice(*_convlab.choose(policy, problem, dir, device, threads))


def plan(algo, problem, dir="fwd", device="cpu", threads=0):
    """`algo` planned for (problem, dir): checked, its workspace allocated, ready to run many times."""
    return _convlab.Plan.make(algo, problem, dir, device, threads)


_PLANS = collections.OrderedDict()
_PLAN_CACHE_SIZE = 64


def _cached_plan(algo, prob, dir, device, threads):
    key = (algo, prob.key(), dir, device, threads)
    p = _PLANS.get(key)
    if p is None:
        p = plan(algo, prob, dir, device, threads)
        _PLANS[key] = p
        if len(_PLANS) > _PLAN_CACHE_SIZE:
            _PLANS.popitem(last=False)
    else:
        _PLANS.move_to_end(key)
    return p


def _device_of(array):
    """("cpu" | "cuda", device index) of a NumPy array or a DLPack producer."""
    dlpack_device = getattr(array, "__dlpack_device__", None)
    if dlpack_device is None:
        raise Error(f"expected an array (NumPy, PyTorch or another DLPack producer), got {type(array).__name__}")
    kind, index = dlpack_device()
    if int(kind) == 1:
        return "cpu", 0
    if int(kind) == 2:
        return "cuda", int(index)
    raise Error(f"arrays on DLPack device type {int(kind)} are not supported: CPU and CUDA arrays only")


def _is_torch(array):
    return type(array).__module__.startswith("torch")


def _stream_of(array, device):
    if device != "cuda" or not _is_torch(array):
        return 0
    import torch

    return torch.cuda.current_stream(array.device).cuda_stream


def _plain(array):
    """A tensor that DLPack may export: autograd's view of it dropped (no copy)."""
    if _is_torch(array) and array.requires_grad:
        return array.detach()
    return array


def _empty_like(array, shape):
    if _is_torch(array):
        import torch

        return torch.empty(shape, dtype=torch.float32, device=array.device)
    import numpy as np

    return np.empty(shape, dtype=np.float32)


def run(plan, *, src, wei, dst, stream=None):
    """Runs a plan on (src, wei, dst) in the Algorithm buffer convention: fwd writes dst, bwd-data src,
    bwd-filter wei. CUDA tensors run on PyTorch's current stream unless `stream` is given."""
    if stream is None:
        device, _ = _device_of(src)
        stream = _stream_of(src, device)
    plan.run(_plain(src), _plain(wei), _plain(dst), stream)


def conv(a, b, *, dir="fwd", stride=1, padding=0, dilation=1, groups=1, algo=None, policy="default",
         input_shape=None, weight_shape=None, out=None, threads=0):
    """One convolution in `dir` on NumPy arrays or PyTorch tensors, in place:

      fwd         conv(x, w)                           -> y
      bwd-data    conv(dy, w, input_shape=x.shape)     -> dx
      bwd-filter  conv(x, dy, weight_shape=w.shape)    -> dw

    The algorithm is `algo` when named, else the policy's choice. `out`, when given, receives the
    result (float32, C-contiguous, of the result's shape); else a new array like `a` is returned."""
    if dir not in DIRECTIONS:
        raise Error(f"unknown direction '{dir}' (expected fwd, bwd-data or bwd-filter)")
    device, _ = _device_of(a)
    _device_of(b)
    a, b = _plain(a), _plain(b)
    geometry = dict(stride=stride, padding=padding, dilation=dilation, groups=groups)
    if dir == "fwd":
        prob = problem(tuple(a.shape), tuple(b.shape), **geometry)
    elif dir == "bwd-data":
        if input_shape is None:
            raise Error("bwd-data needs input_shape= (the shape of the input whose gradient it computes)")
        prob = problem(input_shape, tuple(b.shape), **geometry)
    else:
        if weight_shape is None:
            raise Error("bwd-filter needs weight_shape= (the shape of the filter whose gradient it computes)")
        prob = problem(tuple(a.shape), weight_shape, **geometry)
    name = algo if algo is not None else choose(prob, dir, policy, device, threads).algo
    shape = {"fwd": prob.dst_shape, "bwd-data": prob.src_shape, "bwd-filter": prob.wei_shape}[dir]
    result = _empty_like(a, shape) if out is None else _plain(out)
    p = _cached_plan(name, prob, dir, device, threads)
    buffers = {"fwd": (a, b, result), "bwd-data": (result, b, a), "bwd-filter": (a, result, b)}[dir]
    p.run(*buffers, _stream_of(a, device))
    return result
