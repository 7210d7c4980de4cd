#!/usr/bin/env bash
# The Prometheus alerting rules (deploy/prometheus/): `promtool check rules` (syntax, PromQL,
# templates) and `promtool test rules` (the unit tests: each alert fires when it should and
# stays quiet when it should not). promtool comes from Debian's package `prometheus`, which
# `bash scripts/deps.sh test` unpacks into .build-tools/ without installing it. Without it this
# skips and says so, except under CI=true, where a missing promtool fails.
set -euo pipefail
cd "$(dirname "$0")/.."
PATH="$(bash scripts/deps.sh test --print-path):$PATH"
if ! command -v promtool > /dev/null 2>&1; then
  if [ "${CI:-}" = "true" ]; then
    echo "promtool not found (bash scripts/deps.sh test unpacks it); CI=true needs it" >&2
    exit 1
  fi
  echo "skipped: promtool not found (bash scripts/deps.sh test unpacks it)"
  exit 0
fi
promtool check rules deploy/prometheus/apphostd.rules.yml
promtool test rules deploy/prometheus/apphostd.rules.test.yml
