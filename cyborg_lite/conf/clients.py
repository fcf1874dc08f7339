"""Options of the [nova] and [placement] groups: keystoneauth1 clients.

Both groups take the standard keystoneauth1 session, auth and adapter
options, so the same configuration works with Keystone (``auth_type =
password``), HTTP basic auth (``auth_type = http_basic``) or no auth
(``auth_type = none`` with ``endpoint_override``).
"""

import copy

from keystoneauth1 import loading as ks_loading
from oslo_config import cfg

NOVA_GROUP = 'nova'
PLACEMENT_GROUP = 'placement'

NOVA_OPTS = [
    cfg.IntOpt('event_retries', default=3, min=0,
               help='How often an external event that Nova did not accept '
                    '(connection error or 5xx) is sent again.'),
    cfg.FloatOpt('event_retry_delay', default=0.5, min=0,
                 help='Seconds before the first retry of an event; each '
                      'retry doubles it.'),
    cfg.IntOpt('events_per_request', default=100, min=1,
               help='The most external events in one POST: the events '
                    'that queue up while one POST is on its way go '
                    'together in the next. 1 sends one POST per ARQ.'),
    cfg.FloatOpt('events_wait', default=0.05, min=0, max=5,
                 help='Seconds the notifier waits, after the first event '
                      'of a POST, for more events to send with it. Under '
                      'load this makes one POST out of the binds of that '
                      'time, which saves the conductor and Nova a request '
                      'each; Nova hears of a bind at most this much '
                      'later. 0 sends what has queued up at once.'),
    cfg.FloatOpt('resolved_events_wait', default=1.0, min=0, max=60,
                 help='Seconds the notifier waits for more events after '
                      'the first event of ARQs that were resolved when '
                      'their bind call answered. Nova never waits for '
                      'those events: before it waits, its compute asks '
                      'for the instance\'s resolved ARQs and takes those '
                      'as events that came early. Waiting gathers them '
                      'into fewer POSTs, which saves the conductor and '
                      'Nova\'s API a request each. An event Nova may be '
                      'waiting for (an ARQ resolved later, after its FPGA '
                      'was programmed) ends the wait within events_wait. '
                      'Never shorter than events_wait.'),
]

_DEFAULT_SERVICE_TYPES = {NOVA_GROUP: 'compute',
                          PLACEMENT_GROUP: 'placement'}


def register_opts(conf):
    conf.register_opts(NOVA_OPTS, group=NOVA_GROUP)
    for group, service_type in _DEFAULT_SERVICE_TYPES.items():
        ks_loading.register_session_conf_options(conf, group)
        ks_loading.register_auth_conf_options(conf, group)
        ks_loading.register_adapter_conf_options(conf, group)
        conf.set_default('service_type', service_type, group=group)
        conf.set_default('valid_interfaces', ['internal', 'public'],
                         group=group)


def _ksa_opts(group):
    opts = copy.deepcopy(ks_loading.get_session_conf_options())
    opts += copy.deepcopy(ks_loading.get_auth_common_conf_options())
    opts += copy.deepcopy(ks_loading.get_auth_plugin_conf_options('password'))
    opts += copy.deepcopy(ks_loading.get_adapter_conf_options(
        include_deprecated=False))
    return opts


def list_opts():
    return {NOVA_GROUP: NOVA_OPTS + _ksa_opts(NOVA_GROUP),
            PLACEMENT_GROUP: _ksa_opts(PLACEMENT_GROUP)}
