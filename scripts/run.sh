#!/usr/bin/env bash
# Builds apphostd and runs it in the foreground on the shipped default config.
# Stop it with Ctrl-C (SIGINT: a graceful terminate); toggle background with `kill -USR1 <pid>`.
#
# Outside systemd nothing provides the session-lock secret ($CREDENTIALS_DIRECTORY, from the
# unit's LoadCredential=), so this script makes a demo one in .run/credentials (0600).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/deps.sh build
swift build --product apphostd
if [ -z "${CREDENTIALS_DIRECTORY:-}" ]; then
    export CREDENTIALS_DIRECTORY="$PWD/.run/credentials"
    if [ ! -s "$CREDENTIALS_DIRECTORY/session-secret" ]; then
        mkdir -p "$CREDENTIALS_DIRECTORY"
        (umask 077; head -c 32 /dev/urandom | base64 > "$CREDENTIALS_DIRECTORY/session-secret")
    fi
fi
exec "$(swift build --product apphostd --show-bin-path)/apphostd" run --config config/apphostd.yaml "$@"
