"""MySQL and MariaDB keep any text, as PostgreSQL and SQLite do.

A MySQL table takes the server's default character set (latin1 on a
default MariaDB, which refuses most of Unicode) and a case-insensitive
collation (``gpu`` finds ``GPU``); a connection in MySQL's 3-byte
``utf8`` (devstack's ``?charset=utf8``, or none at all) cannot send a
4-byte character. cyborg-lite's and the placement stub's migrations
convert their tables with :data:`CONVERT_TABLE`, and their engines
connect through :func:`with_utf8mb4`.
"""

import sqlalchemy as sa

# Every table: utf8mb4, compared byte for byte as PostgreSQL and SQLite
# compare text.
CONVERT_TABLE = ('ALTER TABLE %s CONVERT TO CHARACTER SET utf8mb4 '
                 'COLLATE utf8mb4_bin')


def is_mysql(dialect_name: str) -> bool:
    return dialect_name in ('mysql', 'mariadb')


def with_utf8mb4(url: str) -> str:
    """``url``, whose MySQL connections speak utf8mb4 (other databases'
    URLs are returned as they are)."""
    parsed = sa.engine.make_url(url)
    if not is_mysql(parsed.get_backend_name()) or \
            parsed.query.get('charset') == 'utf8mb4':
        return url
    return parsed.update_query_dict({'charset': 'utf8mb4'}).render_as_string(
        hide_password=False)
