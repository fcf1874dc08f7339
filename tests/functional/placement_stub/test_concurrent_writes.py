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


def test_concurrent_claims_on_one_provider_all_land(db_url):
    """Consumers that claim the same provider at once, with room for all
    of them, all get 204: a clash on the provider generation, which no
    client sent, is retried by the server, as Placement does."""
    consumers = 12
    with PlacementFixture(connection=db_url) as placement:
        http = requests.Session()
        headers = {'OpenStack-API-Version': 'placement 1.36'}
        rp = http.post(placement.endpoint + '/resource_providers',
                       json={'name': 'shared', 'uuid': str(uuid.uuid4())},
                       headers=headers).json()
        resp = http.put(
            placement.endpoint + '/resource_providers/%s/inventories'
            % rp['uuid'], headers=headers, json={
                'resource_provider_generation': rp['generation'],
                'inventories': {'FPGA': {'total': consumers}}})
        assert resp.status_code == 200, resp.text
        barrier = threading.Barrier(consumers)

        def claim(n):
            session = requests.Session()
            barrier.wait()
            return session.put(
                placement.endpoint + '/allocations/' + str(uuid.uuid4()),
                headers=headers, json={
                    'allocations': {rp['uuid']: {'resources': {'FPGA': 1}}},
                    'consumer_generation': None,
                    'project_id': 'p', 'user_id': 'u'})

        results = []
        threads = [threading.Thread(target=lambda n=n: results.append(
            claim(n))) for n in range(consumers)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        usages = http.get(placement.endpoint + '/resource_providers/%s/usages'
                          % rp['uuid'], headers=headers).json()['usages']
    assert [r.status_code for r in results] == [204] * consumers, \
        [r.text for r in results if r.status_code != 204]
    assert usages == {'FPGA': consumers}


def test_concurrent_claims_never_exceed_capacity(db_url):
    """More consumers than the provider has room for claim it at once,
    round after round: exactly as many as fit get 204 and the others 409,
    never more than the inventory allows. A writer that checked capacity
    before a rival committed must lose the generation compare-and-swap,
    even if it reads the provider's generation after the rival's commit."""
    capacity, claimants, rounds = 2, 6, 15
    headers = {'OpenStack-API-Version': 'placement 1.36'}
    with PlacementFixture(connection=db_url) as placement:
        http = requests.Session()
        rp = http.post(placement.endpoint + '/resource_providers',
                       json={'name': 'scarce', 'uuid': str(uuid.uuid4())},
                       headers=headers).json()
        resp = http.put(
            placement.endpoint + '/resource_providers/%s/inventories'
            % rp['uuid'], headers=headers, json={
                'resource_provider_generation': rp['generation'],
                'inventories': {'FPGA': {'total': capacity}}})
        assert resp.status_code == 200, resp.text
        sessions = [requests.Session() for _ in range(claimants)]

        for _ in range(rounds):
            barrier = threading.Barrier(claimants)
            consumers = [str(uuid.uuid4()) for _ in range(claimants)]
            codes = [None] * claimants

            def claim(n, consumers=consumers, barrier=barrier, codes=codes):
                barrier.wait()
                codes[n] = sessions[n].put(
                    placement.endpoint + '/allocations/' + consumers[n],
                    headers=headers, json={
                        'allocations': {
                            rp['uuid']: {'resources': {'FPGA': 1}}},
                        'consumer_generation': None,
                        'project_id': 'p', 'user_id': 'u'}).status_code

            threads = [threading.Thread(target=claim, args=(n,))
                       for n in range(claimants)]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            usages = http.get(
                placement.endpoint + '/resource_providers/%s/usages'
                % rp['uuid'], headers=headers).json()['usages']
            assert usages == {'FPGA': capacity}, codes
            assert sorted(codes) == [204] * capacity + [409] * (
                claimants - capacity)
            for consumer, code in zip(consumers, codes, strict=True):
                if code == 204:
                    assert http.delete(
                        placement.endpoint + '/allocations/' + consumer,
                        headers=headers).status_code == 204
