"""The one dask cluster of the distributed tests.

A ``distributed.LocalCluster`` of two worker processes (one thread each),
started once for the whole folder: its tests form one ``xdist_group``, so
under ``pytest -n 2`` (``--dist loadgroup``, in pyproject) they run in one
worker, which starts the one cluster. Its workers load sparseset's kernels through
:func:`sparseset.distributed.warm` before any test runs, so that a test
times only its own work; a worker a test kills is restarted by its nanny
and warmed again by the same plugin.
"""

import pathlib

import pytest
from distributed import Client, LocalCluster

from sparseset.distributed import warm


def pytest_collection_modifyitems(config, items):
    here = pathlib.Path(__file__).parent
    for item in items:
        if item.path.is_relative_to(here):
            item.add_marker(pytest.mark.xdist_group("cluster"))


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
