"""Allocation-candidate latency of placement_stub versus fleet size.

Builds 1, 100 and 1,000 compute-node trees (each root with VCPU,
MEMORY_MB and DISK_GB, and 8 FPGA children with CUSTOM_ traits), then
times a Nova-like ``GET /allocation_candidates`` at microversion 1.36, with
``limit=50`` and ``limit=1000`` (Nova's default ``max_placement_results``),
and prints JSON with p50 and p95 in milliseconds and the 1-minute load
average measured next to them. The app is frozen after ``deploy()``, as
the server entry points do; a few warm-up requests run before timing.

Run: ``python -m benchmarks.placement_candidates [--sizes 1,100,1000]``.
"""

import argparse
import json
import os
import statistics
import tempfile
import time
import uuid

import webtest

from placement_stub import conf as conf_lib
from placement_stub import context
from placement_stub.db import api as db_api
from placement_stub.db import inventories as inventories_db
from placement_stub.db import providers
from placement_stub.db import traits as traits_db
from placement_stub import deploy

HEADERS = {'OpenStack-API-Version': 'placement 1.36'}
CHILDREN = 8
TRAITS = ('CUSTOM_X', 'CUSTOM_FPGA_INTEL_ARRIA10')
WARMUP = 3


def _app(tmpdir):
    path = os.path.join(tmpdir, 'placement.sqlite')
    conf = conf_lib.build_conf(overrides={
        ('placement_database', 'connection'): 'sqlite:///' + path,
        ('placement_database', 'sqlite_synchronous'): False,
        ('api', 'auth_strategy'): 'noauth2',
        ('placement', 'sync_on_startup'): True})
    facade = db_api.create_facade(conf)
    app = webtest.TestApp(deploy.deploy(conf, facade))
    deploy.freeze_startup_heap()
    return app, context.RequestContext(facade=facade)


def _provider(ctx, name, parent=None, inventories=None, traits=None):
    rp = providers.create_provider(ctx, str(uuid.uuid4()), name, parent)
    if inventories:
        full = {rc: dict(inventories_db.DEFAULTS, total=total)
                for rc, total in inventories.items()}
        inventories_db.set_inventories(ctx, rp, rp['generation'], full)
    if traits:
        traits_db.set_provider_traits(ctx, rp['id'], traits)
    return rp['uuid']


def build_trees(ctx, start, count):
    """Trees written through the DB layer, one transaction per tree.

    The HTTP path is what is measured; building through it would only
    make the benchmark slow to set up.
    """
    for trait in TRAITS:
        traits_db.ensure_trait(ctx, trait)
    for i in range(start, start + count):
        with ctx.facade.writer.using(ctx):
            root = _provider(ctx, 'cn%05d' % i, inventories={
                'VCPU': 64, 'MEMORY_MB': 262144, 'DISK_GB': 2000})
            for j in range(CHILDREN):
                _provider(ctx, 'cn%05d_fpga%d' % (i, j), parent=root,
                          inventories={'FPGA': 1}, traits=TRAITS)


def measure(app, limit, runs):
    url = ('/allocation_candidates?resources=VCPU:1,MEMORY_MB:512'
           '&resourcesdevice_profile_0=FPGA:1'
           '&requireddevice_profile_0=CUSTOM_X'
           '&group_policy=none&limit=%d' % limit)
    for _ in range(WARMUP):
        app.get(url, headers=HEADERS)
    timings, count = [], 0
    for _ in range(runs):
        started = time.perf_counter()
        count = len(app.get(url, headers=HEADERS).json[
            'allocation_requests'])
        timings.append((time.perf_counter() - started) * 1000)
    timings.sort()
    return {'limit': limit, 'candidates': count,
            'p50_ms': round(statistics.median(timings), 2),
            'p95_ms': round(timings[int(len(timings) * 0.95) - 1], 2),
            'runs': runs, 'load_avg_1m': round(os.getloadavg()[0], 2)}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--sizes', default='1,100,1000')
    parser.add_argument('--limits', default='50,1000')
    parser.add_argument('--runs', type=int, default=100)
    args = parser.parse_args(argv)
    sizes = [int(s) for s in args.sizes.split(',')]
    limits = [int(n) for n in args.limits.split(',')]
    results = []
    with tempfile.TemporaryDirectory() as tmpdir:
        app, ctx = _app(tmpdir)
        built = 0
        for size in sizes:
            build_trees(ctx, built, size - built)
            built = size
            for limit in limits:
                results.append(dict(trees=size, providers=size * (
                    CHILDREN + 1), **measure(app, limit, args.runs)))
    print(json.dumps({'benchmark': 'placement_candidates',
                      'microversion': '1.36', 'cpus': os.cpu_count(),
                      'results': results},
                     indent=2))


if __name__ == '__main__':
    main()
