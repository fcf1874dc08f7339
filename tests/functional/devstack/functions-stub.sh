# A stand-in for the devstack functions devstack/plugin.sh uses.
#
# Every call is appended to $STUB_LOG as one line ("name arg arg ...");
# iniset writes the file for real (with Python's configparser) so that a
# test can read the config the plugin wrote. Values are devstack-like.

STACK_USER=${STACK_USER:-$(id -un)}
SERVICE_HOST=${SERVICE_HOST:-192.0.2.10}
SERVICE_PROTOCOL=${SERVICE_PROTOCOL:-http}
KEYSTONE_SERVICE_URI=${KEYSTONE_SERVICE_URI:-http://$SERVICE_HOST/identity}
SERVICE_PASSWORD=${SERVICE_PASSWORD:-service-secret}
DATABASE_PASSWORD=${DATABASE_PASSWORD:-db-secret}
RABBIT_USERID=${RABBIT_USERID:-stackrabbit}
RABBIT_PASSWORD=${RABBIT_PASSWORD:-rabbit-secret}
SERVICE_PROJECT_NAME=${SERVICE_PROJECT_NAME:-service}
SERVICE_DOMAIN_NAME=${SERVICE_DOMAIN_NAME:-Default}
REGION_NAME=${REGION_NAME:-RegionOne}
SERVICE_TIMEOUT=${SERVICE_TIMEOUT:-60}
ENABLE_DEBUG_LOG_LEVEL=${ENABLE_DEBUG_LOG_LEVEL:-True}

function _record { echo "$*" >> "$STUB_LOG"; }

function define_plugin { _record define_plugin "$@"; }
function plugin_requires { _record plugin_requires "$@"; }
# As devstack's: a service that local.conf disabled stays disabled.
function enable_service {
    local s
    for s in "$@"; do
        [[ ,$DISABLED_SERVICES, == *,$s,* ]] && continue
        [[ ,$ENABLED_SERVICES, == *,$s,* ]] || ENABLED_SERVICES+=,$s
    done
}
function is_service_enabled {
    local s
    for s in "$@"; do
        [[ ,$ENABLED_SERVICES, == *,$s,* ]] && return 0
    done
    return 1
}
function echo_summary { _record echo_summary "$@"; }
function die { _record die "$@"; exit 1; }
function sudo { "$@"; }
function setup_develop { _record setup_develop "$@"; }
function pip_install { _record pip_install "$@"; }
function get_python_exec_prefix { echo /usr/local/bin; }
function get_transport_url {
    echo "rabbit://$RABBIT_USERID:$RABBIT_PASSWORD@$SERVICE_HOST:5672/"
}
function database_connection_url {
    echo "mysql+pymysql://root:$DATABASE_PASSWORD@127.0.0.1/$1?charset=utf8"
}
function recreate_database { _record recreate_database "$@"; }
function create_service_user { _record create_service_user "$@"; }
function get_or_create_service { _record get_or_create_service "$@"; echo svc-id; }
function get_or_create_endpoint { _record get_or_create_endpoint "$@"; echo ep-id; }
# As devstack's: a service that is not enabled is not started.
function run_process { is_service_enabled "$1" && _record run_process "$@"; return 0; }
function stop_process { _record stop_process "$@"; }
function wait_for_service { _record wait_for_service "$@"; }
# The openstack client and curl, as a devstack host has them.
function openstack { _record openstack "$@"; echo token-id; }
function curl { _record curl "$@"; }

function iniset {
    _record iniset "$@"
    python3 - "$@" <<'PYEOF'
import configparser, os, sys
path, section, option, value = sys.argv[1:5]
parser = configparser.RawConfigParser()
parser.optionxform = str
if os.path.exists(path):
    parser.read(path)
if section != 'DEFAULT' and not parser.has_section(section):
    parser.add_section(section)
parser.set(section, option, value)
with open(path, 'w') as f:
    parser.write(f)
PYEOF
}

# devstack's lib/keystone
function configure_keystone_authtoken_middleware {
    local conf_file=$1 admin_user=$2 section=${3:-keystone_authtoken}
    iniset $conf_file $section auth_type password
    iniset $conf_file $section interface public
    iniset $conf_file $section auth_url $KEYSTONE_SERVICE_URI
    iniset $conf_file $section username $admin_user
    iniset $conf_file $section password $SERVICE_PASSWORD
    iniset $conf_file $section user_domain_name $SERVICE_DOMAIN_NAME
    iniset $conf_file $section project_name $SERVICE_PROJECT_NAME
    iniset $conf_file $section project_domain_name $SERVICE_DOMAIN_NAME
    iniset $conf_file $section www_authenticate_uri $KEYSTONE_SERVICE_URI
}
