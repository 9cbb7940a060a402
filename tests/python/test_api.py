"""convlab's Python API on NumPy arrays and PyTorch tensors: results within each algorithm's declared
bound, in place (no copies), and bad input as convlab.Error with the CLI's one line."""

import numpy as np
import pytest
import torch

import convlab
from conftest import as_conv2d_args, assert_within, reference

CPU_ALGOS = [a["name"] for a in convlab.algos(device="cpu", available=True) if not a["oracle"]]


def test_problem_parse_make_and_fields():
    p = convlab.Problem.parse("g2mb4ic8ih9oc6kh3sh2ph1")
    assert (p.n, p.c, p.h, p.w, p.k, p.r, p.s, p.groups) == (4, 8, 9, 9, 6, 3, 3, 2)
    assert p.stride == (2, 2) and p.pad == (1, 1) and p.dst_shape == (4, 6, 5, 5)
    assert p.wei_shape == (6, 4, 3, 3)
    q = convlab.problem((4, 8, 9, 9), (6, 4, 3, 3), stride=2, padding=1, groups=2)
    assert q == p and hash(q) == hash(p)
    assert convlab.Problem.parse(str(p)) == p


def test_problems_reads_networks_and_layer_ids():
    items = convlab.problems("alexnet", batch=8)
    assert [label for label, *_ in items][:2] == ["alexnet.conv1", "alexnet.conv2"]
    assert all(p.n == 8 for _, p, _, _ in items)
    with pytest.raises(convlab.Error, match="nosuchnet"):
        convlab.problems("nosuchnet")


def test_algos_lists_the_registry_in_order():
    names = [a["name"] for a in convlab.algos()]
    assert names.index("cpu.im2col_gemm") < names.index("cpu.reference")
    assert all(a["device"] == "cpu" for a in convlab.algos(device="cpu"))
    assert {"name", "family", "math", "unavailable", "vendor"} <= set(convlab.algos()[0])


@pytest.mark.parametrize("algo", CPU_ALGOS)
def test_every_cpu_algorithm_every_direction_on_numpy(algo, sweep):
    """Each CPU algorithm over the tester's sweep, all three directions through conv()."""
    rng = np.random.default_rng(7)
    ran = 0
    for label, p in sweep:
        g = as_conv2d_args(p)
        if g is None:
            continue
        x = rng.uniform(-1, 1, p.src_shape).astype(np.float32)
        w = rng.uniform(-1, 1, p.wei_shape).astype(np.float32)
        dy = rng.uniform(-1, 1, p.dst_shape).astype(np.float32)
        tx, tw, tdy = (torch.from_numpy(a) for a in (x, w, dy))
        for dir, args in (("fwd", (x, w)), ("bwd-data", (dy, w)), ("bwd-filter", (x, dy))):
            if convlab.supports(algo, p, dir):
                continue
            got = convlab.conv(*args, dir=dir, algo=algo, stride=g["stride"], padding=g["padding"],
                               dilation=g["dilation"], groups=g["groups"], input_shape=p.src_shape,
                               weight_shape=p.wei_shape)
            assert isinstance(got, np.ndarray) and got.dtype == np.float32
            ref, mag = reference(dir, p, tx, tw, tdy)
            assert_within(algo, dir, p, torch.from_numpy(got), ref, mag)
            ran += 1
    assert ran > 0, f"{algo} supported nothing in the sweep"


def test_out_is_written_in_place_for_numpy_and_torch():
    p = convlab.Problem.parse("mb2ic3ih8oc4kh3ph1")
    x = np.random.rand(*p.src_shape).astype(np.float32)
    w = np.random.rand(*p.wei_shape).astype(np.float32)
    out = np.full(p.dst_shape, np.nan, dtype=np.float32)
    got = convlab.conv(x, w, padding=1, algo="cpu.direct", out=out)
    assert got is out and np.isfinite(out).all()
    tx, tw = torch.from_numpy(x), torch.from_numpy(w)
    tout = torch.full(p.dst_shape, float("nan"))
    ptr = tout.data_ptr()
    convlab.conv(tx, tw, padding=1, algo="cpu.direct", out=tout)
    assert tout.data_ptr() == ptr and torch.equal(tout, torch.from_numpy(out))
    # The inputs are read where they lie: a view into a larger buffer works without a copy.
    big = np.zeros((4,) + p.src_shape[1:], dtype=np.float32)
    big[:2] = x
    assert np.array_equal(convlab.conv(big[:2], w, padding=1, algo="cpu.direct"), out)


def test_a_plan_runs_many_times_and_releases_the_gil():
    import threading

    p = convlab.Problem.parse("mb4ic16ih32oc16kh3ph1")
    plan = convlab.plan("cpu.direct", p, "fwd")
    assert plan.algo == "cpu.direct" and plan.dir == "fwd" and plan.problem == p
    x = np.random.rand(*p.src_shape).astype(np.float32)
    w = np.random.rand(*p.wei_shape).astype(np.float32)
    outs = [np.empty(p.dst_shape, np.float32) for _ in range(4)]
    ticks = []
    stop = threading.Event()

    def ticker():
        while not stop.is_set():
            ticks.append(1)

    t = threading.Thread(target=ticker)
    t.start()
    for _ in range(20):
        for o in outs:
            plan.run(x, w, o)
    stop.set()
    t.join()
    assert all(np.array_equal(outs[0], o) for o in outs)
    assert len(ticks) > 0


@pytest.mark.parametrize("bad,message", [
    (lambda x, w: convlab.conv(x.astype(np.float64), w), "src must be float32"),
    (lambda x, w: convlab.conv(x[:, :, ::2], w), "C-contiguous"),
    (lambda x, w: convlab.conv(x[0], w), "4-D"),
    (lambda x, w: convlab.conv(x, w, algo="cpu.nosuch"), "unknown algorithm 'cpu.nosuch'"),
    (lambda x, w: convlab.conv(x, w, policy="fastest"), "fastest"),
    (lambda x, w: convlab.conv(x, w[:, :2]), "reads 2 input channels"),
    (lambda x, w: convlab.conv(x, w, dir="backward"), "unknown direction"),
    (lambda x, w: convlab.conv(x, w, dir="bwd-data"), "needs input_shape"),
    (lambda x, w: convlab.conv(x, w, padding=1, algo="cpu.direct", out=np.empty((1, 1, 1, 1), np.float32)),
     r"dst has shape \(1, 1, 1, 1\) but the problem's dst is \(2, 4, 8, 8\)"),
    (lambda x, w: convlab.conv(x, w, algo="cuda.direct"), "cuda.direct runs on cuda buffers"),
    (lambda x, w: convlab.conv([[1.0]], w), "expected an array"),
    (lambda x, w: convlab.plan("cpu.winograd_f2x3", convlab.Problem.parse("mb1ic3ih8oc4kh5"), "fwd"),
     "cpu.winograd_f2x3 does not support"),
])
def test_bad_input_is_one_line_error(bad, message):
    x = np.random.rand(2, 3, 8, 8).astype(np.float32)
    w = np.random.rand(4, 3, 3, 3).astype(np.float32)
    with pytest.raises(convlab.Error, match=message) as info:
        bad(x, w)
    assert "\n" not in str(info.value)
    assert isinstance(info.value, ValueError)


def test_a_workspace_that_cannot_be_had_is_a_memory_error():
    """Under an address-space limit 1 GiB above what the process maps, a 3 GiB workspace is refused
    before anything is allocated, with the CLI's line (in a child: the limit stays there)."""
    import os
    import subprocess
    import sys

    child = (
        "import resource, convlab\n"
        "pages = int(open('/proc/self/statm').read().split()[0])\n"
        "mapped = pages * resource.getpagesize()\n"
        "resource.setrlimit(resource.RLIMIT_AS, (mapped + (1 << 30), resource.RLIM_INFINITY))\n"
        "p = convlab.Problem.parse('mb64ic512ih112oc512kh7ph3')\n"
        "try:\n"
        "    convlab.plan('onednn.auto', p, 'fwd')\n"
        "except convlab.OutOfMemoryError as e:\n"
        "    print('refused:', e)\n")
    out = subprocess.run([sys.executable, "-c", child], capture_output=True, text=True, env=os.environ)
    assert out.returncode == 0, out.stderr
    assert "refused: onednn.auto on mb64ic512ih112oc512oh112kh7ph3 fwd: its workspace needs" in out.stdout


def test_choose_applies_policies():
    p = convlab.Problem.parse("mb2ic8ih12oc8kh3ph1")
    c = convlab.choose(p, "fwd", "find")
    assert c.algo in CPU_ALGOS and c.why.startswith("find")
    assert convlab.choose(p, "fwd", "fixed:cpu.fft").algo == "cpu.fft"
    assert convlab.choose(p, "bwd-filter", "default").algo == CPU_ALGOS[0]
    assert convlab.choose(p, "fwd", "find,own").algo.startswith("cpu.")
    with pytest.raises(convlab.Error, match="unknown policy"):
        convlab.choose(p, "fwd", "fastest")


def test_cache_policy_shares_the_cli_cache_file(tmp_path):
    import json
    import os
    import subprocess

    cache = tmp_path / "tune.jsonl"
    p = convlab.Problem.parse("mb2ic8ih12oc8kh3ph1")
    c = convlab.choose(p, "fwd", f"cache:{cache}")
    lines = [json.loads(line) for line in cache.read_text().splitlines() if line.strip()]
    assert any(c.algo in json.dumps(line) for line in lines)
    # The CLI reads the same file back: the cache lists the entry Python wrote.
    out = subprocess.run([os.environ["CONVLAB_BIN"], "cache", "show", str(cache)],
                         capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert c.algo in out.stdout
