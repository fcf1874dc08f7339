#!/bin/bash
# Runs devstack/plugin.sh with devstack's own functions, in the order
# stack.sh, unstack.sh and clean.sh run it:
#
#   bash devstack-phases.sh TOP_DIR stack|unstack|clean
#
# TOP_DIR is a devstack tree with a local.conf. Like stack.sh, this
# sources devstack's functions, stackrc (with the localrc section of
# local.conf) and the lib/ files of the services involved (database,
# rpc_backend, keystone, placement), loads the plugin's settings
# (run_phase source) and runs its phases (run_phase stack install, ...).
#
# Everything it calls is devstack's, but for these, each defined below
# after devstack is sourced:
#
# * systemd, which these machines do not run: _run_under_systemd (what
#   run_process calls) and $SYSTEMCTL (what stop_process calls) are a
#   launcher that starts the unit's command line in the background, in
#   a session of its own, its output in $SERVICE_DIR/<service>.log, and
#   stops it by the PID it wrote to $SERVICE_DIR/<service>.pid as
#   systemd stops devstack's units (KillMode=process: SIGTERM to that
#   process alone); service_check's status says whether it still runs;
# * of create_keystone_accounts, only the accounts the plugin and the
#   checks use (the service project and role, the demo project with its
#   member, the admin in it), made with devstack's get_or_create_*
#   helpers (Keystone itself runs already, bootstrapped);
# * nova-compute's part (n-cpu is not enabled): the compute-node
#   resource provider, named as Nova names it, which the agent looks for
#   in Placement;
# * a wait for openstack-cli-server's socket before the first openstack
#   call (stack.sh does much in between); unstack stops the server with
#   stop_process (unstack.sh calls systemd's stop_service).
#
# OPENSTACKCLIENT_CONF_DIR (functions-common's /etc/openstack, not a
# setting) is $DEST/etc/openstack, and OS_CLIENT_CONFIG_FILE names its
# clouds.yaml, so that nothing is written to the host's /etc.
set -o errexit
set -o pipefail

TOP_DIR=$1
MODE=$2

source $TOP_DIR/functions
GetDistro
if [[ $MODE == stack ]]; then
    rm -f $TOP_DIR/.localrc.auto
    extract_localrc_section $TOP_DIR/local.conf $TOP_DIR/localrc \
        $TOP_DIR/.localrc.auto
fi
source $TOP_DIR/stackrc

OPENSTACKCLIENT_CONF_DIR=$DEST/etc/openstack
export OS_CLIENT_CONFIG_FILE=$OPENSTACKCLIENT_CONF_DIR/clouds.yaml

# -- the launcher, in systemd's place ---------------------------------

function _run_under_systemd {
    local service=$1
    local command="$2"
    local env_vars="$5"
    # devstack's own checks of a unit's command line (an absolute path,
    # no sudo).
    _common_systemd_pitfalls "$command"
    mkdir -p $SERVICE_DIR
    # The command line split into words, as systemd splits ExecStart.
    # shellcheck disable=SC2086
    setsid env $env_vars $command >$SERVICE_DIR/$service.log 2>&1 \
        </dev/null &
    echo $! >$SERVICE_DIR/$service.pid
}

# Whether process $1 runs (a zombie whose parent has not reaped it yet
# does not).
function _launcher_alive {
    local stat
    stat=$(cat /proc/$1/stat 2>/dev/null) || return 1
    [[ ${stat##*) } != Z* ]]
}

function _launcher_systemctl {
    local action=$1
    local service=${2#devstack@}
    service=${service%.service}
    local pidfile=$SERVICE_DIR/$service.pid
    local pid
    case $action in
        is-enabled)
            [[ -f $pidfile ]]
            ;;
        stop)
            # As devstack's units (KillMode=process): SIGTERM to the
            # main process only, SIGKILL if it is still there after the
            # stop timeout (TimeoutStopSec, 300 s in the units; shorter
            # here).
            pid=$(cat $pidfile)
            kill -TERM $pid 2>/dev/null || true
            local start=$SECONDS
            while _launcher_alive $pid; do
                if (( SECONDS - start >= LAUNCHER_STOP_TIMEOUT )); then
                    kill -KILL $pid 2>/dev/null || true
                    echo "launcher: $service killed, still running" \
                        "$LAUNCHER_STOP_TIMEOUT s after SIGTERM"
                    return 0
                fi
                sleep 0.1
            done
            echo "launcher: $service stopped in $((SECONDS - start)) s"
            ;;
        disable)
            rm -f $pidfile
            ;;
        status)
            # service_check's; like systemctl, 3 when it is not running.
            pid=$(cat $pidfile)
            if _launcher_alive $pid; then
                echo "launcher: $service running (pid $pid)"
            else
                echo "launcher: $service not running (pid $pid):"
                tail -n 20 $SERVICE_DIR/$service.log
                return 3
            fi
            ;;
        *)
            die $LINENO "systemctl $action: the launcher does not do that"
            ;;
    esac
}
SYSTEMCTL=_launcher_systemctl
LAUNCHER_STOP_TIMEOUT=${LAUNCHER_STOP_TIMEOUT:-30}

# -- what stack.sh sources and sets up before the plugin's phases ------

# stack.sh's
SSL_BUNDLE_FILE="$DATA_DIR/ca-bundle.pem"

source $TOP_DIR/lib/database
source $TOP_DIR/lib/rpc_backend
if [[ $MODE == stack ]]; then
    run_phase override_defaults
fi
source $TOP_DIR/lib/keystone
source $TOP_DIR/lib/placement
run_phase source

if [[ "$GLOBAL_VENV" == "True" ]]; then
    setup_devstack_virtualenv
fi
if initialize_database_backends; then
    define_database_baseurl
fi

function create_keystone_accounts_used {
    get_or_create_project "$SERVICE_PROJECT_NAME" "$SERVICE_DOMAIN_NAME"
    get_or_create_role service
    local demo_project demo_user
    demo_project=$(get_or_create_project demo default)
    demo_user=$(get_or_create_user demo "$ADMIN_PASSWORD" default \
        demo@example.com)
    get_or_add_user_project_role member $demo_user $demo_project
    get_or_add_user_project_role admin admin $demo_project
}

function wait_for_openstack_cli_server {
    local i
    for i in $(seq $SERVICE_TIMEOUT); do
        openstack --version >/dev/null 2>&1 && return 0
        sleep 1
    done
    die $LINENO "openstack-cli-server did not start"
}

function create_compute_node_provider {
    local url token
    url=$(get_endpoint_url placement public)
    token=$(openstack token issue -f value -c id)
    curl -g -s -f -o /dev/null -X POST "$url/resource_providers" \
        -H "X-Auth-Token: $token" \
        -H "Content-Type: application/json" \
        -H "OpenStack-API-Version: placement 1.20" \
        -d "{\"name\": \"$(hostname)\"}"
}

# A line in the output at each step, with the time.
function step {
    echo "== $(date +%T) $*"
}

case $MODE in
    stack)
        # Install Packages (stack.sh): the Python ones of the services
        # involved.
        step install
        install_keystonemiddleware
        run_phase stack pre-install
        run_phase stack install
        pip_install_gr python-openstackclient
        if is_service_enabled openstack-cli-server; then
            install_openstack_cli_server
            # Its socket, before the first openstack call.
            wait_for_openstack_cli_server
        fi

        # Start Services: Keystone's accounts, Placement's.
        step accounts
        write_clouds_yaml
        export OS_CLOUD=${OS_CLOUD:-devstack-admin}
        create_keystone_accounts_used
        create_placement_accounts

        step post-config
        run_phase stack post-config
        merge_config_group $TOP_DIR/local.conf post-config

        # Launch Services: Nova's compute before the extra phase.
        step compute-node
        create_compute_node_provider

        step extra
        merge_config_group $TOP_DIR/local.conf extra
        run_phase stack extra
        merge_config_group $TOP_DIR/local.conf post-extra
        # Sanity checks (stack.sh): every service still runs.
        service_check
        step done
        ;;
    unstack)
        run_phase unstack
        # unstack.sh's stop_service devstack@openstack-cli-server, by
        # the launcher.
        stop_process openstack-cli-server
        ;;
    clean)
        run_phase clean
        ;;
    *)
        die $LINENO "usage: $0 TOP_DIR stack|unstack|clean"
        ;;
esac
