"""cyborg-lite's defaults for oslo.messaging's RabbitMQ options: a lost
broker is tried every second, and a configuration file still decides."""

from cyborg_lite import conf as cl_conf
from cyborg_lite import rpc


def test_a_lost_broker_is_tried_every_second():
    conf = cl_conf.build_conf()
    rpc.set_defaults(conf)
    rabbit = conf[rpc.RABBIT_GROUP]
    for name, value in rpc.RABBIT_DEFAULTS.items():
        assert rabbit[name] == value, name
    assert (rabbit.rabbit_retry_interval, rabbit.rabbit_retry_backoff,
            rabbit.rabbit_interval_max) == (1, 0, 1)


def test_a_configuration_file_still_decides(tmp_path):
    path = tmp_path / 'cyborg-lite.conf'
    path.write_text('[%s]\nrabbit_interval_max = 20\n' % rpc.RABBIT_GROUP)
    conf = cl_conf.build_conf(default_config_files=[str(path)])
    rpc.set_defaults(conf)
    assert conf[rpc.RABBIT_GROUP].rabbit_interval_max == 20
    assert conf[rpc.RABBIT_GROUP].rabbit_retry_backoff == 0
