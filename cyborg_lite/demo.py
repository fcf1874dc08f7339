"""The all-in-one demo: an ARQ's whole life over the HTTP API.

Creates a device profile, creates its ARQ, binds it as Nova would (with a
service token), shows it, unbinds it, deletes it and the profile, and
prints each state. It talks HTTP only, like any client.
"""

import json
import uuid

import requests

SERVICE = {'X-Service-Roles': 'service'}


class Demo:
    def __init__(self, url, hostname, out=print):
        self.url = url.rstrip('/') + '/v2'
        self.hostname = hostname
        self.out = out
        self.http = requests.Session()

    def _call(self, method, path, expect, **kwargs):
        resp = self.http.request(method, self.url + path, timeout=30,
                                 **kwargs)
        if resp.status_code != expect:
            raise RuntimeError('%s %s answered %s: %s' % (
                method, path, resp.status_code, resp.text))
        return resp.json() if resp.content else None

    def step(self, title, arq=None):
        if arq is None:
            self.out('* %s' % title)
            return
        handle = arq['attach_handle_info'] or '-'
        self.out('* %-34s state=%-12s handle=%s' % (
            title, arq['state'], json.dumps(handle) if arq[
                'attach_handle_type'] else '-'))

    def run(self, profile='demo-fpga'):
        self._call('POST', '/device_profiles', 201, json=[{
            'name': profile, 'description': 'one fake FPGA',
            'groups': [{'resources:FPGA': '1',
                        'trait:CUSTOM_FAKE_DEVICE': 'required'}]}])
        self.step('created device profile %s' % profile)
        deployables = self._call('GET', '/deployables', 200)['deployables']
        fpga = next(d for d in deployables
                    if '"FPGA"' in d['attributes_list']
                    and d['name'].startswith(self.hostname))
        arq = self._call('POST', '/accelerator_requests', 201,
                         json={'device_profile_name': profile})['arqs'][0]
        self.step('created ARQ %s' % arq['uuid'][:8], arq)
        instance = str(uuid.uuid4())
        self._call('PATCH', '/accelerator_requests', 202, headers=SERVICE,
                   json={arq['uuid']: [
                       {'op': 'add', 'path': '/hostname',
                        'value': self.hostname},
                       {'op': 'add', 'path': '/device_rp_uuid',
                        'value': fpga['rp_uuid']},
                       {'op': 'add', 'path': '/instance_uuid',
                        'value': instance}]})
        arq = self._call('GET', '/accelerator_requests/' + arq['uuid'], 200)
        self.step('bound to instance %s' % instance[:8], arq)
        self._call('PATCH', '/accelerator_requests/' + arq['uuid'], 202,
                   headers=SERVICE, json={arq['uuid']: [
                       {'op': 'remove', 'path': p} for p in
                       ('/hostname', '/device_rp_uuid', '/instance_uuid')]})
        arq = self._call('GET', '/accelerator_requests/' + arq['uuid'], 200)
        self.step('unbound', arq)
        self._call('DELETE', '/accelerator_requests/' + arq['uuid'], 204)
        self._call('GET', '/accelerator_requests/' + arq['uuid'], 404)
        self.step('deleted the ARQ')
        self._call('DELETE', '/device_profiles/' + profile, 204)
        self.step('deleted device profile %s' % profile)
        left = self._call('GET', '/accelerator_requests', 200)['arqs']
        self.out('Left behind: %d ARQ(s)' % len(left))
        return len(left) == 0
