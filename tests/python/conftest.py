"""Shared by the Python package's tests: the tester's sweep and the fp64 check with an algorithm's
declared bound (algorithms/algorithm.hpp: |y_i - ref_i| <= elem * mag_i + global * max_j mag_j)."""

import os
import subprocess

import pytest
import torch
import torch.nn.functional as F

import convlab


def edge_sweep():
    """(label, Problem) of the shared tester's edge sweep (tests/support/conv_tester.cpp)."""
    out = subprocess.run([os.environ["CONVLAB_SWEEP_BIN"]], check=True, capture_output=True, text=True).stdout
    return [(label, convlab.Problem.parse(text)) for label, text in (line.split(" ", 1) for line in out.splitlines())]


def as_conv2d_args(p):
    """nn.Conv2d's geometry for a problem, or None where nn.Conv2d cannot state it (unequal padding)."""
    if p.pad != p.pad_end:
        return None
    return dict(stride=p.stride, padding=p.pad, dilation=p.dilation, groups=p.groups)


def reference(dir, p, x, w, dy):
    """(value, magnitude) of `dir`'s output in float64: the exact result and the sum of |terms|."""
    g = as_conv2d_args(p)
    x, w, dy = (t.double() for t in (x, w, dy))
    if dir == "fwd":
        f = lambda a, b: F.conv2d(a, b, **g)  # noqa: E731
        return f(x, w), f(x.abs(), w.abs())
    if dir == "bwd-data":
        f = lambda a, b: torch.nn.grad.conv2d_input(x.shape, b, a, **g)  # noqa: E731
        return f(dy, w), f(dy.abs(), w.abs())
    f = lambda a, b: torch.nn.grad.conv2d_weight(a, w.shape, b, **g)  # noqa: E731
    return f(x, dy), f(x.abs(), dy.abs())


def assert_within(algo, dir, p, got, ref, mag):
    """Every element within `algo`'s declared bound of the fp64 value."""
    elem, glob, basis = convlab.tolerance(algo, p, dir)
    allowed = elem * mag + glob * mag.max()
    err = (got.double() - ref).abs()
    assert torch.isfinite(got).all(), f"{algo} {dir} {p}: non-finite output"
    worst = (err / allowed.clamp_min(1e-300)).max().item()
    assert (err <= allowed).all(), f"{algo} {dir} {p}: error {err.max().item():.3g} is {worst:.3g}x its bound ({basis})"


@pytest.fixture(scope="session")
def sweep():
    return edge_sweep()


def pytest_sessionfinish(session, exitstatus):
    """A file whose every test skipped did not test anything: exit 77, which ctest reports as skipped
    (SKIP_RETURN_CODE), printing "Skipped" and the reasons as a GoogleTest skip does -- never a pass."""
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    if reporter is None or exitstatus != 0 or reporter.stats.get("passed") or not reporter.stats.get("skipped"):
        return
    reasons = sorted({str(r.longrepr[2]).removeprefix("Skipped: ") for r in reporter.stats["skipped"]
                      if isinstance(r.longrepr, tuple)})
    print("\nSkipped\n" + "; ".join(reasons), flush=True)
    session.exitstatus = 77
