"""A sweep through a Dask LocalCluster equals the same sweep run in this process."""

import numpy as np
import pandas as pd
import pytest

import gbai

distributed = pytest.importorskip(
    "distributed", reason="the dask extra is not installed: pip install -e '.[dask]'")


def test_sweep_on_a_local_cluster_equals_the_local_sweep():
    instances = {"example": gbai.table1_example(), "exp3": gbai.paper_instance("exp3", 0.3)}
    options = dict(n_runs=12, delta=0.1, seed=5, cache_dir=None, progress=False, chunk_size=4)
    local = gbai.sweep(instances, ["css-lucb", "ae"], workers=1, **options)
    # Two worker processes, so the chunks really travel (pickled) to other interpreters.
    with (distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None)
          as cluster, distributed.Client(cluster) as client):
        remote = gbai.sweep(instances, ["css-lucb", "ae"], executor=client.get_executor(), **options)
    columns = [column for column in local.columns if column != "counts"]
    pd.testing.assert_frame_equal(remote[columns], local[columns])
    assert all(np.array_equal(a, b) for a, b in zip(remote["counts"], local["counts"]))
    assert local["stopped"].all()
