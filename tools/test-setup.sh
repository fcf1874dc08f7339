#!/usr/bin/env bash
# Install what the test suite needs from Debian and start a throwaway
# PostgreSQL server and a throwaway RabbitMQ node on loopback. Prints the
# environment to export:
#
#   eval "$(tools/test-setup.sh start)"   # sets CYBORG_LITE_TEST_PG_URL
#                                         # and CYBORG_LITE_TEST_RABBIT_URL
#   tools/test-setup.sh stop
#
# Everything lives under $CYBORG_LITE_TEST_DIR (default /tmp/cyborg-lite-test)
# and is stopped by PID; no system service is started or touched. Ports,
# all on 127.0.0.1: CYBORG_LITE_PG_PORT (15432), CYBORG_LITE_RABBIT_PORT
# (15672, AMQP), CYBORG_LITE_RABBIT_DIST_PORT (15673, Erlang distribution)
# and CYBORG_LITE_RABBIT_EPMD_PORT (15674), CYBORG_LITE_MYSQL_PORT (15306).
# CYBORG_LITE_TEST_RABBIT=0 leaves RabbitMQ out, CYBORG_LITE_TEST_MYSQL=0
# MariaDB (which sets CYBORG_LITE_TEST_MYSQL_URL).
#
# The test PostgreSQL runs with fsync, synchronous_commit and
# full_page_writes off: fast, and lost on a crash. For figures of the
# production mode as deployed, a second throwaway PostgreSQL runs with
# PostgreSQL's default durability on CYBORG_LITE_PG_DURABLE_PORT (15433):
#
#   eval "$(tools/test-setup.sh start-durable-pg)"   # sets
#                                         # CYBORG_LITE_BENCH_PG_URL
#
# ``restart-durable-pg`` restarts it (fast shutdown), ``stop`` stops it
# too.
#
# A three-node RabbitMQ cluster (nodes cyborg-lite-r1..r3@localhost,
# AMQP on CYBORG_LITE_RABBIT_CLUSTER_PORT (15681) and the two ports
# after it, Erlang distribution from CYBORG_LITE_RABBIT_CLUSTER_DIST_PORT
# (15691), one epmd on CYBORG_LITE_RABBIT_CLUSTER_EPMD_PORT (15690)),
# for the tests of a node's loss:
#
#   eval "$(tools/test-setup.sh start-rabbit-cluster)"   # sets
#                                   # CYBORG_LITE_TEST_RABBIT_CLUSTER_URL
#   tools/test-setup.sh stop-rabbit-node N    # rabbitmqctl stop
#   tools/test-setup.sh start-rabbit-node N   # back in the cluster
#   tools/test-setup.sh rabbit-cluster-ctl N ARGS...   # rabbitmqctl
#
# ``stop`` stops it too.
set -euo pipefail

TEST_DIR=${CYBORG_LITE_TEST_DIR:-/tmp/cyborg-lite-test}
PG_DIR=$TEST_DIR/pg
PG_PORT=${CYBORG_LITE_PG_PORT:-15432}
PG_DURABLE_DIR=$TEST_DIR/pg-durable
PG_DURABLE_PORT=${CYBORG_LITE_PG_DURABLE_PORT:-15433}
RMQ_DIR=$TEST_DIR/rabbitmq
RMQ_PORT=${CYBORG_LITE_RABBIT_PORT:-15672}
RMQ_DIST_PORT=${CYBORG_LITE_RABBIT_DIST_PORT:-15673}
RMQ_EPMD_PORT=${CYBORG_LITE_RABBIT_EPMD_PORT:-15674}
WITH_RABBIT=${CYBORG_LITE_TEST_RABBIT:-1}
MYSQL_DIR=$TEST_DIR/mariadb
MYSQL_PORT=${CYBORG_LITE_MYSQL_PORT:-15306}
WITH_MYSQL=${CYBORG_LITE_TEST_MYSQL:-1}
RMQC_DIR=$TEST_DIR/rabbit-cluster
RMQC_PORT=${CYBORG_LITE_RABBIT_CLUSTER_PORT:-15681}
RMQC_DIST_PORT=${CYBORG_LITE_RABBIT_CLUSTER_DIST_PORT:-15691}
RMQC_EPMD_PORT=${CYBORG_LITE_RABBIT_CLUSTER_EPMD_PORT:-15690}
RMQC_NODES=3

log() { echo "test-setup: $*" >&2; }

install_packages() {
    local wanted=(libvirt-dev libvirt0 pkg-config gcc python3-dev
                  python3-venv postgresql)
    [ "$WITH_RABBIT" = 0 ] || wanted+=(rabbitmq-server)
    [ "$WITH_MYSQL" = 0 ] || wanted+=(mariadb-server)
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
    echo "export CYBORG_LITE_TEST_PG_URL=postgresql+psycopg://postgres@127.0.0.1:$PG_PORT/postgres"
}

# The same server with PostgreSQL's default durability (fsync,
# synchronous_commit and full_page_writes on), for the benchmark of the
# production mode as deployed.
start_durable_pg() {
    local bin
    bin=$(pg_bin)
    mkdir -p "$TEST_DIR"
    if [ -f "$PG_DURABLE_DIR/data/postmaster.pid" ] && \
            kill -0 "$(head -n 1 "$PG_DURABLE_DIR/data/postmaster.pid")" \
            2>/dev/null; then
        log "PostgreSQL (default durability) already running"
    else
        if port_open "$PG_DURABLE_PORT"; then
            log "port $PG_DURABLE_PORT is taken; set CYBORG_LITE_PG_DURABLE_PORT"
            return 1
        fi
        rm -rf "$PG_DURABLE_DIR"
        mkdir -p "$PG_DURABLE_DIR/socket"
        chown -R postgres:postgres "$PG_DURABLE_DIR"
        runuser -u postgres -- "$bin/initdb" -A trust -U postgres \
            -D "$PG_DURABLE_DIR/data" >/dev/null
        runuser -u postgres -- "$bin/pg_ctl" -D "$PG_DURABLE_DIR/data" -w \
            -l "$PG_DURABLE_DIR/log" -o "-p $PG_DURABLE_PORT \
            -k $PG_DURABLE_DIR/socket -c listen_addresses=127.0.0.1 \
            -c max_connections=300" start >&2
    fi
    echo "export CYBORG_LITE_BENCH_PG_URL=postgresql+psycopg://postgres@127.0.0.1:$PG_DURABLE_PORT/postgres"
}

stop_pg_dir() {
    local dir=$1
    if [ -f "$dir/data/postmaster.pid" ]; then
        local pid
        pid=$(head -n 1 "$dir/data/postmaster.pid")
        log "stopping PostgreSQL (pid $pid)"
        kill -INT "$pid" 2>/dev/null || true
        for _ in $(seq 50); do
            kill -0 "$pid" 2>/dev/null || break
            sleep 0.2
        done
    fi
}

# RabbitMQ: a node of our own (name, ports, epmd, directories), never the
# system one. HOME points into our directory so that the Erlang cookie is
# ours too; the distribution port listens on loopback only.
# The environment of a node: rmq_node_env DIR NODENAME DIST_PORT EPMD_PORT.
rmq_node_env() {
    export HOME=$1 \
        RABBITMQ_NODENAME=$2 \
        RABBITMQ_USE_LONGNAME=false \
        RABBITMQ_DIST_PORT=$3 \
        ERL_EPMD_PORT=$4 \
        ERL_EPMD_ADDRESS=127.0.0.1 \
        RABBITMQ_MNESIA_BASE=$1/mnesia \
        RABBITMQ_LOG_BASE=$1/log \
        RABBITMQ_CONFIG_FILE=$1/rabbitmq.conf \
        RABBITMQ_ENABLED_PLUGINS_FILE=$1/enabled_plugins \
        RABBITMQ_PID_FILE=$1/rabbitmq.pid \
        RABBITMQ_SERVER_ADDITIONAL_ERL_ARGS="-kernel inet_dist_use_interface {127,0,0,1}"
}

rmq_env() {
    rmq_node_env "$RMQ_DIR" cyborg-lite-test@localhost "$RMQ_DIST_PORT" \
        "$RMQ_EPMD_PORT"
}

port_open() {
    (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null
}

# The PID of the process that listens on port $1, if any.
listener_pid() {
    ss -Hltnp "sport = :$1" 2>/dev/null \
        | sed -n 's/.*pid=\([0-9]*\).*/\1/p' | head -n 1
}

pid_alive() {
    [ -n "$1" ] && kill -0 "$1" 2>/dev/null
}

# A node's files: write_rabbit_config DIR AMQP_PORT.
write_rabbit_config() {
    mkdir -p "$1/mnesia" "$1/log"
    {
        echo "listeners.tcp.1 = 127.0.0.1:$2"
        echo "loopback_users.guest = true"
        echo "log.console = false"
        echo "log.file.level = warning"
    } >"$1/rabbitmq.conf"
    echo '[].' >"$1/enabled_plugins"
}

start_rabbit() {
    local pid
    pid=$(cat "$RMQ_DIR/rabbitmq.pid" 2>/dev/null || true)
    if pid_alive "$pid" && port_open "$RMQ_PORT"; then
        log "RabbitMQ already running"
    else
        for port in "$RMQ_PORT" "$RMQ_DIST_PORT" "$RMQ_EPMD_PORT"; do
            if port_open "$port"; then
                log "port $port is taken; set CYBORG_LITE_RABBIT_PORT," \
                    "CYBORG_LITE_RABBIT_DIST_PORT, CYBORG_LITE_RABBIT_EPMD_PORT"
                return 1
            fi
        done
        rm -rf "$RMQ_DIR"
        write_rabbit_config "$RMQ_DIR" "$RMQ_PORT"
        (
            rmq_env
            setsid /usr/lib/rabbitmq/bin/rabbitmq-server \
                >"$RMQ_DIR/server.out" 2>&1 </dev/null &
            echo $! >"$RMQ_DIR/launcher.pid"
        )
        # It takes about 12 s until the AMQP port listens.
        local tries=0
        until port_open "$RMQ_PORT"; do
            if [ "$tries" -ge 600 ]; then
                log "RabbitMQ did not listen on $RMQ_PORT within 60 s;" \
                    "see $RMQ_DIR/server.out and $RMQ_DIR/log"
                stop_rabbit
                return 1
            fi
            sleep 0.1
            tries=$((tries + 1))
        done
        listener_pid "$RMQ_EPMD_PORT" >"$RMQ_DIR/epmd.pid"
        log "RabbitMQ listening on 127.0.0.1:$RMQ_PORT" \
            "(pid $(cat "$RMQ_DIR/rabbitmq.pid" 2>/dev/null || echo ?)," \
            "epmd pid $(cat "$RMQ_DIR/epmd.pid"))"
    fi
    # The guest user may log in from loopback only, which is all we need.
    echo "export CYBORG_LITE_TEST_RABBIT_URL=rabbit://guest:guest@127.0.0.1:$RMQ_PORT/"
}

wait_gone() {
    for _ in $(seq 100); do
        pid_alive "$1" || return 0
        sleep 0.1
    done
    return 1
}

stop_rabbit() {
    [ -d "$RMQ_DIR" ] || return 0
    local pid launcher epmd
    pid=$(cat "$RMQ_DIR/rabbitmq.pid" 2>/dev/null || true)
    launcher=$(cat "$RMQ_DIR/launcher.pid" 2>/dev/null || true)
    if pid_alive "$pid" || pid_alive "$launcher"; then
        log "stopping RabbitMQ (pid ${pid:-$launcher})"
        (rmq_env; /usr/lib/rabbitmq/bin/rabbitmqctl -q stop \
            >/dev/null 2>&1) || true
        for p in $pid $launcher; do
            wait_gone "$p" || kill -KILL "$p" 2>/dev/null || true
        done
    fi
    # epmd outlives the node. Stop it only if the PID recorded at start
    # still listens on our epmd port.
    epmd=$(cat "$RMQ_DIR/epmd.pid" 2>/dev/null || true)
    if [ -n "$epmd" ] && [ "$(listener_pid "$RMQ_EPMD_PORT")" = "$epmd" ]; then
        log "stopping epmd (pid $epmd)"
        kill -TERM "$epmd" 2>/dev/null || true
        wait_gone "$epmd" || true
    fi
    rm -f "$RMQ_DIR/rabbitmq.pid" "$RMQ_DIR/launcher.pid" \
        "$RMQ_DIR/epmd.pid"
}

# The cluster's node $1 (1 to 3): its own name, ports and directories,
# one epmd and one Erlang cookie for the three.
rmqc_env() {
    rmq_node_env "$RMQC_DIR/r$1" "cyborg-lite-r$1@localhost" \
        $((RMQC_DIST_PORT + $1 - 1)) "$RMQC_EPMD_PORT"
}

rmqc_ctl() {
    local node=$1
    shift
    (rmqc_env "$node"; /usr/lib/rabbitmq/bin/rabbitmqctl -q "$@")
}

# Start node $1 with what its directory holds (a stopped node comes
# back into the cluster it was in).
start_rabbit_node() {
    local i=$1 dir=$RMQC_DIR/r$1 port=$((RMQC_PORT + $1 - 1))
    if pid_alive "$(cat "$dir/rabbitmq.pid" 2>/dev/null || true)" \
            && port_open "$port"; then
        log "RabbitMQ node r$i already running"
        return 0
    fi
    write_rabbit_config "$dir" "$port"
    cp "$RMQC_DIR/cookie" "$dir/.erlang.cookie"
    chmod 400 "$dir/.erlang.cookie"
    (
        rmqc_env "$i"
        setsid /usr/lib/rabbitmq/bin/rabbitmq-server \
            >>"$dir/server.out" 2>&1 </dev/null &
        echo $! >"$dir/launcher.pid"
    )
    local tries=0
    until port_open "$port"; do
        if [ "$tries" -ge 900 ]; then
            log "RabbitMQ node r$i did not listen on $port within 90 s;" \
                "see $dir/server.out and $dir/log"
            return 1
        fi
        sleep 0.1
        tries=$((tries + 1))
    done
    log "RabbitMQ node r$i listening on 127.0.0.1:$port" \
        "(pid $(cat "$dir/rabbitmq.pid" 2>/dev/null || echo ?))"
}

# Stop node $1 as an operator does (rabbitmqctl stop): the cluster goes
# on with the other two.
stop_rabbit_node() {
    local i=$1 dir=$RMQC_DIR/r$1 pid launcher
    pid=$(cat "$dir/rabbitmq.pid" 2>/dev/null || true)
    launcher=$(cat "$dir/launcher.pid" 2>/dev/null || true)
    if pid_alive "$pid" || pid_alive "$launcher"; then
        log "stopping RabbitMQ node r$i (pid ${pid:-$launcher})"
        rmqc_ctl "$i" stop >/dev/null 2>&1 || true
        for p in $pid $launcher; do
            wait_gone "$p" || kill -KILL "$p" 2>/dev/null || true
        done
    fi
    rm -f "$dir/rabbitmq.pid" "$dir/launcher.pid"
}

start_rabbit_cluster() {
    local i urls=()
    if [ -f "$RMQC_DIR/epmd.pid" ] \
            && pid_alive "$(cat "$RMQC_DIR/epmd.pid")"; then
        for i in $(seq "$RMQC_NODES"); do
            start_rabbit_node "$i"
        done
    else
        for port in "$RMQC_EPMD_PORT" $(for i in $(seq "$RMQC_NODES"); do
                echo $((RMQC_PORT + i - 1)) $((RMQC_DIST_PORT + i - 1))
                done); do
            if port_open "$port"; then
                log "port $port is taken; set CYBORG_LITE_RABBIT_CLUSTER_PORT," \
                    "CYBORG_LITE_RABBIT_CLUSTER_DIST_PORT," \
                    "CYBORG_LITE_RABBIT_CLUSTER_EPMD_PORT"
                return 1
            fi
        done
        rm -rf "$RMQC_DIR"
        mkdir -p "$RMQC_DIR"
        head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n' \
            | tr a-f A-F >"$RMQC_DIR/cookie"
        for i in $(seq "$RMQC_NODES"); do
            start_rabbit_node "$i"
        done
        listener_pid "$RMQC_EPMD_PORT" >"$RMQC_DIR/epmd.pid"
        for i in $(seq 2 "$RMQC_NODES"); do
            rmqc_ctl "$i" stop_app >/dev/null
            rmqc_ctl "$i" join_cluster cyborg-lite-r1@localhost >/dev/null
            rmqc_ctl "$i" start_app >/dev/null
        done
        log "RabbitMQ cluster of $RMQC_NODES nodes formed"
    fi
    for i in $(seq "$RMQC_NODES"); do
        urls+=("guest:guest@127.0.0.1:$((RMQC_PORT + i - 1))")
    done
    echo "export CYBORG_LITE_TEST_RABBIT_CLUSTER_URL=rabbit://$(IFS=,; echo "${urls[*]}")/"
}

stop_rabbit_cluster() {
    [ -d "$RMQC_DIR" ] || return 0
    local i epmd
    for i in $(seq "$RMQC_NODES"); do
        stop_rabbit_node "$i"
    done
    epmd=$(cat "$RMQC_DIR/epmd.pid" 2>/dev/null || true)
    if [ -n "$epmd" ] && [ "$(listener_pid "$RMQC_EPMD_PORT")" = "$epmd" ]; then
        log "stopping the cluster's epmd (pid $epmd)"
        kill -TERM "$epmd" 2>/dev/null || true
        wait_gone "$epmd" || true
    fi
    rm -f "$RMQC_DIR/epmd.pid"
}

start_mysql() {
    local pidfile=$MYSQL_DIR/mariadbd.pid
    if [ -f "$pidfile" ] && kill -0 "$(cat "$pidfile")" 2>/dev/null; then
        log "MariaDB already running"
    else
        if port_open "$MYSQL_PORT"; then
            log "port $MYSQL_PORT is taken; set CYBORG_LITE_MYSQL_PORT"
            exit 1
        fi
        rm -rf "$MYSQL_DIR"
        mkdir -p "$MYSQL_DIR/data"
        mariadb-install-db --no-defaults --user=root --auth-root-authentication-method=normal \
            --datadir="$MYSQL_DIR/data" --skip-test-db >/dev/null 2>&1
        mariadbd --no-defaults --user=root --datadir="$MYSQL_DIR/data" \
            --bind-address=127.0.0.1 --port="$MYSQL_PORT" \
            --socket="$MYSQL_DIR/mysqld.sock" --pid-file="$pidfile" \
            --skip-name-resolve --innodb-flush-log-at-trx-commit=0 \
            --max-connections=300 --log-error="$MYSQL_DIR/error.log" \
            >/dev/null 2>&1 &
        for _ in $(seq 150); do
            port_open "$MYSQL_PORT" && break
            sleep 0.2
        done
        port_open "$MYSQL_PORT" || { log "MariaDB did not start"; exit 1; }
    fi
    echo "export CYBORG_LITE_TEST_MYSQL_URL=mysql+pymysql://root@127.0.0.1:$MYSQL_PORT/mysql"
}

stop_mysql() {
    local pidfile=$MYSQL_DIR/mariadbd.pid
    if [ -f "$pidfile" ]; then
        local pid
        pid=$(cat "$pidfile")
        log "stopping MariaDB (pid $pid)"
        kill -TERM "$pid" 2>/dev/null || true
        wait_gone "$pid" || true
        rm -f "$pidfile"
    fi
}

case "${1:-start}" in
    start)
        install_packages
        start_pg
        [ "$WITH_RABBIT" = 0 ] || start_rabbit
        [ "$WITH_MYSQL" = 0 ] || start_mysql
        ;;
    start-durable-pg)
        install_packages
        start_durable_pg
        ;;
    restart-durable-pg)
        # A fast shutdown (every session cut) and a start, its data kept.
        runuser -u postgres -- "$(pg_bin)/pg_ctl" -D "$PG_DURABLE_DIR/data" \
            -l "$PG_DURABLE_DIR/log" \
            -m fast -w restart >&2
        ;;
    start-rabbit-cluster)
        install_packages
        start_rabbit_cluster
        ;;
    stop-rabbit-node)
        stop_rabbit_node "${2:?node 1 to 3}"
        ;;
    start-rabbit-node)
        start_rabbit_node "${2:?node 1 to 3}"
        ;;
    rabbit-cluster-ctl)
        # rabbitmqctl against node $2: rabbit-cluster-ctl N ARGS...
        node=${2:?node 1 to 3}
        shift 2
        rmqc_ctl "$node" "$@"
        ;;
    stop)
        stop_rabbit_cluster
        stop_rabbit
        stop_mysql
        stop_pg_dir "$PG_DURABLE_DIR"
        stop_pg_dir "$PG_DIR"
        ;;
    *)
        echo "usage: $0 start|start-durable-pg|start-rabbit-cluster|" \
            "stop-rabbit-node N|start-rabbit-node N|stop" >&2
        exit 2
        ;;
esac
