#!/usr/bin/env bash
# Install everything the test suite needs and run all of it: unit and
# functional tests, on SQLite and on a throwaway PostgreSQL server.
#
#   bash tools/run-tests.sh [pytest arguments]
set -euo pipefail
cd "$(dirname "$0")/.."

tools/install.sh test-requirements.txt

# python-openstackclient 10.3.1, the last release that loads
# python-cyborgclient's "openstack accelerator" plugin, in its own venv.
if [ ! -x .venv-legacy-osc/bin/openstack ]; then
    "${PYTHON:-python3}" -m venv .venv-legacy-osc
    .venv-legacy-osc/bin/pip install -q 'python-openstackclient==10.3.1' \
        'python-cyborgclient==3.0.0'
fi
export CYBORG_LITE_TEST_LEGACY_OSC=$PWD/.venv-legacy-osc/bin/openstack

# A real Keystone for tests/functional/auth (keystone mode), in its own
# venv. Optional: when the install fails those tests are skipped.
if [ ! -x .venv-keystone/bin/keystone-manage ]; then
    if ! { "${PYTHON:-python3}" -m venv .venv-keystone &&
           .venv-keystone/bin/pip install -q 'keystone==30.0.0' \
               -c constraints.txt; }; then
        echo "Keystone did not install; its auth tests will be skipped" >&2
        rm -rf .venv-keystone
    fi
fi

# Nova 34 (its report client and scheduler utils, driven against
# placement_stub by tests/functional/placement_clients), in its own venv.
# Optional: when the install fails those tests are skipped.
if [ ! -x .venv-nova/bin/python ] ||
        ! .venv-nova/bin/python -c 'import nova' 2>/dev/null; then
    if ! { "${PYTHON:-python3}" -m venv .venv-nova &&
           .venv-nova/bin/pip install -q 'nova==34.0.0' -c constraints.txt; }
    then
        echo "Nova did not install; its Placement tests will be skipped" >&2
        rm -rf .venv-nova
    fi
fi

# Tempest and cyborg-tempest-plugin for tests/functional/tempest (upstream's
# API tests against the live API), in their own venv. Optional like
# Keystone: when the install fails those tests are skipped.
if [ ! -x .venv-tempest/bin/tempest ]; then
    if ! { "${PYTHON:-python3}" -m venv .venv-tempest &&
           .venv-tempest/bin/pip install -q 'tempest==47.0.0' \
               'cyborg-tempest-plugin==2.8.0'; }; then
        echo "tempest did not install; upstream's API tests will be skipped" >&2
        rm -rf .venv-tempest
    fi
fi

eval "$(tools/test-setup.sh start)"
trap 'tools/test-setup.sh stop' EXIT

.venv/bin/python -m pytest -p no:cacheprovider -q -c tox.ini \
    "${@:-tests}"
