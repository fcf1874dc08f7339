"""API microversions of the v2 API.

Versions, newest last (doc/source/user/microversions.rst describes each):

* 2.0 - Initial v2 API.
* 2.1 - ARQ PATCH may carry ``/project_id``.
* 2.2 - ``GET /v2/device_profiles/{name}``: lookup by name.
* 2.3 - ``status`` of devices in ``GET /devices[/{uuid}]``.

The request header is ``OpenStack-API-Version: accelerator 2.x`` or, as
Cyborg releases 2024.1 to 2026.1 expected, a bare ``2.x``; ``latest`` is
the newest. No header means 2.0.
"""

import re

import microversion_parse

from cyborg_lite import exception

SERVICE_TYPE = 'accelerator'
HEADER = 'OpenStack-API-Version'
VERSIONS = ('2.0', '2.1', '2.2', '2.3')
MIN_VERSION = microversion_parse.Version(2, 0)
MAX_VERSION = microversion_parse.Version(2, 3)
_BARE_RE = re.compile(r'^\s*(latest|\d+\.\d+)\s*$', re.IGNORECASE)


def _requested(headers) -> str | None:
    value = microversion_parse.get_version(headers,
                                           service_type=SERVICE_TYPE)
    if value is not None:
        return value
    raw = {k.lower(): v for k, v in headers.items()}.get(HEADER.lower())
    if raw is not None:
        match = _BARE_RE.match(raw)
        if match:
            return match.group(1)
        if len(raw.split()) > 1 and not raw.strip().lower().startswith(
                SERVICE_TYPE):
            # Another service's version (e.g. "compute 2.1"): ignore it.
            # A lone malformed value (e.g. "10") is ours and invalid.
            return None
        raise exception.NotAcceptable(
            'Invalid value for %s header' % HEADER)
    return None


def parse(headers) -> microversion_parse.Version:
    """The version a request asks for; NotAcceptable when out of range."""
    requested = _requested(headers)
    if requested is None:
        return MIN_VERSION
    if requested.lower() == 'latest':
        return MAX_VERSION
    try:
        version = microversion_parse.parse_version_string(requested)
    except (TypeError, ValueError):
        raise exception.NotAcceptable(
            'Invalid value for %s header' % HEADER)
    if version.major != MAX_VERSION.major:
        raise exception.NotAcceptable(
            'Mutually exclusive versions requested. Version %s '
            'requested but not supported by this service. The '
            'supported version range is: [%s, %s].' % (
                requested, MIN_VERSION, MAX_VERSION))
    if not MIN_VERSION <= version <= MAX_VERSION:
        raise exception.NotAcceptable(
            'Version %s was requested but the minor version is not '
            'supported by this service. The supported version range '
            'is: [%s, %s].' % (requested, MIN_VERSION, MAX_VERSION))
    return version


def response_headers(version) -> list[tuple[str, str]]:
    return [('OpenStack-API-Minimum-Version', str(MIN_VERSION)),
            ('OpenStack-API-Maximum-Version', str(MAX_VERSION)),
            (HEADER, '%s %s' % (SERVICE_TYPE, version)),
            ('Vary', HEADER)]


# Named predicates: one per feature a version added.

def allow_project_id_patch(version) -> bool:
    return version >= microversion_parse.Version(2, 1)


def allow_device_profile_by_name(version) -> bool:
    return version >= microversion_parse.Version(2, 2)


def allow_device_status(version) -> bool:
    return version >= microversion_parse.Version(2, 3)
