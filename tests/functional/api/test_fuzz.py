"""Property-based fuzzing of the live API against its OpenAPI description.

schemathesis generates requests for every operation of
``/v2/openapi.yaml`` (valid ones, and from the negative mode ones that
break the schema), sends them to a running stack as an admin and as a
service, and checks each answer: never a 5xx, a documented status, and a
body, content type and headers that match the description. Requests that
break the schema must be refused with a 4xx.

The quick variant runs always; the long one is marked ``slow``::

    .venv/bin/pytest -c tox.ini tests/functional/api/test_fuzz.py -m slow
"""

import hypothesis
import pytest
import requests
import schemathesis
from schemathesis.checks import not_a_server_error
from schemathesis.generation import GenerationMode
from schemathesis.specs.openapi import checks as oas_checks

from tests.fixtures import cyborg_api
from tests.functional.api import helpers

CHECKS = [not_a_server_error,
          oas_checks.status_code_conformance,
          oas_checks.content_type_conformance,
          oas_checks.response_headers_conformance,
          oas_checks.response_schema_conformance]
NEGATIVE_CHECKS = CHECKS + [oas_checks.negative_data_rejection]
IDENTITIES = {'admin': cyborg_api.ADMIN, 'service': cyborg_api.SERVICE}


@pytest.fixture(scope='module')
def api(stack):
    """The loaded description, and a session with some data in the stack
    (profiles, ARQs) so that lookups and deletes can hit something."""
    admin = stack.client(cyborg_api.ADMIN)
    for rc in ('FPGA', 'GPU'):
        dp = helpers.create_profile(admin, [{'resources:%s' % rc: '1'}])
        helpers.create_arqs(admin, dp['name'])
    schema = schemathesis.openapi.from_url(stack.url + '/v2/openapi.yaml')
    return schema, requests.Session()


def _operations(schema):
    return [result.ok() for result in schema.get_all_operations()]


def _fuzz(stack, api, mode, examples):
    schema, session = api
    checks = CHECKS if mode is GenerationMode.POSITIVE else NEGATIVE_CHECKS
    failures = []
    for operation in _operations(schema):
        strategy = operation.as_strategy(generation_mode=mode)

        @hypothesis.settings(
            max_examples=examples, deadline=None, database=None,
            derandomize=True, phases=[hypothesis.Phase.generate],
            suppress_health_check=list(hypothesis.HealthCheck))
        @hypothesis.given(case=strategy,
                          who=hypothesis.strategies.sampled_from(
                              sorted(IDENTITIES)))
        def run(case, who):
            # A copy: schemathesis adds its own headers (Connection:
            # keep-alive among them) to the dict it is given.
            case.call_and_validate(base_url=stack.url, session=session,
                                   headers=dict(IDENTITIES[who]),
                                   checks=checks,
                                   timeout=30)
        try:
            run()
        except hypothesis.errors.Unsatisfiable:
            # Nothing to break: no parameters or body (GET /, /v2).
            assert mode is GenerationMode.NEGATIVE, operation.label
        except Exception as exc:  # collect every operation's failure
            failures.append('%s (%s): %s' % (operation.label, mode,
                                             str(exc)[:2000]))
    assert not failures, '\n\n'.join(failures)


@pytest.mark.parametrize('mode', [GenerationMode.POSITIVE,
                                  GenerationMode.NEGATIVE])
def test_fuzz_quick(stack, api, mode):
    _fuzz(stack, api, mode, examples=8)


@pytest.mark.slow
@pytest.mark.parametrize('mode', [GenerationMode.POSITIVE,
                                  GenerationMode.NEGATIVE])
def test_fuzz_long(stack, api, mode):
    _fuzz(stack, api, mode, examples=60)


def test_every_operation_is_fuzzed(api):
    schema, _ = api
    labels = {op.label for op in _operations(schema)}
    expected = {'%s %s' % (method.upper(), path)
                for path, item in schema.raw_schema['paths'].items()
                for method in item if method in ('get', 'post', 'patch',
                                                 'delete')}
    # schemathesis leaves out the document's own URL; test_openapi.py
    # checks that one.
    assert labels == expected - {'GET /v2/openapi.yaml'}
