"""Id sets sharded over a dask cluster: sparseset's kernels inside dask.distributed.

Needs the ``distributed`` extra (``pip install "sparseset[distributed]"``);
``import sparseset`` alone never imports dask. :class:`ShardedSet` holds one
:class:`~sparseset.SparseSet` per shard in the workers' memory,
:class:`ShardedStore` one :class:`~sparseset.ComponentStore` (ids with
columns: counters, keyed tables); :func:`unique` and :func:`first_seen`
deduplicate streams of ids through the same shards. :class:`Layout` says
which shard an id goes to. :func:`warm` has every worker load the
compiled kernels before the first task needs them.

Examples
--------
>>> import numpy as np
>>> from sparseset.distributed import ShardedSet, ShardedStore, first_seen
>>> s = ShardedSet(np.array([3, 8, 3]), shards=2)
>>> s.contains([8, 4]).compute().tolist()
[True, False]
>>> first_seen(np.array([5, 6, 5])).compute().tolist()
[True, True, False]
>>> counts = ShardedStore({"n": "i8"}, shards=2).add_at(np.array([4, 4, 9]), n=1)
>>> counts.get([4, 9])["n"].compute().tolist()
[2, 1]
"""

try:
    import dask.array  # noqa: F401
    import distributed  # noqa: F401
except ImportError as error:
    raise ImportError(
        f"sparseset.distributed needs dask and distributed ({error.name} is "
        'missing): pip install "sparseset[distributed]"'
    ) from error

from dask.sizeof import sizeof

from ..sets.sparse_set import SparseSet
from ..stores.component_store import ComponentStore
from .layout import Layout
from .sharded_set import ShardedSet
from .sharded_store import ShardedStore
from .streams import first_seen, unique
from .warming import WarmKernels, warm


def _sizeof_shard(s: SparseSet | ComponentStore) -> int:
    # What a shard holds. dask places each task where most of its input
    # bytes are: without this it would count a shard as a small Python
    # object and move gigabytes of shard to a megabyte of ids.
    return s.nbytes


# A call, not a decorator: dask's register is unannotated, and as a
# decorator it would leave the function untyped.
sizeof.register(SparseSet, _sizeof_shard)
sizeof.register(ComponentStore, _sizeof_shard)


__all__ = [
    "Layout",
    "ShardedSet",
    "ShardedStore",
    "WarmKernels",
    "first_seen",
    "unique",
    "warm",
]
