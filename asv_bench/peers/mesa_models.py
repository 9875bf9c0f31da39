"""Time Mesa's own example models, as they ship: the peer figures.

Mesa's example library (``mesa.examples``) holds the agent-based models
``sparseset.models`` rebuilds on World + Schedule + Grid. This script
runs Mesa's versions, unchanged (their DataCollector included: it is
part of each model's ``step``), at a few sizes, and prints wall time per
step and per agent-step with the parameters used:

- BoltzmannWealth(n, width, height): one agent per cell (``side =
  sqrt(n)``; the default is 100 agents on 10x10);
- Schelling(height, width, density=0.8): ``side = sqrt(n / 0.8)``, so
  about ``n`` agents;
- BoidFlockers(population_size, width, height): Mesa's default space
  (100x100) at 1,000 boids, then Mesa's default density at more;
- WolfSheep(width, height, initial_sheep, initial_wolves, grass=True):
  Mesa's default proportions (100 sheep, 50 wolves on 20x20), scaled so
  sheep + wolves = n; stepped by its ABMSimulator (grass regrowth is
  scheduled there). "agents" counts the animals, not the grass patches;
- SugarscapeG1mt(initial_population): the map is Mesa's 50x50 file, so
  only the population varies; from about 1,000 traders on its 2,500
  cells, Mesa's ``Trader.move`` fails (``max()`` of no candidate cells)
  when a trader's neighbourhood is full: the script reports the failure
  and goes on.

It lives outside ``asv_bench/benchmarks`` (asv's ``benchmark_dir``) on
purpose: asv would import it as a benchmark module. It needs the
``peers`` extra (``pip install -e ".[peers]"``). Run it alone, e.g.
``flock /tmp/timing.lock python asv_bench/peers/mesa_models.py --sizes 1000``.
"""

from __future__ import annotations

import argparse
import math
import platform
import statistics
import time
from collections.abc import Callable
from typing import Any


def cpu_model() -> str:
    try:
        with open("/proc/cpuinfo") as info:
            for line in info:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def boltzmann(n: int, seed: int) -> tuple[Any, Callable[[], None], dict[str, Any]]:
    from mesa.examples import BoltzmannWealth

    side = max(1, round(math.sqrt(n)))
    params = {"n": n, "width": side, "height": side, "seed": seed}
    model = BoltzmannWealth(**params)
    return model, model.step, params


def schelling(n: int, seed: int) -> tuple[Any, Callable[[], None], dict[str, Any]]:
    from mesa.examples import Schelling

    side = max(1, round(math.sqrt(n / 0.8)))
    params = {"height": side, "width": side, "density": 0.8, "seed": seed}
    model = Schelling(**params)
    return model, model.step, params


def boids(n: int, seed: int) -> tuple[Any, Callable[[], None], dict[str, Any]]:
    from mesa.examples import BoidFlockers

    # Mesa's default space up to 1,000 boids; beyond, its default density
    # (100 boids on 100x100) would take minutes a step, so the space grows
    # to keep 1,000 boids' density.
    side = 100 if n <= 1000 else round(100 * math.sqrt(n / 1000))
    params = {"population_size": n, "width": side, "height": side, "seed": seed}
    model = BoidFlockers(**params)
    return model, model.step, params


def wolf_sheep(n: int, seed: int) -> tuple[Any, Callable[[], None], dict[str, Any]]:
    from mesa.examples import WolfSheep
    from mesa.experimental.devs import ABMSimulator

    side = max(1, round(20 * math.sqrt(n / 150)))
    sheep = round(n * 2 / 3)
    params = {
        "width": side,
        "height": side,
        "initial_sheep": sheep,
        "initial_wolves": n - sheep,
        "grass": True,
        "seed": seed,
    }
    simulator = ABMSimulator()
    model = WolfSheep(simulator=simulator, **params)
    return model, lambda: simulator.run_for(1), params


def sugarscape(n: int, seed: int) -> tuple[Any, Callable[[], None], dict[str, Any]]:
    from mesa.examples import SugarscapeG1mt

    params = {"initial_population": n, "seed": seed}
    model = SugarscapeG1mt(**params)
    return model, model.step, params


def animals(model: Any) -> int:
    from mesa.examples.advanced.wolf_sheep.agents import Sheep, Wolf

    by_type = model.agents_by_type
    return sum(len(by_type[kind]) for kind in (Sheep, Wolf) if kind in by_type)


MODELS: dict[str, tuple[Callable[..., Any], Callable[[Any], int]]] = {
    "BoltzmannWealth": (boltzmann, lambda m: len(m.agents)),
    "Schelling": (schelling, lambda m: len(m.agents)),
    "BoidFlockers": (boids, lambda m: len(m.agents)),
    "WolfSheep": (wolf_sheep, animals),
    "SugarscapeG1mt": (sugarscape, lambda m: len(m.agents)),
}


def measure(name: str, n: int, seconds: float, steps: int, seed: int) -> str:
    build, count = MODELS[name]
    started = time.perf_counter()
    model, step, params = build(n, seed)
    built = time.perf_counter() - started
    step()  # a first step outside the timing: lazy set-up, caches
    times, agents = [], []
    spent = 0.0
    while len(times) < steps and (len(times) < 2 or spent < seconds):
        agents.append(count(model))
        if agents[-1] == 0:
            break
        started = time.perf_counter()
        step()
        times.append(time.perf_counter() - started)
        spent += times[-1]
    if not times:
        return f"{name:16s} n={n:<6d} no agents left after the first step"
    per_step = statistics.mean(times)
    per_agent = sum(times) / sum(agents[: len(times)])
    shown = ", ".join(f"{k}={v}" for k, v in params.items())
    return (
        f"{name:16s} n={n:<6d} agents={statistics.mean(agents[: len(times)]):8.0f}"
        f"  {per_step * 1e3:9.2f} ms/step  {per_agent * 1e6:8.2f} us/agent-step"
        f"  ({len(times)} steps, built in {built:.1f} s; {shown})"
    )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 10000])
    parser.add_argument(
        "--models", nargs="+", choices=list(MODELS), default=list(MODELS)
    )
    parser.add_argument(
        "--seconds", type=float, default=4.0, help="timed seconds per model and size"
    )
    parser.add_argument("--steps", type=int, default=50, help="at most this many steps")
    parser.add_argument("--seed", type=int, default=42)
    args = parser.parse_args(argv)

    import mesa

    print(
        f"Mesa {mesa.__version__}, Python {platform.python_version()}, "
        f"CPU {cpu_model()}; mean ms per step and us per agent-step"
    )
    for name in args.models:
        for n in args.sizes:
            try:
                line = measure(name, n, args.seconds, args.steps, args.seed)
            except Exception as error:  # Mesa's own model failed at this size
                line = f"{name:16s} n={n:<6d} failed: {type(error).__name__}: {error}"
            print(line, flush=True)


if __name__ == "__main__":
    main()
