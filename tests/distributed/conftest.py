"""The one dask cluster of the distributed tests.

A ``distributed.LocalCluster`` of two worker processes (one thread each),
started once for the whole folder (each pytest-xdist process starts its
own). The test process compiles the kernels first
(:func:`~sparseset.distributed.warming.warm_here`), into the numba cache the
workers inherit, and the workers then load them through
:func:`sparseset.distributed.warm` before any test runs, so that a test
times only its own work; a worker a test kills is restarted by its nanny
and warmed again by the same plugin.
"""

import pytest
from distributed import Client, LocalCluster

from sparseset.distributed import warm
from sparseset.distributed.warming import warm_here


@pytest.fixture(scope="session")
def client():
    # Compile here first, into this process's numba cache, which the
    # cluster's workers inherit (NUMBA_CACHE_DIR): they then load the
    # kernels instead of compiling them again, two at once, into one cache.
    warm_here()
    with (
        LocalCluster(
            n_workers=2,
            threads_per_worker=1,
            processes=True,
            dashboard_address=None,
        ) as cluster,
        Client(cluster) as client,
    ):
        warm(client)
        yield client
