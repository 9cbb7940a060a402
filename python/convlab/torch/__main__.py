"""python -m convlab.torch compare --model resnet50 --batch 16 [--policies find,get] [--out DIR] ..."""

import argparse
import sys

from .._convlab import Error


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python -m convlab.torch",
                                 description="convlab inside PyTorch: the training comparison of algorithm policies")
    sub = ap.add_subparsers(dest="command", required=True)
    c = sub.add_parser("compare", help="train one copy of a model per policy and compare their steps")
    c.add_argument("--model", required=True, help="a torchvision model name (resnet50, mobilenet_v2, vgg16, ...)")
    c.add_argument("--batch", type=int, default=16)
    c.add_argument("--image-size", type=int, default=224)
    c.add_argument("--classes", type=int, default=None, help="output classes (default: the model's)")
    c.add_argument("--policies", default="default;get;find",
                   help="convlab policies, ';'-separated (',' adds constraints: 'find,tf32;get'); find-context "
                        "re-ranks find's choices inside training steps")
    c.add_argument("--baselines", default=None,
                   help="PyTorch baselines, ','-separated (default: pytorch,pytorch-channels-last; on cuda also "
                        "pytorch-fp32 (cuDNN without TF32) and pytorch-cudnn-benchmark)")
    c.add_argument("--rounds", type=int, default=5)
    c.add_argument("--steps", type=int, default=2, help="steps per policy per round")
    c.add_argument("--warmup-rounds", type=int, default=1)
    c.add_argument("--attribution-steps", type=int, default=2,
                   help="steps per policy of the per-layer timing pass after the rounds (default 2)")
    c.add_argument("--device", default="cpu", choices=("cpu", "cuda"))
    c.add_argument("--cache", default=None, help="an autotune cache file (shared with the CLI)")
    c.add_argument("--out", default=None, help="results folder (compare.json, .csv, .md, report.html)")
    c.add_argument("--seed", type=int, default=1)
    c.add_argument("--context-factor", type=float, default=1.5,
                   help="find-context: candidates within this factor of the isolated best (default 1.5)")
    c.add_argument("--context-steps", type=int, default=3,
                   help="find-context: timed steps per candidate (default 3)")
    a = ap.parse_args(argv)
    from .compare import compare  # after parsing: --help needs no model

    try:
        policies = [p for p in a.policies.split(";") if p]
        baselines = a.baselines.split(",") if a.baselines else None
        doc = compare(a.model, batch=a.batch, image_size=a.image_size, classes=a.classes, policies=policies,
                      baselines=baselines, rounds=a.rounds, steps=a.steps, warmup_rounds=a.warmup_rounds,
                      attribution_steps=a.attribution_steps,
                      device=a.device, cache=a.cache, out=a.out, seed=a.seed,
                      context_factor=a.context_factor, context_steps=a.context_steps,
                      log=lambda s: print(s, file=sys.stderr, flush=True))
    except Error as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    from .report import markdown

    print(markdown(doc))
    return 0


if __name__ == "__main__":
    sys.exit(main())
