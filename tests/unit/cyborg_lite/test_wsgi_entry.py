"""The WSGI entry points (gunicorn, uwsgi) refuse to load a configuration
that cannot authenticate callers, saying why in one line, rather than
answering every request with an error."""

import importlib

from gunicorn.errors import AppImportError
import pytest

KEYSTONE_WITHOUT_USER = '[api]\nauth_strategy = keystone\n'


@pytest.mark.parametrize('module, variable, text', [
    ('cyborg_lite.api.wsgi', 'CYBORG_LITE_CONFIG_FILES',
     '[DEFAULT]\ntransport_url = cyborg-local://\n' + KEYSTONE_WITHOUT_USER),
    ('placement_stub.wsgi', 'PLACEMENT_STUB_CONFIG_FILES',
     KEYSTONE_WITHOUT_USER + '[placement_database]\n'
     'connection = sqlite://\n'),
])
def test_keystone_without_a_service_user_refuses_to_load(
        tmp_path, monkeypatch, module, variable, text):
    conf = tmp_path / 'service.conf'
    conf.write_text(text)
    monkeypatch.setenv(variable, str(conf))
    wsgi = importlib.import_module(module)
    monkeypatch.delitem(vars(wsgi), 'application', raising=False)
    with pytest.raises(AppImportError) as caught:
        wsgi.application  # noqa: B018 - the server's look builds it
    message = str(caught.value)
    assert '\n' not in message
    assert 'cannot start' in message
    assert '[keystone_authtoken] auth_type' in message
    assert 'application' not in vars(wsgi)


def test_importing_an_entry_point_builds_nothing(monkeypatch):
    for module in ('cyborg_lite.api.wsgi', 'placement_stub.wsgi'):
        wsgi = importlib.reload(importlib.import_module(module))
        assert 'application' not in vars(wsgi)
