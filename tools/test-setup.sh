#!/usr/bin/env bash
# Install what the test suite needs from Debian and start a throwaway
# PostgreSQL server on loopback. Prints the environment to export:
#
#   eval "$(tools/test-setup.sh start)"   # sets CYBORG_LITE_TEST_PG_URL
#   tools/test-setup.sh stop
#
# Everything lives under $CYBORG_LITE_TEST_DIR (default /tmp/cyborg-lite-test)
# and is stopped by PID; no system service is started or touched.
set -euo pipefail

TEST_DIR=${CYBORG_LITE_TEST_DIR:-/tmp/cyborg-lite-test}
PG_DIR=$TEST_DIR/pg
PG_PORT=${CYBORG_LITE_PG_PORT:-15432}

log() { echo "test-setup: $*" >&2; }

install_packages() {
    local wanted=(libvirt-dev libvirt0 pkg-config gcc python3-dev
                  python3-venv postgresql)
    local missing=()
    for pkg in "${wanted[@]}"; do
        dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null \
            | grep -q "install ok installed" || missing+=("$pkg")
    done
    if [ ${#missing[@]} -gt 0 ]; then
        log "installing ${missing[*]}"
        export DEBIAN_FRONTEND=noninteractive
        apt-get update -qq >&2
        apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
    fi
}

pg_bin() {
    ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1
}

start_pg() {
    local bin
    bin=$(pg_bin)
    mkdir -p "$TEST_DIR"
    if [ -f "$PG_DIR/data/postmaster.pid" ] && \
            kill -0 "$(head -n 1 "$PG_DIR/data/postmaster.pid")" 2>/dev/null; then
        log "PostgreSQL already running"
    else
        rm -rf "$PG_DIR"
        mkdir -p "$PG_DIR/socket"
        chown -R postgres:postgres "$PG_DIR"
        runuser -u postgres -- "$bin/initdb" -A trust --no-sync -U postgres \
            -D "$PG_DIR/data" >/dev/null
        runuser -u postgres -- "$bin/pg_ctl" -D "$PG_DIR/data" -w -l \
            "$PG_DIR/log" -o "-p $PG_PORT -k $PG_DIR/socket \
            -c listen_addresses=127.0.0.1 -c fsync=off \
            -c synchronous_commit=off -c full_page_writes=off \
            -c max_connections=300" start >&2
    fi
    echo "export CYBORG_LITE_TEST_PG_URL=postgresql+psycopg2://postgres@127.0.0.1:$PG_PORT/postgres"
}

stop_pg() {
    if [ -f "$PG_DIR/data/postmaster.pid" ]; then
        local pid
        pid=$(head -n 1 "$PG_DIR/data/postmaster.pid")
        log "stopping PostgreSQL (pid $pid)"
        kill -INT "$pid" 2>/dev/null || true
        for _ in $(seq 50); do
            kill -0 "$pid" 2>/dev/null || break
            sleep 0.2
        done
    fi
}

case "${1:-start}" in
    start)
        install_packages
        start_pg
        ;;
    stop)
        stop_pg
        ;;
    *)
        echo "usage: $0 start|stop" >&2
        exit 2
        ;;
esac
