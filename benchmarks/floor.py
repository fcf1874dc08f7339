"""The machine's floor, measured with every lifecycle run.

A lifecycle is four HTTP requests, each behind one RPC call. What those
two cost on their own, on the day and the machine of the run, says how
far the lifecycle is from the floor, and makes figures taken on
different days comparable (a shared virtual machine varies by 10 to
20 % from one day to the next):

* ``rpc_call``: an oslo.messaging call to an endpoint that only returns
  its argument, over the transport the system under test uses: RabbitMQ
  between this process and a child process for the production topology,
  ``cyborg-local://`` between two threads of this process for the
  all-in-one; calls back to back, and (``after_idle_p50_ms``) each after
  5 ms of idleness, as the calls of a sequential lifecycle come: what
  waking the processes of a call costs on the machine (a virtual
  machine whose idle cores halt pays for it on every hop);
* ``http_get``: ``GET /`` on the system's API (the version document: the
  whole middleware stack and Pecan, no RPC), with requests (a request
  prepared and sent through one session, as since the first figures,
  so that floors of different days compare).

Each gives p50 and p95 in ms and the CPU this process spent per call
(for the in-process transport, that is both ends of the call); across
processes, also the CPU per call of the server (``server_cpu_ms``: the
echo server, or the API's processes) and of RabbitMQ
(``broker_cpu_ms``), where this user can see them.

``lifecycle`` adds them up as one lifecycle meets them
(``lifecycle_floor``): what the lifecycle's work has left to spend
on the day of the run, against a target such as 100 lifecycles/s.
"""

import os
import subprocess
import sys
import threading
import time
import urllib.parse
import uuid

import oslo_messaging
import requests

from benchmarks import cpu
from benchmarks import lifecycle
from cyborg_lite import conf as cl_conf
from cyborg_lite import local_transport
from cyborg_lite import rpc

CALLS = 500
WARMUP = 50
# The calls after idleness, and the idleness before each.
IDLE_CALLS = 200
IDLE_PAUSE = 0.005


class _Echo:
    target = oslo_messaging.Target(version='1.0')

    def echo(self, ctxt, value):
        return value


def _transport(url):
    conf = cl_conf.build_conf(overrides={(None, 'transport_url'): url})
    return rpc.get_transport(conf)


def _server(transport, topic):
    return rpc.get_server(transport, topic, 'floor', [_Echo()])


def _after_idle_p50(call):
    """p50 in ms of ``call`` made after ``IDLE_PAUSE`` of idleness."""
    latencies = []
    for _ in range(IDLE_CALLS):
        time.sleep(IDLE_PAUSE)
        started = time.perf_counter()
        call()
        latencies.append(time.perf_counter() - started)
    latencies.sort()
    return round(1000 * latencies[IDLE_CALLS // 2], 2)


def _measure(call, calls=CALLS, others=None):
    """Latencies and CPU per call of ``call``; ``others`` are process
    groups of ``benchmarks.cpu.CpuMeter`` whose CPU per call is
    reported too, as ``<group>_cpu_ms``."""
    for _ in range(WARMUP):
        call()
    latencies = []
    meter = cpu.CpuMeter(others or {})
    meter.start()
    spent = time.process_time()
    for _ in range(calls):
        started = time.perf_counter()
        call()
        latencies.append(time.perf_counter() - started)
    spent = time.process_time() - spent
    others_spent = meter.stop()['spent']
    latencies.sort()
    result = {'calls': calls,
              'p50_ms': round(1000 * latencies[calls // 2], 2),
              'p95_ms': round(1000 * latencies[int(calls * 0.95)], 2),
              'client_cpu_ms': round(1000 * spent / calls, 2)}
    for name, value in others_spent.items():
        result[name + '_cpu_ms'] = round(1000 * value / calls, 2)
    return result


def rpc_call(transport_url):
    """The floor of one oslo.messaging call over ``transport_url``."""
    topic = 'cyborg-lite-floor-' + uuid.uuid4().hex[:8]
    in_process = transport_url.startswith(local_transport.TRANSPORT_URL)
    transport = _transport(transport_url)
    if in_process:
        child, server = None, _server(transport, topic)
        server.start()
    else:
        child = subprocess.Popen(
            [sys.executable, '-m', 'benchmarks.floor', transport_url, topic],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
            env=dict(os.environ, PYTHONWARNINGS='ignore'))
        if child.stdout.readline().strip() != 'ready':
            raise RuntimeError('the echo server did not start')
    try:
        client = rpc.get_client(transport, topic, '1.0', timeout=30)
        others = {}
        if child is not None:
            others['server'] = ([child.pid], False)
            broker = cpu.listener_pid(urllib.parse.urlsplit(
                transport_url).port)
            if broker:
                others['broker'] = ([broker], False)
        def echo():
            client.call({}, 'echo', value={'a': 1})

        result = _measure(echo, others=others)
        result['after_idle_p50_ms'] = _after_idle_p50(echo)
    finally:
        if child is None:
            server.stop()
            server.wait()
        else:
            child.stdin.close()
            child.wait(timeout=30)
        transport.cleanup()
    result['transport'] = ('in-process' if in_process else
                           'RabbitMQ, two processes')
    return result


def http_get(base_url, server=None):
    """The floor of one HTTP request to the API: ``GET /``; ``server``,
    the API's process group (``(pids, children)``), for its CPU."""
    http = requests.Session()
    http.trust_env = False  # loopback: no proxies to look up
    url = base_url + '/'

    def get():
        request = requests.PreparedRequest()
        request.prepare(method='GET', url=url,
                        headers=lifecycle.SERVICE_HEADERS)
        http.send(request).raise_for_status()

    return _measure(get, others={'server': server} if server else None)


# One lifecycle of Nova's, in the floor's units: four HTTP requests,
# each behind one RPC call.
REQUESTS_PER_LIFECYCLE = 4


def lifecycle_floor(rpc, http, cores):
    """What the floor alone costs one lifecycle: four bare RPC calls and
    four bare ``GET /``, made one at a time, without any of the
    lifecycle's work.

    ``cpu_ms``: their CPU, every process that this user can see
    together (caller, server, broker; HTTP client and API);
    ``most_lifecycles_per_s``: what ``cores`` fully busy would run at
    that price; ``sequential_ms``: the requests' p50 back to back and
    the calls' p50 after idleness, as a lifecycle run by one client
    meets them. An estimate, not a bound: under load the API batches
    concurrent calls into one message (cheaper than one call each), and
    the benchmark's ``http.client`` clients cost less than the floor's
    requests session.
    """
    call_cpu = sum(rpc.get(name, 0.0) for name in
                   ('client_cpu_ms', 'server_cpu_ms', 'broker_cpu_ms'))
    request_cpu = http['client_cpu_ms'] + http.get('server_cpu_ms', 0.0)
    cpu_ms = REQUESTS_PER_LIFECYCLE * (call_cpu + request_cpu)
    return {
        'cpu_ms': round(cpu_ms, 2),
        'most_lifecycles_per_s': round(cores * 1000 / cpu_ms, 1),
        'sequential_ms': round(REQUESTS_PER_LIFECYCLE * (
            rpc['after_idle_p50_ms'] + http['p50_ms']), 2),
    }


def measure(base_url, transport_url, api_server=None):
    result = {'rpc_call': rpc_call(transport_url),
              'http_get': http_get(base_url, api_server)}
    result['lifecycle'] = lifecycle_floor(
        result['rpc_call'], result['http_get'], os.cpu_count())
    return result


def _serve(transport_url, topic):
    """The child process of ``rpc_call``: serve until stdin closes."""
    server = _server(_transport(transport_url), topic)
    server.start()
    print('ready', flush=True)
    done = threading.Event()
    threading.Thread(target=lambda: (sys.stdin.read(), done.set()),
                     daemon=True).start()
    done.wait()
    server.stop()
    server.wait()


if __name__ == '__main__':
    _serve(*sys.argv[1:3])
