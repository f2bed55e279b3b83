"""The experiment store on a PostgreSQL server that goes away: recording and reading raise
``TriageStoreUnavailable`` (nothing written), and the same store resumes once the server is back."""

from __future__ import annotations

import pytest

from crp_core.decisions import TriageStoreUnavailable
from crp_core.history import Experiment, ExperimentStore
from tests.support.postgres import PostgresServer, pg_bin, unavailable


@pytest.fixture(scope="module")
def own_server():
    """A PostgreSQL server of this module's own: the test stops and starts it."""
    bindir = pg_bin()
    if bindir is None:
        unavailable("no initdb")
    server = PostgresServer(bindir).start()
    yield server
    server.remove()


def test_a_server_gone_away_is_unavailable_and_the_store_resumes(own_server):
    url = own_server.new_database()
    e = Experiment(kind="check", recorded_by="ann", metrics={"recall.mean": 1.0})
    with ExperimentStore(url, busy_timeout=2) as store:
        assert store.record(e).id == 1
        own_server.stop()
        try:
            with pytest.raises(TriageStoreUnavailable, match="cannot record the experiment: the database server"):
                store.record(e)
            with pytest.raises(TriageStoreUnavailable, match="cannot read the experiment history"):
                store.list()
        finally:
            own_server.start()
        assert store.record(e).id == 2  # the same store, once the server is back; nothing was written meanwhile
        assert [x.id for x in store.list()] == [2, 1]
