"""The ARQ lifecycle that Nova drives, timed over HTTP.

Each lifecycle is what Nova's conductor and compute do for one
accelerated server: ``POST /v2/accelerator_requests``, ``PATCH`` bind
(with a service token), ``GET ?instance=&bind_state=resolved`` until it
stops answering 423, and ``DELETE ?instance=``. Clients are threads with
one kept-alive HTTP connection each; the server runs in other processes.
"""

import http.client
import json
import statistics
import threading
import time
import urllib.parse
import uuid

from benchmarks import cpu

SERVICE_HEADERS = {'X-Service-Roles': 'service',
                   'X-Project-Id': 'bench', 'X-User-Id': 'bench',
                   'X-Roles': 'member,reader'}
STEPS = ('create', 'bind', 'resolve', 'delete')


class Response:
    """What a request answered: its status and body."""

    def __init__(self, method, url, status_code, body):
        self.method = method
        self.url = url
        self.status_code = status_code
        self.body = body

    @property
    def text(self):
        return self.body.decode('utf-8', 'replace')

    def json(self):
        return json.loads(self.body)


class Client:
    """One kept-alive connection to the API.

    It is ``http.client`` with the service's headers, JSON bodies and a
    reconnection when the server has closed the connection. It is the
    load generator, on the same two cores as the services it measures:
    at 8 clients requests' ``Session`` (preparing each request, merging
    settings, wrapping the answer) spent 2.7 to 3.8 ms of CPU per
    lifecycle, this 1.0 to 1.5 ms; the requests
    on the wire are the same.
    """

    def __init__(self, base_url):
        parts = urllib.parse.urlsplit(base_url)
        self.prefix = parts.path.rstrip('/')
        self.conn = http.client.HTTPConnection(parts.hostname, parts.port,
                                               timeout=60)

    def close(self):
        self.conn.close()

    def send(self, method, path, params=None, json_body=None):
        url = self.prefix + path
        if params:
            url += '?' + urllib.parse.urlencode(params)
        headers = dict(SERVICE_HEADERS)
        body = None
        if json_body is not None:
            body = json.dumps(json_body).encode()
            headers['Content-Type'] = 'application/json'
        for attempt in (1, 2):
            try:
                self.conn.request(method, url, body, headers)
                resp = self.conn.getresponse()
                data = resp.read()
                break
            except (http.client.RemoteDisconnected, BrokenPipeError,
                    ConnectionResetError):
                # The server closed a kept-alive connection without
                # answering (its idle timeout, a restarted worker): once
                # more on a new one.
                self.conn.close()
                if attempt == 2:
                    raise
        if resp.will_close:
            self.conn.close()
        return Response(method, url, resp.status, data)


def percentile(values, pct):
    if not values:
        return None
    ordered = sorted(values)
    index = min(len(ordered) - 1, int(round(pct / 100 * (len(ordered) - 1))))
    return ordered[index]


def summarize(samples):
    """p50/p95/p99 in milliseconds of a list of seconds."""
    ms = [s * 1000 for s in samples]
    return {'count': len(ms),
            'p50': round(percentile(ms, 50), 2) if ms else None,
            'p95': round(percentile(ms, 95), 2) if ms else None,
            'p99': round(percentile(ms, 99), 2) if ms else None,
            'mean': round(statistics.fmean(ms), 2) if ms else None}


class Lifecycle:
    """One client's view of the API."""

    def __init__(self, base_url, profile, hostname, rp_uuid):
        self.path = '/v2/accelerator_requests'
        self.profile = profile
        self.hostname = hostname
        self.rp_uuid = rp_uuid
        self.http = Client(base_url)

    def _check(self, resp, expected):
        if resp.status_code not in expected:
            raise RuntimeError('%s %s -> %s %s' % (
                resp.method, resp.url, resp.status_code,
                resp.text[:200]))
        return resp

    def run_once(self, timings):
        instance = str(uuid.uuid4())
        t0 = time.perf_counter()
        arqs = self._check(self.http.send(
            'POST', self.path,
            json_body={'device_profile_name': self.profile}),
            (201,)).json()['arqs']
        t1 = time.perf_counter()
        patch = {a['uuid']: [
            {'op': 'add', 'path': '/hostname', 'value': self.hostname},
            {'op': 'add', 'path': '/device_rp_uuid', 'value': self.rp_uuid},
            {'op': 'add', 'path': '/instance_uuid', 'value': instance}]
            for a in arqs}
        self._check(self.http.send('PATCH', self.path, json_body=patch),
                    (202,))
        t2 = time.perf_counter()
        while True:
            resp = self.http.send('GET', self.path, params={
                'instance': instance, 'bind_state': 'resolved'})
            if resp.status_code != 423:
                self._check(resp, (200,))
                break
            time.sleep(0.001)
        if any(a['state'] != 'Bound' for a in resp.json()['arqs']):
            raise RuntimeError('bind failed: %s' % resp.text[:200])
        t3 = time.perf_counter()
        self._check(self.http.send('DELETE', self.path,
                                   params={'instance': instance}), (204,))
        t4 = time.perf_counter()
        for step, value in zip(STEPS, (t1 - t0, t2 - t1, t3 - t2, t4 - t3),
                               strict=True):
            timings[step].append(value)
        timings['lifecycle'].append(t4 - t0)


def _meter_window(meter, start_at, stop_at):
    """A thread (not started) that opens ``meter``'s window at
    ``start_at`` and closes it at ``stop_at`` (``time.perf_counter()``
    values)."""
    def window():
        time.sleep(max(0.0, start_at - time.perf_counter()))
        meter.start()
        time.sleep(max(0.0, stop_at - time.perf_counter()))
        meter.stop()

    return threading.Thread(target=window, daemon=True)


def run(base_url, profile, hostname, rp_uuid, concurrency, duration,
        warmup=0.5, meter=None):
    """Run lifecycles from ``concurrency`` threads for ``duration``
    seconds (after a warm-up); returns throughput, latencies, errors,
    and with a ``benchmarks.cpu.CpuMeter``, the CPU each of its
    groups spent per lifecycle over the measured window."""
    timings = {name: [] for name in STEPS + ('lifecycle',)}
    errors = []
    lock = threading.Lock()
    start_at = time.perf_counter() + warmup
    stop_at = start_at + duration

    def worker():
        client = Lifecycle(base_url, profile, hostname, rp_uuid)
        local = {name: [] for name in timings}
        while time.perf_counter() < stop_at:
            measuring = time.perf_counter() >= start_at
            try:
                client.run_once(local if measuring else
                                {name: [] for name in timings})
            except Exception as exc:
                if measuring:
                    errors.append(str(exc))
        client.http.close()
        with lock:
            for name, values in local.items():
                timings[name].extend(values)

    threads = [threading.Thread(target=worker) for _ in range(concurrency)]
    if meter is not None:
        threads.append(_meter_window(meter, start_at, stop_at))
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    done = len(timings['lifecycle'])
    result = {'concurrency': concurrency, 'seconds': duration,
              'lifecycles': done,
              'throughput_per_s': round(done / duration, 1),
              'errors': len(errors), 'first_errors': errors[:3],
              'steps_ms': {name: summarize(values)
                           for name, values in timings.items()}}
    if meter is not None:
        result['cpu_ms_per_lifecycle'] = cpu.per_lifecycle(meter.result,
                                                           done)
    return result
