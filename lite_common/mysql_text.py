"""MySQL and MariaDB connections that speak utf8mb4.

A connection in MySQL's 3-byte ``utf8`` (devstack's ``?charset=utf8``,
or none at all) cannot send a 4-byte character, nor compare with the
utf8mb4 binary collation that cyborg-lite's and the placement stub's
migrations give their tables (so that text keeps what PostgreSQL and
SQLite keep). Both services' engines connect through
``with_utf8mb4``.
"""

import sqlalchemy as sa


def with_utf8mb4(url: str) -> str:
    """``url``, whose MySQL connections speak utf8mb4 (other databases'
    URLs are returned as they are)."""
    parsed = sa.engine.make_url(url)
    if parsed.get_backend_name() not in ('mysql', 'mariadb') or \
            parsed.query.get('charset') == 'utf8mb4':
        return url
    return parsed.update_query_dict({'charset': 'utf8mb4'}).render_as_string(
        hide_password=False)
