"""
Counting events per user
========================

The counter job on one machine: a log of events, each with a user id up
to ``2**40`` and an amount, counted and summed per user with
``add_at`` (every occurrence adds, as ``np.add.at`` does), on a
:class:`~sparseset.SparseMap` for the counts alone and a
:class:`~sparseset.ComponentStore` for several columns at once. The hash
index takes the 40-bit ids with no id space to reserve. Next to it,
pandas' ``value_counts`` and ``groupby`` give the same answer. The
sharded version of this job, on a dask cluster, is in
:doc:`../guide/distributed`.
"""

import time

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from sparseset import ComponentStore, SparseMap

rng = np.random.default_rng(0)
users = rng.integers(0, 2**40, 50_000)
# Some users are far busier than others: a Zipf-like draw of who acts.
events = users[np.minimum(rng.zipf(1.3, 1_000_000), 50_000) - 1]
spent = rng.exponential(10.0, events.size)

# Load the compiled kernels on a few events first, so the timing below is
# the counting alone.
SparseMap("i8", index="hash").add_at(events[:10], 1)
ComponentStore({"n": "i8", "spent": "f8"}, index="hash").add_at(
    events[:10], n=1, spent=spent[:10]
)
pd.DataFrame({"user": events[:10], "spent": spent[:10]}).groupby("user").sum()

started = time.perf_counter()
counts = SparseMap("i8", index="hash")
counts.add_at(events, 1)
per_user = ComponentStore({"n": "i8", "spent": "f8"}, index="hash")
per_user.add_at(events, n=1, spent=spent)
ours = time.perf_counter() - started

started = time.perf_counter()
frame = pd.DataFrame({"user": events, "spent": spent})
expected = frame.groupby("user").agg(n=("spent", "size"), spent=("spent", "sum"))
theirs = time.perf_counter() - started

top = expected["n"].nlargest(10)
assert per_user.get(top.index.to_numpy())["n"].tolist() == top.tolist()
assert counts.get(int(top.index[0])) == top.iloc[0]
assert len(per_user) == len(expected)
print(f"{events.size:,} events from {len(per_user):,} users")
print(f"add_at: {ours * 1e3:.0f} ms; pandas groupby: {theirs * 1e3:.0f} ms (here, now)")

# %%
# The users by rank: the busiest few account for most of the events.

ranked = np.sort(per_user["n"])[::-1]
figure, (left, right) = plt.subplots(1, 2, figsize=(10, 4))
left.loglog(np.arange(1, ranked.size + 1), ranked)
left.set(xlabel="user rank", ylabel="events", title="events per user, by rank")
busiest = per_user.get(top.index.to_numpy())
right.barh([f"{u:#x}" for u in top.index[::-1]], busiest["spent"][::-1])
right.set(xlabel="total spent", title="the ten busiest users")
figure.tight_layout()
