#!/usr/bin/env bash
# Install everything the test suite needs and run all of it: unit and
# functional tests, on SQLite and on a throwaway PostgreSQL server.
#
#   bash tools/run-tests.sh [pytest arguments]
#
# With no arguments it runs the whole suite (see the end of this file);
# with arguments, pytest runs those alone (a path, -k, -n 2, ...).
set -euo pipefail
cd "$(dirname "$0")/.."

tools/install.sh test-requirements.txt

# The peers' own venvs are independent of each other: they install at
# once (most of an install is waiting on downloads), each with its log in
# .venv-logs/, while the throwaway servers start.
PY=${PYTHON:-python3}
mkdir -p .venv-logs

# python-openstackclient 10.3.1, the last release that loads
# python-cyborgclient's "openstack accelerator" plugin, in its own venv.
install_legacy_osc() {
    [ -x .venv-legacy-osc/bin/openstack ] && return 0
    "$PY" -m venv .venv-legacy-osc &&
        .venv-legacy-osc/bin/pip install -q 'python-openstackclient==10.3.1' \
            'python-cyborgclient==3.0.0'
}

# A real Keystone for tests/functional/auth (keystone mode). Optional:
# when the install fails those tests are skipped.
install_keystone() {
    [ -x .venv-keystone/bin/keystone-manage ] && return 0
    "$PY" -m venv .venv-keystone &&
        .venv-keystone/bin/pip install -q 'keystone==30.0.0' -c constraints.txt
}

# Nova 34 (its report client and scheduler utils, driven against
# placement_stub by tests/functional/placement_clients). Optional.
install_nova() {
    [ -x .venv-nova/bin/python ] &&
        .venv-nova/bin/python -c 'import nova' 2>/dev/null && return 0
    "$PY" -m venv .venv-nova &&
        .venv-nova/bin/pip install -q 'nova==34.0.0' -c constraints.txt
}

# Tempest and cyborg-tempest-plugin for tests/functional/tempest
# (upstream's API tests against the live API). Optional.
install_tempest() {
    [ -x .venv-tempest/bin/tempest ] && return 0
    "$PY" -m venv .venv-tempest &&
        .venv-tempest/bin/pip install -q 'tempest==47.0.0' \
            'cyborg-tempest-plugin==2.8.0'
}

PEERS=(legacy_osc keystone nova tempest)
declare -A installs=()
for peer in "${PEERS[@]}"; do
    install_$peer > ".venv-logs/$peer.log" 2>&1 &
    installs[$peer]=$!
done

eval "$(tools/test-setup.sh start)"
trap 'tools/test-setup.sh stop' EXIT

for peer in "${PEERS[@]}"; do
    if ! wait "${installs[$peer]}"; then
        cat ".venv-logs/$peer.log" >&2
        if [ "$peer" = legacy_osc ]; then
            echo "python-openstackclient 10.3.1 did not install" >&2
            exit 1
        fi
        echo "$peer did not install; its tests will be skipped" >&2
        rm -rf ".venv-${peer//_/-}"
    fi
done
export CYBORG_LITE_TEST_LEGACY_OSC=$PWD/.venv-legacy-osc/bin/openstack

PYTEST=(.venv/bin/python -m pytest -p no:cacheprovider -q -c tox.ini
        --durations=15)
if [ $# -gt 0 ]; then
    # Not exec: the EXIT trap stops the throwaway servers.
    "${PYTEST[@]}" "$@"
    exit
fi

# The whole suite: every test but the reliability ones in two processes
# (pytest-xdist; a test file stays in one, with its module's servers),
# then the reliability tests alone, as their time bounds need the
# machine to themselves. Both parts run whatever the first's outcome.
status=0
"${PYTEST[@]}" -n "${TEST_WORKERS:-2}" --dist loadfile tests \
    --ignore tests/functional/reliability || status=$?
"${PYTEST[@]}" tests/functional/reliability || status=$?
exit $status
