"""The WSGI entry point (gunicorn, uwsgi) on a configuration that cannot
authenticate callers answers 503 saying why, not 500."""

import json

import webob

from cyborg_lite.api import wsgi


def test_keystone_without_a_service_user_is_a_503_that_says_why(
        tmp_path, monkeypatch):
    conf = tmp_path / 'cyborg-lite.conf'
    conf.write_text('[DEFAULT]\ntransport_url = cyborg-local://\n'
                    '[api]\nauth_strategy = keystone\n')
    monkeypatch.setenv('CYBORG_LITE_CONFIG_FILES', str(conf))
    monkeypatch.setattr(wsgi, '_app', None)
    for path in ('/', '/v2/device_profiles'):
        resp = webob.Request.blank(path).get_response(wsgi.application)
        assert resp.status_int == 503
        fault = json.loads(resp.json['error_message'])
        assert 'cannot authenticate callers' in fault['faultstring']
        assert '[keystone_authtoken] auth_type' in fault['faultstring']
