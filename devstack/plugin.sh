#!/bin/bash
# devstack plugin for cyborg-lite: see devstack/settings for the services.

source $(dirname "${BASH_SOURCE[0]}")/lib/cyborg-lite

CYBORG_LITE_BIN_DIR=${CYBORG_LITE_BIN_DIR:-$(get_python_exec_prefix)}

if is_service_enabled cyborg-lite-api cyborg-lite-cond cyborg-lite-agent; then
    if [[ "$1" == "stack" && "$2" == "install" ]]; then
        echo_summary "Installing cyborg-lite"
        install_cyborg_lite
    elif [[ "$1" == "stack" && "$2" == "post-config" ]]; then
        echo_summary "Configuring cyborg-lite"
        configure_cyborg_lite
    elif [[ "$1" == "stack" && "$2" == "extra" ]]; then
        echo_summary "Initialising and starting cyborg-lite"
        init_cyborg_lite
        start_cyborg_lite
    fi

    if [[ "$1" == "unstack" ]]; then
        stop_cyborg_lite
    fi

    if [[ "$1" == "clean" ]]; then
        cleanup_cyborg_lite
    fi
fi
