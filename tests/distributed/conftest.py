"""The one dask cluster of the distributed tests.

A ``distributed.LocalCluster`` of two worker processes (one thread each),
started once for the whole folder (each pytest-xdist process starts its
own). Its workers load sparseset's kernels through
:func:`sparseset.distributed.warm` before any test runs, so that a test
times only its own work; a worker a test kills is restarted by its nanny
and warmed again by the same plugin.
"""

import pytest
from distributed import Client, LocalCluster

from sparseset.distributed import warm


@pytest.fixture(scope="session")
def client():
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
