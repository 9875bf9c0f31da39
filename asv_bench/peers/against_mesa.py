"""A model's step against Mesa's own, in alternated rounds: the ratio per
agent-step that issue 49's "300x faster than Mesa at 10,000 agents" asks.

Each round runs ``--model-steps`` steps of the ``sparseset.models`` model,
then ``--mesa-steps`` of Mesa's example built as ``mesa_models.py``
builds it (the same parameters); the ratio is Mesa's mean step over the
model's, per round. The model's steps come in a block, as in a program
that runs only the model: after each Mesa block its first steps find
their arrays evicted from the caches, which a block of a few steps would
charge to every one of them.

Needs the ``peers`` extra; run it alone, e.g.
``flock /tmp/timing.lock python asv_bench/peers/against_mesa.py --model boltzmann``.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable
from typing import Any

from mesa_models import boids, boltzmann, cpu_model


def ours(name: str, params: dict[str, Any]) -> Callable[[], None]:
    """The ``sparseset.models`` model of Mesa's parameters ``params``."""
    from sparseset.models import BoidFlockers, BoltzmannWealth

    cls = {"boltzmann": BoltzmannWealth, "boids": BoidFlockers}[name]
    model = cls(**params)
    model.run(20)  # compiled (or loaded) and past the first steps
    return model.step


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", choices=("boltzmann", "boids"), default="boltzmann")
    parser.add_argument("--agents", type=int, default=10_000)
    parser.add_argument("--rounds", type=int, default=8)
    parser.add_argument("--model-steps", type=int, default=200)
    parser.add_argument("--mesa-steps", type=int, default=4)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args(argv)
    build = {"boltzmann": boltzmann, "boids": boids}[args.model]
    _, mesa_step, params = build(args.agents, args.seed)
    for _ in range(3):
        mesa_step()
    step = ours(args.model, params)
    ratios = []
    print(f"{args.model} {params}, CPU {cpu_model()}")
    for _ in range(args.rounds):
        began = time.perf_counter()
        for _ in range(args.model_steps):
            step()
        model_s = (time.perf_counter() - began) / args.model_steps
        began = time.perf_counter()
        for _ in range(args.mesa_steps):
            mesa_step()
        mesa_s = (time.perf_counter() - began) / args.mesa_steps
        ratios.append(mesa_s / model_s)
        print(
            f"  model {model_s * 1e3:8.3f} ms  Mesa {mesa_s * 1e3:9.2f} ms  "
            f"Mesa / model {mesa_s / model_s:7.0f}x"
        )
    print(
        f"median {statistics.median(ratios):.0f}x, "
        f"range {min(ratios):.0f}x to {max(ratios):.0f}x over {args.rounds} rounds"
    )


if __name__ == "__main__":
    main()
