#!/usr/bin/env bash
# Builds apphostd and runs it in the foreground on the shipped default config.
# Stop it with Ctrl-C (SIGINT: a graceful terminate); toggle background with `kill -USR1 <pid>`.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/deps.sh
swift build --product apphostd
exec .build/debug/apphostd run --config config/apphostd.yaml "$@"
