"""Concurrent writers on the stub's SQLite file wait their turn: no
"database is locked" 500s, and every write lands."""

import threading
import uuid

import requests

from placement_stub.fixture import PlacementFixture

HEADERS = {'OpenStack-API-Version': 'placement 1.20'}


def test_concurrent_writers_all_succeed():
    statuses = []
    lock = threading.Lock()
    with PlacementFixture() as placement:
        def work(n):
            http = requests.Session()
            for i in range(10):
                got = [http.post(placement.endpoint + '/resource_providers',
                                 json={'name': 'rp-%d-%d' % (n, i),
                                       'uuid': str(uuid.uuid4())},
                                 headers=HEADERS).status_code,
                       http.put(placement.endpoint + '/traits/CUSTOM_T%d' % i,
                                headers=HEADERS).status_code]
                with lock:
                    statuses.extend(got)

        threads = [threading.Thread(target=work, args=(n,)) for n in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        providers = requests.get(placement.endpoint + '/resource_providers',
                                 headers=HEADERS).json()['resource_providers']
    assert set(statuses) <= {200, 201, 204}
    assert len(providers) == 80
