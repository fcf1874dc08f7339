"""The fixtures upstream Placement's gabbi files name, on placement_stub.

Each YAML file of ``placement/tests/functional/gabbits`` (shipped in the
``openstack-placement`` package) starts with ``fixtures:``, naming
classes of this module. Each class starts a fresh placement_stub app on
its own SQLite file, sets the environment variables the file reads
(``$ENVIRON['RP_UUID']``, ...) and builds the file's starting data:
providers, inventories, traits, aggregates and allocations, written
through the app's own HTTP API (the data is the same as upstream's; the
code that makes it is ours).

Gabbi builds its HTTP client, and so calls ``setup_app``, when the
tests are collected, before any fixture has started; the app it gets
forwards each request to the app of the fixture running at the time.
"""

import json
import os
import shutil
import tempfile
import uuid

from gabbi import fixture
import webob
import yaml

from placement_stub import conf as conf_lib
from placement_stub import deploy
from placement_stub import policies


def _new_uuid():
    return str(uuid.uuid4())


class _Current:
    """The app of the fixture now running (one file runs at a time)."""

    app = None


class ForwardingApp:
    """WSGI app handed to gabbi at collection time; forwards to the
    running fixture's app."""

    def __call__(self, environ, start_response):
        if _Current.app is None:
            raise RuntimeError('no placement fixture is running')
        return _Current.app(environ, start_response)


def setup_app():
    """The intercept factory for ``gabbi.driver.build_tests``."""
    return ForwardingApp()


class Builder:
    """Writes a fixture's starting data through the app's HTTP API, as an
    admin at the latest microversion; any unexpected status is an
    error."""

    HEADERS = {'X-Auth-Token': 'admin', 'Accept': 'application/json'}

    def __init__(self, app):
        self.app = app

    def call(self, method, path, body=None, expect=(200, 201, 204),
             version='latest'):
        headers = dict(self.HEADERS)
        headers['OpenStack-API-Version'] = 'placement ' + version
        req = webob.Request.blank(path, method=method, headers=headers)
        if body is not None:
            req.body = json.dumps(body).encode()
            req.content_type = 'application/json'
        resp = req.get_response(self.app)
        if resp.status_int not in expect:
            raise RuntimeError('fixture %s %s: %s %s' % (
                method, path, resp.status, resp.text))
        return resp.json if resp.body else None

    def generation(self, rp_uuid):
        return self.call('GET', '/resource_providers/' + rp_uuid)[
            'generation']

    def create_provider(self, name, *aggregates, parent=None, rp_uuid=None):
        body = {'name': name, 'uuid': rp_uuid or _new_uuid()}
        if parent:
            body['parent_provider_uuid'] = parent
        rp = self.call('POST', '/resource_providers', body)
        if aggregates:
            self.set_aggregates(rp['uuid'], *aggregates)
        return rp['uuid']

    def set_aggregates(self, rp_uuid, *aggregates):
        self.call('PUT', '/resource_providers/%s/aggregates' % rp_uuid, {
            'aggregates': list(aggregates),
            'resource_provider_generation': self.generation(rp_uuid)})

    def ensure_resource_class(self, name):
        if name.startswith('CUSTOM_'):
            self.call('PUT', '/resource_classes/' + name)

    def add_inventory(self, rp_uuid, rc, total, **fields):
        """One more inventory record; ``max_unit`` defaults to
        ``total``."""
        self.ensure_resource_class(rc)
        fields.setdefault('max_unit', total)
        self.call('POST', '/resource_providers/%s/inventories' % rp_uuid,
                  dict(fields, resource_class=rc, total=total,
                       resource_provider_generation=self.generation(
                           rp_uuid)))

    def set_traits(self, rp_uuid, *traits):
        for name in traits:
            if name.startswith('CUSTOM_'):
                self.call('PUT', '/traits/' + name)
        self.call('PUT', '/resource_providers/%s/traits' % rp_uuid, {
            'traits': list(traits),
            'resource_provider_generation': self.generation(rp_uuid)})

    def allocate(self, rp_uuid, resources, project_id, user_id,
                 consumer_uuid=None):
        """Allocations of a new consumer (of no consumer type, as
        upstream's fixtures make them) against one provider."""
        consumer_uuid = consumer_uuid or _new_uuid()
        self.call('PUT', '/allocations/' + consumer_uuid, {
            'allocations': {rp_uuid: {'resources': resources}},
            'project_id': project_id, 'user_id': user_id,
            'consumer_generation': None}, version='1.28')
        return consumer_uuid


# The variables every file may read, each a fresh uuid per file but for
# the resource class names.
API_ENVIRON_UUIDS = (
    'RP_UUID', 'RP_NAME', 'RP_UUID1', 'RP_NAME1', 'RP_UUID2', 'RP_NAME2',
    'PROJECT_ID', 'ADMIN_PROJECT_ID', 'SERVICE_PROJECT_ID', 'USER_ID',
    'PROJECT_ID_ALT', 'USER_ID_ALT', 'INSTANCE_UUID', 'MIGRATION_UUID',
    'CONSUMER_UUID', 'PARENT_PROVIDER_UUID', 'ALT_PARENT_PROVIDER_UUID')
API_ENVIRON_NAMES = {
    'CUSTOM_RES_CLASS': 'CUSTOM_IRON_NFV',
    'CUSTOM_RES_CLASS1': 'CUSTOM_IRON_NFV1',
    'CUSTOM_RES_CLASS2': 'CUSTOM_IRON_NFV2',
}


class APIFixture(fixture.GabbiFixture):
    """A fresh placement_stub (noauth2, its default policy) on its own
    SQLite file, and the variables every file reads."""

    # Policy enforcement: upstream's secure RBAC defaults, or the legacy
    # (deprecated) rules accepted beside them.
    secure_rbac = False

    def start_fixture(self):
        self._saved_environ = dict(os.environ)
        self.tmpdir = tempfile.mkdtemp(prefix='placement-gabbi-')
        overrides = {
            ('placement_database', 'connection'):
                'sqlite:///' + os.path.join(self.tmpdir, 'placement.sqlite'),
            ('placement_database', 'sqlite_synchronous'): False,
            ('api', 'auth_strategy'): 'noauth2',
            ('placement', 'sync_on_startup'): True,
            ('oslo_policy', 'enforce_new_defaults'): self.secure_rbac,
            ('oslo_policy', 'policy_file'): self.policy_file(),
        }
        overrides.update(self.conf_overrides())
        self.conf = conf_lib.build_conf(overrides=overrides)
        self.app = deploy.deploy(self.conf)
        self.builder = Builder(self.app)
        for name in API_ENVIRON_UUIDS:
            os.environ[name] = _new_uuid()
        os.environ.update(API_ENVIRON_NAMES)
        _Current.app = self.app
        self.make_entities()

    def stop_fixture(self):
        _Current.app = None
        os.environ.clear()
        os.environ.update(self._saved_environ)
        shutil.rmtree(self.tmpdir, ignore_errors=True)

    def conf_overrides(self):
        """More ``{(group, option): value}`` for this fixture's app."""
        return {}

    def policy_rules(self):
        """``{rule: check}`` written to the app's policy file."""
        return {}

    def policy_file(self):
        path = os.path.join(self.tmpdir, 'policy.yaml')
        with open(path, 'w') as f:
            yaml.safe_dump(self.policy_rules(), f)
        return path

    def make_entities(self):
        """The file's starting data (none for the plain API fixture)."""


class AllocationFixture(APIFixture):
    """One provider (VCPU 10, DISK_GB 2048 in steps of 10 from 10 to 1000)
    with three consumers of one project: CONSUMER_0 (DISK_GB 1000) and
    CONSUMER_ID (VCPU 6) of USER_ID, ALT_CONSUMER_ID (VCPU 1, DISK_GB 20)
    of ALT_USER_ID. ALT_RP_UUID and ALT_RP_NAME name a provider that is
    not created."""

    def make_entities(self):
        b = self.builder
        os.environ['ALT_USER_ID'] = _new_uuid()
        project, user = os.environ['PROJECT_ID'], os.environ['USER_ID']
        rp = b.create_provider(os.environ['RP_NAME'],
                               rp_uuid=os.environ['RP_UUID'])
        b.add_inventory(rp, 'DISK_GB', 2048, step_size=10, min_unit=10,
                        max_unit=1000)
        b.add_inventory(rp, 'VCPU', 10, max_unit=10)
        os.environ['CONSUMER_0'] = b.allocate(rp, {'DISK_GB': 1000},
                                              project, user)
        os.environ['CONSUMER_ID'] = b.allocate(rp, {'VCPU': 6},
                                               project, user)
        os.environ['ALT_CONSUMER_ID'] = b.allocate(
            rp, {'DISK_GB': 20, 'VCPU': 1}, project,
            os.environ['ALT_USER_ID'])
        os.environ['ALT_RP_UUID'] = _new_uuid()
        os.environ['ALT_RP_NAME'] = _new_uuid()


class SharedStorageFixture(APIFixture):
    """Two compute nodes (cn1: VCPU 24 x16, MEMORY_MB 128 GiB x1.5,
    SSE and SSE2; cn2: the same plus DISK_GB 2000, 100 reserved), each
    with two NUMA children with one PF (SRIOV_NET_VF 8) each, and two
    sharing providers of DISK_GB 2000 (100 reserved), all in AGG_UUID."""

    def make_entities(self):
        b = self.builder
        agg = os.environ['AGG_UUID'] = _new_uuid()
        made = {}
        for name in ('cn1', 'cn2', 'ss', 'ss2'):
            made[name] = b.create_provider(name, agg)
        for cn in (1, 2):
            for numa in (1, 2):
                suffix = '%d_%d' % (cn, numa)
                made['numa' + suffix] = b.create_provider(
                    'numa' + suffix, parent=made['cn%d' % cn])
                made['pf' + suffix] = b.create_provider(
                    'pf' + suffix, parent=made['numa' + suffix])
        for name, rp_uuid in made.items():
            os.environ[name.upper() + '_UUID'] = rp_uuid
        for cn in (made['cn1'], made['cn2']):
            b.add_inventory(cn, 'VCPU', 24, allocation_ratio=16.0)
            b.add_inventory(cn, 'MEMORY_MB', 128 * 1024,
                            allocation_ratio=1.5)
        b.set_traits(made['cn1'], 'HW_CPU_X86_SSE', 'HW_CPU_X86_SSE2')
        b.add_inventory(made['cn2'], 'DISK_GB', 2000, reserved=100,
                        allocation_ratio=1.0)
        for shared in (made['ss'], made['ss2']):
            b.add_inventory(shared, 'DISK_GB', 2000, reserved=100,
                            allocation_ratio=1.0)
            b.set_traits(shared, 'MISC_SHARES_VIA_AGGREGATE')
        for pf in ('pf1_1', 'pf1_2', 'pf2_1', 'pf2_2'):
            b.add_inventory(made[pf], 'SRIOV_NET_VF', 8,
                            allocation_ratio=1.0)


class NUMAAggregateFixture(APIFixture):
    """Two compute nodes without inventory (cn1 in AGGA, cn2 in AGGA and
    AGGB), each with two NUMA children of VCPU 24 (x16); numa1_1 is in
    AGGC. Sharing DISK_GB 2000 (100 reserved): ss1 in AGGA, ss2 in
    AGGC."""

    def make_entities(self):
        b = self.builder
        agg_a, agg_b, agg_c = (_new_uuid() for _ in range(3))
        os.environ.update(AGGA_UUID=agg_a, AGGB_UUID=agg_b, AGGC_UUID=agg_c)
        cn1 = b.create_provider('cn1', agg_a)
        cn2 = b.create_provider('cn2', agg_a, agg_b)
        ss1 = b.create_provider('ss1', agg_a)
        ss2 = b.create_provider('ss2', agg_c)
        numas = {'NUMA1_1': b.create_provider('numa1_1', agg_c, parent=cn1),
                 'NUMA1_2': b.create_provider('numa1_2', parent=cn1),
                 'NUMA2_1': b.create_provider('numa2_1', parent=cn2),
                 'NUMA2_2': b.create_provider('numa2_2', parent=cn2)}
        os.environ.update(CN1_UUID=cn1, CN2_UUID=cn2, SS1_UUID=ss1,
                          SS2_UUID=ss2)
        for name, rp_uuid in numas.items():
            os.environ[name + '_UUID'] = rp_uuid
            b.add_inventory(rp_uuid, 'VCPU', 24, allocation_ratio=16.0)
        for ss in (ss1, ss2):
            b.add_inventory(ss, 'DISK_GB', 2000, reserved=100,
                            allocation_ratio=1.0)
            b.set_traits(ss, 'MISC_SHARES_VIA_AGGREGATE')


class NUMANetworkFixture(APIFixture):
    """Two compute hosts and a sharing provider (ss1, DISK_GB 2000, in
    AGGA with both hosts).

    cn1 (COMPUTE_VOLUME_MULTI_ATTACH, no inventory) has NUMA children
    numa0 (HW_NUMA_ROOT; VCPU 4 with 2 used; MEMORY_MB 2048 from 512 in
    steps of 256; children fpga0 FPGA 1 and pgpu0 VGPU 8) and numa1
    (HW_NUMA_ROOT, CUSTOM_FOO; VCPU 4; MEMORY_MB 2048 from 256 up to
    1024; children fpga1_0 and fpga1_1, FPGA 1 each), and two network
    agents: sriov_agent (CUSTOM_VNIC_TYPE_DIRECT) with esn1 and esn2
    (CUSTOM_PHYSNET1/2, NET_BW_EGR_KILOBIT_PER_SEC 10000/20000), and
    ovs_agent (CUSTOM_VNIC_TYPE_NORMAL) with br_int (CUSTOM_PHYSNET0,
    egress 1000).

    cn2 (CUSTOM_FOO; VCPU 8 with 3 used; MEMORY_MB 2048 from 1024 in
    steps of 128; DISK_GB 1000) has NICs nic1..nic3 (CUSTOM_HW_NIC_ROOT)
    with PFs of CUSTOM_VF: pf1_1 and pf1_2 (4 each, PHYSNET1/2), pf2_1 to
    pf2_4 (2 each, PHYSNET1/2/1/2) and pf3_1 (8, PHYSNET1).
    """

    # DeepNUMANetworkFixture makes these first, under parents of its own.
    cn1 = None
    cn2 = None

    def make_entities(self):
        b = self.builder
        env = os.environ
        agg_a = env['AGGA_UUID'] = _new_uuid()
        ss1 = env['SS1_UUID'] = b.create_provider('ss1', agg_a)
        b.set_traits(ss1, 'MISC_SHARES_VIA_AGGREGATE')
        b.add_inventory(ss1, 'DISK_GB', 2000)

        cn1 = self.cn1 or b.create_provider('cn1')
        b.set_aggregates(cn1, agg_a)
        b.set_traits(cn1, 'COMPUTE_VOLUME_MULTI_ATTACH')
        env['CN1_UUID'] = cn1
        numas = []
        for i in (0, 1):
            numa = env['NUMA%d_UUID' % i] = b.create_provider(
                'numa%d' % i, parent=cn1)
            b.set_traits(numa, 'HW_NUMA_ROOT',
                         *(['CUSTOM_FOO'] if i == 1 else []))
            b.add_inventory(numa, 'VCPU', 4)
            numas.append(numa)
        b.add_inventory(numas[0], 'MEMORY_MB', 2048, min_unit=512,
                        step_size=256)
        b.add_inventory(numas[1], 'MEMORY_MB', 2048, min_unit=256,
                        max_unit=1024)
        project, user = 'numafx-project', 'numafx-user'
        b.allocate(numas[0], {'VCPU': 2}, project, user)
        fpga0 = env['FPGA0_UUID'] = b.create_provider('fpga0',
                                                      parent=numas[0])
        b.add_inventory(fpga0, 'FPGA', 1)
        pgpu0 = env['PGPU0_UUID'] = b.create_provider('pgpu0',
                                                      parent=numas[0])
        b.add_inventory(pgpu0, 'VGPU', 8)
        for i in (0, 1):
            fpga = env['FPGA1_%d_UUID' % i] = b.create_provider(
                'fpga1_%d' % i, parent=numas[1])
            b.add_inventory(fpga, 'FPGA', 1)

        sriov = env['SRIOV_AGENT_UUID'] = b.create_provider('sriov_agent',
                                                            parent=cn1)
        b.set_traits(sriov, 'CUSTOM_VNIC_TYPE_DIRECT')
        for i in (1, 2):
            esn = env['ESN%d_UUID' % i] = b.create_provider('esn%d' % i,
                                                            parent=sriov)
            b.set_traits(esn, 'CUSTOM_PHYSNET%d' % i)
            b.add_inventory(esn, 'NET_BW_EGR_KILOBIT_PER_SEC', 10000 * i)
        ovs = env['OVS_AGENT_UUID'] = b.create_provider('ovs_agent',
                                                        parent=cn1)
        b.set_traits(ovs, 'CUSTOM_VNIC_TYPE_NORMAL')
        br_int = env['BR_INT_UUID'] = b.create_provider('br_int', parent=ovs)
        b.set_traits(br_int, 'CUSTOM_PHYSNET0')
        b.add_inventory(br_int, 'NET_BW_EGR_KILOBIT_PER_SEC', 1000)

        cn2 = self.cn2 or b.create_provider('cn2')
        b.set_aggregates(cn2, agg_a)
        b.add_inventory(cn2, 'VCPU', 8)
        b.allocate(cn2, {'VCPU': 3}, project, user)
        b.add_inventory(cn2, 'MEMORY_MB', 2048, min_unit=1024,
                        step_size=128)
        b.add_inventory(cn2, 'DISK_GB', 1000)
        b.set_traits(cn2, 'CUSTOM_FOO')
        env['CN2_UUID'] = cn2
        nics = []
        for i in (1, 2, 3):
            nic = env['NIC%d_UUID' % i] = b.create_provider('nic%d' % i,
                                                            parent=cn2)
            b.set_traits(nic, 'CUSTOM_HW_NIC_ROOT')
            nics.append(nic)
        # (nic, pf number, physnet, CUSTOM_VF total)
        pfs = [(0, 1, 1, 4), (0, 2, 2, 4),
               (1, 1, 1, 2), (1, 2, 2, 2), (1, 3, 1, 2), (1, 4, 2, 2),
               (2, 1, 1, 8)]
        for nic, number, physnet, total in pfs:
            suffix = '%d_%d' % (nic + 1, number)
            pf = env['PF%s_UUID' % suffix] = b.create_provider(
                'pf' + suffix, parent=nics[nic])
            b.set_traits(pf, 'CUSTOM_PHYSNET%d' % physnet)
            b.add_inventory(pf, 'CUSTOM_VF', total)


class DeepNUMANetworkFixture(NUMANetworkFixture):
    """NUMANetworkFixture with cn1 and cn2 under parents p1 and p2, both
    children of gp1, for ``same_subtree`` above the compute nodes."""

    def make_entities(self):
        b = self.builder
        gp1 = b.create_provider('gp1')
        p1 = b.create_provider('p1', parent=gp1)
        p2 = b.create_provider('p2', parent=gp1)
        self.cn1 = b.create_provider('cn1', parent=p1)
        self.cn2 = b.create_provider('cn2', parent=p2)
        super().make_entities()


class NonSharedStorageFixture(APIFixture):
    """Three compute nodes with VCPU 24, MEMORY_MB 128 GiB and DISK_GB
    2000 each, and three aggregate uuids that nothing is in yet."""

    def make_entities(self):
        b = self.builder
        for name in ('AGGA_UUID', 'AGGB_UUID', 'AGGC_UUID'):
            os.environ[name] = _new_uuid()
        for i in (1, 2, 3):
            cn = os.environ['CN%d_UUID' % i] = b.create_provider('cn%d' % i)
            b.add_inventory(cn, 'VCPU', 24)
            b.add_inventory(cn, 'MEMORY_MB', 128 * 1024)
            b.add_inventory(cn, 'DISK_GB', 2000)


class GranularFixture(APIFixture):
    """Three compute nodes and three sharing providers for granular
    requests (aggregates AGGA, AGGB, AGGC):

    - cn_left (AGGA): VCPU 8, MEMORY_MB 4096, DISK_GB 500, VGPU 8,
      SRIOV_NET_VF 8, CUSTOM_NET_MBPS 4000; AVX, AVX2, HW_GPU_API_DXVA,
      HW_NIC_DCB_PFC, CUSTOM_FOO.
    - cn_middle (AGGA, AGGB): VCPU 8, MEMORY_MB 4096, SRIOV_NET_VF 8,
      CUSTOM_NET_MBPS 4000; AVX, AVX2, SSE, HW_NIC_ACCEL_TLS.
    - cn_right (AGGB, AGGC): VCPU 8, MEMORY_MB 4096, DISK_GB 500, VGPU 8
      (max_unit 2); HW_CPU_X86_MMX, HW_GPU_API_DXVA, CUSTOM_DISK_SSD.
    - shr_disk_1 (AGGA): DISK_GB 1000; sharing, CUSTOM_DISK_SSD.
    - shr_disk_2 (AGGA, AGGB): DISK_GB 1000; sharing.
    - shr_net (AGGC): SRIOV_NET_VF 16, CUSTOM_NET_MBPS 40000; sharing.
    """

    def make_entities(self):
        b = self.builder
        env = os.environ
        agg_a, agg_b, agg_c = (_new_uuid() for _ in range(3))
        env.update(AGGA=agg_a, AGGB=agg_b, AGGC=agg_c)
        b.ensure_resource_class('CUSTOM_NET_MBPS')

        left = env['CN_LEFT'] = b.create_provider('cn_left', agg_a)
        for rc, total in (('VCPU', 8), ('MEMORY_MB', 4096), ('DISK_GB', 500),
                          ('VGPU', 8), ('SRIOV_NET_VF', 8),
                          ('CUSTOM_NET_MBPS', 4000)):
            b.add_inventory(left, rc, total)
        b.set_traits(left, 'HW_CPU_X86_AVX', 'HW_CPU_X86_AVX2',
                     'HW_GPU_API_DXVA', 'HW_NIC_DCB_PFC', 'CUSTOM_FOO')

        middle = env['CN_MIDDLE'] = b.create_provider('cn_middle', agg_a,
                                                      agg_b)
        for rc, total in (('VCPU', 8), ('MEMORY_MB', 4096),
                          ('SRIOV_NET_VF', 8), ('CUSTOM_NET_MBPS', 4000)):
            b.add_inventory(middle, rc, total)
        b.set_traits(middle, 'HW_CPU_X86_AVX', 'HW_CPU_X86_AVX2',
                     'HW_CPU_X86_SSE', 'HW_NIC_ACCEL_TLS')

        right = env['CN_RIGHT'] = b.create_provider('cn_right', agg_b, agg_c)
        for rc, total in (('VCPU', 8), ('MEMORY_MB', 4096),
                          ('DISK_GB', 500)):
            b.add_inventory(right, rc, total)
        b.add_inventory(right, 'VGPU', 8, max_unit=2)
        b.set_traits(right, 'HW_CPU_X86_MMX', 'HW_GPU_API_DXVA',
                     'CUSTOM_DISK_SSD')

        disk1 = env['SHR_DISK_1'] = b.create_provider('shr_disk_1', agg_a)
        b.add_inventory(disk1, 'DISK_GB', 1000)
        b.set_traits(disk1, 'MISC_SHARES_VIA_AGGREGATE', 'CUSTOM_DISK_SSD')
        disk2 = env['SHR_DISK_2'] = b.create_provider('shr_disk_2', agg_a,
                                                      agg_b)
        b.add_inventory(disk2, 'DISK_GB', 1000)
        b.set_traits(disk2, 'MISC_SHARES_VIA_AGGREGATE')
        net = env['SHR_NET'] = b.create_provider('shr_net', agg_c)
        b.add_inventory(net, 'SRIOV_NET_VF', 16)
        b.add_inventory(net, 'CUSTOM_NET_MBPS', 40000)
        b.set_traits(net, 'MISC_SHARES_VIA_AGGREGATE')


class OpenPolicyFixture(APIFixture):
    """Every policy rule but ``admin_api`` open to any caller."""

    def policy_rules(self):
        return {rule.name: '@' for rule in policies.list_rules()
                if rule.name != 'admin_api'}


class SecureRBACPolicyFixture(APIFixture):
    """Only the new (secure RBAC) policy defaults apply."""

    secure_rbac = True


class LegacyRBACPolicyFixture(APIFixture):
    """The deprecated policy defaults apply beside the new ones (the
    default configuration, named for what the files test)."""

    secure_rbac = False


class CORSFixture(APIFixture):
    """CORS on for ``http://valid.example.com``, which may send
    ``OpenStack-API-Version``."""

    def conf_overrides(self):
        return {('cors', 'allowed_origin'): ['http://valid.example.com'],
                ('cors', 'allow_headers'): ['openstack-api-version']}


class NeutronQoSMultiSegmentFixture(APIFixture):
    """Compute trees as Neutron's QoS minimum bandwidth and packet rate
    features build them on multi-segment networks.

    computeN (VCPU 8, MEMORY_MB 4096, DISK_GB 500) has an Open vSwitch
    agent (NET_PACKET_RATE_KILOPACKET_PER_SEC 1000, VNIC_TYPE_NORMAL)
    with bridges, and a NIC Switch agent (VNIC types DIRECT,
    DIRECT_PHYSICAL, MACVTAP) with PFs; bridges and PFs carry egress and
    ingress bandwidth and a physnet trait. compute0's are on
    CUSTOM_PHYSNET_OTHER (bridges 5000, PFs 10000), compute1's on
    MSN_S1 and compute2's on MSN_S2 (the same sizes); compute3 has
    bridges br-ex (S1) and br-ex2 (S2) and PFs enp129s0f0 (S1) and
    enp129s0f1 (S2), all of 1000.
    """

    NORMAL = ('CUSTOM_VNIC_TYPE_NORMAL',)
    DIRECT = ('CUSTOM_VNIC_TYPE_DIRECT', 'CUSTOM_VNIC_TYPE_DIRECT_PHYSICAL',
              'CUSTOM_VNIC_TYPE_MACVTAP')
    # compute: ([(bridge, physnet, bandwidth)], [(pf, physnet, bandwidth)])
    LAYOUT = {
        'compute0': ([('br-ex', 'OTHER', 5000)],
                     [('enp129s0f0', 'OTHER', 10000)]),
        'compute1': ([('br-ex', 'MSN_S1', 5000)],
                     [('enp129s0f0', 'MSN_S1', 10000)]),
        'compute2': ([('br-ex', 'MSN_S2', 5000)],
                     [('enp129s0f0', 'MSN_S2', 10000)]),
        'compute3': ([('br-ex', 'MSN_S1', 1000), ('br-ex2', 'MSN_S2', 1000)],
                     [('enp129s0f0', 'MSN_S1', 1000),
                      ('enp129s0f1', 'MSN_S2', 1000)]),
    }

    def _bandwidth(self, rp_uuid, amount):
        for rc in ('NET_BW_EGR_KILOBIT_PER_SEC',
                   'NET_BW_IGR_KILOBIT_PER_SEC'):
            self.builder.add_inventory(rp_uuid, rc, amount)

    def make_entities(self):
        b = self.builder
        env = os.environ
        for compute, (bridges, pfs) in self.LAYOUT.items():
            cn = env[compute] = b.create_provider(compute)
            for rc, total in (('VCPU', 8), ('MEMORY_MB', 4096),
                              ('DISK_GB', 500)):
                b.add_inventory(cn, rc, total)
            ovs = env[compute + ':ovs_agent'] = b.create_provider(
                compute + ':Open vSwitch agent', parent=cn)
            b.add_inventory(ovs, 'NET_PACKET_RATE_KILOPACKET_PER_SEC', 1000)
            b.set_traits(ovs, *self.NORMAL)
            for bridge, physnet, amount in bridges:
                rp = env['%s:%s' % (compute, bridge.replace('-', '_'))] = (
                    b.create_provider(
                        '%s:Open vSwitch agent:%s' % (compute, bridge),
                        parent=ovs))
                self._bandwidth(rp, amount)
                b.set_traits(rp, *self.NORMAL, 'CUSTOM_PHYSNET_' + physnet)
            sriov = env[compute + ':sriov_agent'] = b.create_provider(
                compute + ':NIC Switch agent', parent=cn)
            b.set_traits(sriov, *self.DIRECT)
            for number, (pf, physnet, amount) in enumerate(pfs):
                rp = env['%s:pf%d' % (compute, number)] = b.create_provider(
                    '%s:NIC Switch agent:%s' % (compute, pf), parent=sriov)
                self._bandwidth(rp, amount)
                b.set_traits(rp, *self.DIRECT, 'CUSTOM_PHYSNET_' + physnet)
