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


CLAIM_HEADERS = {'OpenStack-API-Version': 'placement 1.36'}


def _provider_with_fpgas(http, endpoint, name, total):
    """A new provider with ``total`` FPGA; its uuid."""
    rp = http.post(endpoint + '/resource_providers',
                   json={'name': name, 'uuid': str(uuid.uuid4())},
                   headers=CLAIM_HEADERS).json()
    resp = http.put(
        endpoint + '/resource_providers/%s/inventories' % rp['uuid'],
        headers=CLAIM_HEADERS, json={
            'resource_provider_generation': rp['generation'],
            'inventories': {'FPGA': {'total': total}}})
    assert resp.status_code == 200, resp.text
    return rp['uuid']


def _at_once(calls):
    """Run the ``calls`` (no arguments) from threads released at once;
    their results, in order."""
    barrier = threading.Barrier(len(calls))
    results = [None] * len(calls)

    def run(n):
        barrier.wait()
        results[n] = calls[n]()

    threads = [threading.Thread(target=run, args=(n,))
               for n in range(len(calls))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return results


def _claim_at_once(endpoint, rp_uuid, consumers, sessions):
    """Each consumer claims one FPGA of the provider, all released at
    once from threads; the responses, in consumer order."""
    return _at_once([
        lambda session=session, consumer=consumer: session.put(
            endpoint + '/allocations/' + consumer,
            headers=CLAIM_HEADERS, json={
                'allocations': {rp_uuid: {'resources': {'FPGA': 1}}},
                'consumer_generation': None,
                'project_id': 'p', 'user_id': 'u'})
        for session, consumer in zip(sessions, consumers, strict=False)])


def _usages(http, endpoint, rp_uuid):
    return http.get(endpoint + '/resource_providers/%s/usages' % rp_uuid,
                    headers=CLAIM_HEADERS).json()['usages']


def test_concurrent_claims_on_one_provider_all_land(db_url):
    """Consumers that claim the same provider at once, with room for all
    of them, all get 204: a clash on the provider generation, which no
    client sent, is retried by the server, as Placement does."""
    consumers = 12
    with PlacementFixture(connection=db_url) as placement:
        http = requests.Session()
        rp_uuid = _provider_with_fpgas(http, placement.endpoint, 'shared',
                                       consumers)
        results = _claim_at_once(
            placement.endpoint, rp_uuid,
            [str(uuid.uuid4()) for _ in range(consumers)],
            [requests.Session() for _ in range(consumers)])
        usages = _usages(http, placement.endpoint, rp_uuid)
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
    with PlacementFixture(connection=db_url) as placement:
        http = requests.Session()
        rp_uuid = _provider_with_fpgas(http, placement.endpoint, 'scarce',
                                       capacity)
        sessions = [requests.Session() for _ in range(claimants)]
        for _ in range(rounds):
            consumers = [str(uuid.uuid4()) for _ in range(claimants)]
            codes = [r.status_code for r in _claim_at_once(
                placement.endpoint, rp_uuid, consumers, sessions)]
            usages = _usages(http, placement.endpoint, rp_uuid)
            assert usages == {'FPGA': capacity}, codes
            assert sorted(codes) == [204] * capacity + [409] * (
                claimants - capacity)
            for consumer, code in zip(consumers, codes, strict=True):
                if code == 204:
                    assert http.delete(
                        placement.endpoint + '/allocations/' + consumer,
                        headers=CLAIM_HEADERS).status_code == 204


def test_concurrent_creates_of_one_name_are_idempotent(db_url):
    """Compute hosts that start together create the same trait, resource
    class and aggregate at once: one 201 and 204s (200s for providers'
    aggregates), as Placement answers, never a 500 or a 409."""
    writers = 6
    with PlacementFixture(connection=db_url) as placement:
        endpoint = placement.endpoint
        sessions = [requests.Session() for _ in range(writers)]
        for round_ in range(3):
            for collection in ('traits', 'resource_classes'):
                url = '%s/%s/CUSTOM_AT_ONCE_%d' % (endpoint, collection,
                                                   round_)
                codes = [r.status_code for r in _at_once([
                    lambda s=s, u=url: s.put(u, headers=CLAIM_HEADERS)
                    for s in sessions])]
                assert sorted(codes) == [201] + [204] * (writers - 1), codes
            aggregate = str(uuid.uuid4())
            providers = [_provider_with_fpgas(
                sessions[0], endpoint, 'agg-%d-%d' % (round_, n), 1)
                for n in range(writers)]
            codes = [r.status_code for r in _at_once([
                lambda s=s, rp=rp, agg=aggregate: s.put(
                    endpoint + '/resource_providers/%s/aggregates' % rp,
                    headers={'OpenStack-API-Version': 'placement 1.1'},
                    json=[agg])
                for s, rp in zip(sessions, providers, strict=True)])]
            assert codes == [200] * writers, codes


def test_a_delete_racing_a_replacement_keeps_the_consumer(db_url):
    """A consumer's allocations replaced and deleted at once: whichever
    wins, an allocation left standing keeps its consumer, so it counts
    in its project's usages."""
    with PlacementFixture(connection=db_url) as placement:
        endpoint = placement.endpoint
        http = requests.Session()
        rp_uuid = _provider_with_fpgas(http, endpoint, 'contested', 8)
        for _ in range(10):
            consumer = str(uuid.uuid4())
            url = endpoint + '/allocations/' + consumer
            assert http.put(url, headers=CLAIM_HEADERS, json={
                'allocations': {rp_uuid: {'resources': {'FPGA': 1}}},
                'consumer_generation': None, 'project_id': 'p',
                'user_id': 'u'}).status_code == 204
            replace, delete = _at_once([
                lambda u=url: requests.put(u, headers=CLAIM_HEADERS, json={
                    'allocations': {rp_uuid: {'resources': {'FPGA': 4}}},
                    'consumer_generation': 1, 'project_id': 'p',
                    'user_id': 'u'}),
                lambda u=url: requests.delete(u, headers=CLAIM_HEADERS)])
            assert replace.status_code in (204, 409), replace.text
            assert delete.status_code in (204, 404, 409), delete.text
            left = http.get(url, headers=CLAIM_HEADERS).json()
            usages = http.get(endpoint + '/usages?project_id=p',
                              headers=CLAIM_HEADERS).json()['usages']
            assert usages == left['allocations'].get(
                rp_uuid, {}).get('resources', {}), (left, usages)
            if left['allocations']:
                assert http.delete(url, headers=CLAIM_HEADERS
                                   ).status_code == 204
