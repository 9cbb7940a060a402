"""The comparison's method, as `convlab train` applies it: the balanced round order, medians with
percentile-bootstrap intervals, paired speedups, and the fp32 loss-drift bound."""

from .. import _convlab

FLT_EPSILON = 2.0 ** -23


def round_order(policies, round):
    """The policies' order in round `round`: rows of a Williams square, so each policy follows each
    other equally often (convlab train's order)."""
    return _convlab.round_order(policies, round)


def median_ci(values):
    """(median, (lo, hi)): the 95 % percentile-bootstrap interval of the median (core/stats)."""
    med, lo, hi = _convlab.median_ci(list(values))
    return med, (lo, hi)


def paired_ratio_ci(base, other):
    """(median(base) / median(other), (lo, hi)) with base[i] and other[i] measured in the same round:
    the bootstrap resamples rounds (core/stats median_ratio_ci)."""
    ratio, lo, hi = _convlab.median_ratio_ci(list(base), list(other))
    return ratio, (lo, hi)


def verdict(ci, margin=0.0):
    """faster / slower / not significant, from a speedup's interval."""
    lo, hi = ci
    if lo > 1 + margin:
        return "faster"
    if hi < 1 / (1 + margin):
        return "slower"
    return "not significant"


CONTROL_DELTA = 2.0 ** -22


def drift_bound(reduction, control):
    """The bound on a policy's relative loss difference from the baseline at step t, derived from the
    control (the baseline retrained from weights moved by CONTROL_DELTA = 2^-22 relative, its relative
    loss difference control[t]): a convolution summing in another order moves each output by at
    most K * FLT_EPSILON relative (K the longest reduction, C/g * R * S), a perturbation K * FLT_EPSILON
    / CONTROL_DELTA times the control's, so

        bound[t] = max(1, max over s <= t of control[s] / CONTROL_DELTA) * K * FLT_EPSILON

    -- the loss's measured sensitivity so far (never below 1: the loss itself is one more rounding),
    times the largest difference the algorithms may make. Returns (K * FLT_EPSILON, the sensitivity
    at the last step, bounds)."""
    bound0 = reduction * FLT_EPSILON
    bounds = []
    sensitivity = 1.0
    for c in control:
        sensitivity = max(sensitivity, c / CONTROL_DELTA)
        bounds.append(bound0 * sensitivity)
    return bound0, sensitivity, bounds


def relative_diffs(losses, base):
    return [abs(a - b) / max(abs(b), 1e-30) for a, b in zip(losses, base)]
