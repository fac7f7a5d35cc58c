"""The Dask distributed executor on a LocalCluster (loopback only) gives bit-identical results
to the serial and pool executors (docs/sweeps.md).  Skipped only where Dask is not installed
(it is in the test extra, so CI runs it)."""

import importlib.util
import time

import pytest

from exactattn.sweep import DaskExecutor, Store, SweepSpec, run_sweep, run_trials

# distributed is imported by the executor when a test starts a cluster, not at collection
pytestmark = pytest.mark.skipif(importlib.util.find_spec("distributed") is None,
                                reason="could not import 'distributed': not installed (the "
                                       "dask extra; in the test extra, so CI runs it)")

SPEC = {"run": [{"learner": "multi-head", "d,H": [[1, 2], [2, 2]], "box": [2, 1000],
                 "trials": 10},
                {"learner": "single-head", "d": 2, "trials": 3}]}


@pytest.fixture(scope="module")
def cluster():
    start = time.perf_counter()
    ex = DaskExecutor("local", workers=2)
    print(f"\nLocalCluster with {ex.workers} workers started in "
          f"{time.perf_counter() - start:.2f} s")
    yield ex
    ex.close()


def _results(executor, **kw):
    spec = SweepSpec.from_dict(SPEC)
    with Store(":memory:") as db:
        report = run_sweep(spec, db, executor=executor, batch=3, **kw)
        assert report.complete
        return {r["key"]: r["result"] for r in db.rows(spec.trials())}


@pytest.mark.slow
def test_dask_local_cluster_is_bit_identical_to_serial_and_pool(cluster):
    serial = _results("serial")
    assert len(serial) == 43
    assert _results(cluster) == serial
    assert _results("pool", workers=2) == serial
    assert cluster.workers == 2 and cluster.startup_seconds > 0


@pytest.mark.slow
def test_run_trials_on_dask(cluster):
    params = SweepSpec.from_dict({"run": [{"d": 2, "H": 1}]}).trials()[0].params
    got = run_trials("exactattn.sweep.trials:learner_trial", [params], range(4),
                     executor=cluster, batch=2)
    assert [r["outcome"] for r in got] == ["recovered"] * 4


@pytest.mark.slow
def test_a_bad_scheduler_address_is_one_line():
    from exactattn.sweep import SpecError
    with pytest.raises(SpecError, match="give 'local' or a scheduler address"):
        DaskExecutor("host:8786")
