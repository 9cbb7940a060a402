"""find in context for a PyTorch model: each candidate of a (layer, direction) timed inside real
training steps instead of alone, as `convlab train`'s find-context policy does (train/context_find.hpp).

The isolated find times every candidate on its own, with warm caches and nothing else running. Inside
a training step a convolution runs after other layers evicted its data. So, on a model patched with
find's choices:

    one untimed step (every plan's first run, and which directions the step runs at all);
    the isolated winners of pairs with one candidate: `steps` common steps, every isolated choice in place;
    for every other (layer, direction), in the order the model's layers ran:
        candidates = find's ranking within `factor` x the isolated best
        one round untimed, then `steps` rounds; a round runs two training steps per candidate, rotated by
        one position every round, only this pair's choice swapped; the time recorded is this layer and
        direction's own time inside the second step (an algorithm's first run after another ran in its
        place pays for its cold data; training never swaps)
        the in-context winner is the candidate with the smallest median; it replaces the isolated winner
        only when the paired interval of their ratio lies above 1 (convlab train's rule, the same code)

The steps train the model: `find_in_context` gives back the parameters and buffers it found, and the
optimizer's state when the optimizer is passed (compare does).
"""

import copy
import time

import torch

from .. import _convlab, api
from .._convlab import Error
from .layer import DIRECTIONS, Conv2d


class _Pair:
    def __init__(self, layer, shape, dir, candidates):
        self.layer = layer
        self.shape = shape
        self.dir = dir
        self.candidates = candidates  # [(algo, isolated seconds)], the isolated winner first
        self.samples = {a: [] for a, _ in candidates}
        self.plans = {}  # algo -> plan, the isolated winner's included
        self.original = shape.choices[dir]  # the isolated winner's choice, as the policy made it

    def restore(self):
        self.shape.choices[self.dir] = self.original
        self.shape.plans[self.dir] = self.plans[self.original.algo]

    def inject(self, algo, why, threads):
        plan = self.plans.get(algo)
        if plan is None:
            plan = api.plan(algo, self.shape.problem, self.dir, self.shape.device, threads)
            self.plans[algo] = plan
        self.shape.choices[self.dir] = api.Choice(algo, why, 0.0)
        self.shape.plans[self.dir] = plan


def _shapes(model):
    """(name, LayerShape) of every patched layer's input shape, in module order."""
    out = []
    for name, m in model.named_modules():
        if isinstance(m, Conv2d):
            shapes = m.convlab_shapes()
            for s in shapes:
                out.append((name if len(shapes) == 1 else f"{name} {s.problem}", s))
    return out


def _timed_step(step, shapes):
    """Runs one training step with every patched layer's timer on; {(id(shape), dir): seconds}."""
    for _, s in shapes:
        for d in DIRECTIONS:
            s.seconds[d].clear()
    step()
    return {(id(s), d): sum(s.seconds[d]) for _, s in shapes for d in DIRECTIONS if s.seconds[d]}


def find_in_context(model, step, *, factor=1.5, steps=3, optimizer=None, log=None):
    """Re-ranks each (layer, direction) of a patched `model` inside training steps (see the module's doc)
    and leaves each pair on its in-context winner. `step()` runs one training step of the model (forward,
    backward, update). Each layer's policy gives the ranking (find, or cache:FILE). The steps train the
    model; its parameters and buffers, and `optimizer`'s state, are given back afterwards. Returns the
    result as a dict: factor, steps_per_candidate, steps, seconds, and per pair its isolated and
    in-context rankings (milliseconds), agree, tie, cost_ratio (the isolated winner's in-context median
    over the in-context winner's) with its interval, in `convlab train`'s train.json terms."""
    if not (isinstance(steps, int) and steps >= 1) or not factor >= 1:
        raise Error(f"find-context needs at least one step and a factor >= 1, got steps={steps!r}, factor={factor!r}")
    say = log or (lambda s: None)
    convs = [m for m in model.modules() if isinstance(m, Conv2d)]
    if not convs:
        raise Error("find-context: the model has no patched convolution layer (patch it first)")
    model_state = copy.deepcopy(model.state_dict())
    opt_state = copy.deepcopy(optimizer.state_dict()) if optimizer is not None else None
    t0 = time.perf_counter()
    timing = [m.convlab_timing for m in convs]
    for m in convs:
        m.convlab_timing = True
    n_steps = 0

    def run():
        nonlocal n_steps
        n_steps += 1
        return _timed_step(step, shapes)

    pairs = []
    settled = False
    try:
        shapes = []
        run()  # plans made, first runs paid; shapes known after it
        shapes = _shapes(model)
        ran = run()
        threads = torch.get_num_threads()
        for name, s in shapes:
            for d in DIRECTIONS:
                if (id(s), d) not in ran or s.plans.get(d) is None:
                    continue  # not run by convlab in a step (PyTorch's convolution, or no input gradient)
                winner = s.choices[d].algo
                if s.policy.partition(",")[0].partition(":")[0] not in ("find", "cache"):
                    raise Error(f"find-context re-ranks find's choices: layer {name} runs policy '{s.policy}' "
                                f"(patch with find or cache:FILE)")
                ranked = _convlab.find_ranking(s.policy, s.problem, d, s.device, threads)
                best = min(t for _, t in ranked)
                if winner not in dict(ranked):
                    raise Error(f"find-context: {name} {d} runs {winner}, which find's ranking does not admit")
                isolated = dict(ranked)[winner]
                cands = [(winner, isolated)] + [(a, t) for a, t in ranked if a != winner and t <= factor * best]
                p = _Pair(name, s, d, cands)
                p.plans[winner] = s.plans[d]
                pairs.append(p)
        singles = [p for p in pairs if len(p.candidates) == 1]
        if singles:
            say(f"find-context: {steps} steps with every isolated choice")
            for _ in range(steps):
                t = run()
                for p in singles:
                    p.samples[p.candidates[0][0]].append(t[(id(p.shape), p.dir)])
        for p in pairs:
            n = len(p.candidates)
            if n > 1:
                say(f"find-context: {p.layer} {p.dir}: {n} candidates within {factor:.2f}x of the isolated best, "
                    f"{2 * steps + 1} x {n} steps")
                for q in range(steps + 1):
                    for k in range(n):
                        algo = p.candidates[(k + q) % n][0]
                        p.inject(algo, "find-context candidate", threads)
                        if q > 0:
                            run()
                        t = run()
                        if q > 0:
                            p.samples[algo].append(t[(id(p.shape), p.dir)])
                p.restore()  # the isolated winner back
        result = [_settle(p, threads, factor, say) for p in pairs]
        settled = True
    finally:
        if not settled:  # a step failed: every pair back on its isolated winner
            for p in pairs:
                if p.original.algo in p.plans:
                    p.restore()
        for m, was in zip(convs, timing):
            m.convlab_timing = was
        for m in convs:
            for s in m.convlab_shapes():
                for d in DIRECTIONS:
                    s.seconds[d].clear()
        with torch.no_grad():
            model.load_state_dict(model_state)
        if optimizer is not None:
            optimizer.load_state_dict(opt_state)
    return {"factor": factor, "steps_per_candidate": steps, "steps": n_steps,
            "seconds": time.perf_counter() - t0, "pairs": result}


def _settle(p, threads, factor, say):
    """One pair's rankings (convlab train's settle_pair); the in-context winner swapped in where the
    rankings differ beyond the noise."""
    order, agree, tie, cost, lo, hi = _convlab.settle_context_pair(
        [(a, t, p.samples[a]) for a, t in p.candidates])
    iso_winner = p.candidates[0][0]
    if len(p.candidates) > 1:
        say(f"find-context: {p.layer} {p.dir}: alone {iso_winner}, in context {order[0][0]} "
            f"({cost:.2f}x [{lo:.2f}, {hi:.2f}]{': a tie, the isolated winner stays' if tie else ''})")
    if not agree:
        p.inject(order[0][0], f"in context: fastest of {len(p.candidates)} inside training steps "
                              f"(alone: {iso_winner})", threads)
    for algo in list(p.plans):  # the losers' plans and workspaces go
        if algo != p.shape.choices[p.dir].algo:
            del p.plans[algo]
    return {"layer": p.layer, "direction": p.dir,
            "isolated": [{"algo": a, "ms": t * 1e3} for a, t in p.candidates],
            "in_context": [{"algo": a, "ms": m * 1e3, "ms_ci": [l * 1e3, h * 1e3]} for a, m, l, h in order],
            "agree": agree, "tie": tie, "cost_ratio": cost, "cost_ratio_ci": [lo, hi]}
