#!/usr/bin/env bash
# Install cyborg-lite into ./.venv on Debian 12 (as root): the Debian
# packages it builds against, then the Python packages pinned by
# constraints.txt. Pass extra pip requirement files as arguments.
set -euo pipefail
cd "$(dirname "$0")/.."

need=()
for pkg in git gcc pkg-config python3-dev python3-venv libvirt-dev libvirt0 \
           sudo; do
    dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null \
        | grep -q "install ok installed" || need+=("$pkg")
done
if [ ${#need[@]} -gt 0 ]; then
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends "${need[@]}"
fi

PYTHON=${PYTHON:-python3}
[ -x .venv/bin/python ] || "$PYTHON" -m venv .venv
.venv/bin/pip install -q --upgrade pip wheel
reqs=(-r requirements.txt)
for extra in "$@"; do
    reqs+=(-r "$extra")
done
.venv/bin/pip install -q -c constraints.txt "${reqs[@]}" libvirt-python
.venv/bin/pip install -q -c constraints.txt --no-deps -e .
echo "cyborg-lite is installed in $(pwd)/.venv"
