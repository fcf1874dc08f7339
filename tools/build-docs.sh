#!/usr/bin/env bash
# Build the guide (doc/source -> doc/build/html) and the release notes
# (releasenotes/source -> releasenotes/build/html) with warnings as
# errors: a broken reference, a page left out of the guide, an install
# page naming an option or command that does not exist fails the build.
# Installs what they need into ./.venv (tools/install.sh first).
set -euo pipefail
cd "$(dirname "$0")/.."

[ -x .venv/bin/python ] || tools/install.sh
.venv/bin/pip install -q -c constraints.txt -r doc/requirements.txt
.venv/bin/sphinx-build -W -q -b html doc/source doc/build/html
.venv/bin/sphinx-build -W -q -b html releasenotes/source \
    releasenotes/build/html
echo "The guide is in doc/build/html, the release notes in" \
     "releasenotes/build/html."
