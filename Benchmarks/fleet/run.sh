#!/usr/bin/env bash
# The fleet benchmark: N apphostd daemons (default 200) on one machine, each with its own state
# directory and metrics textfile, one node_exporter and one Prometheus; per-instance memory and
# start time beside the ServiceGroup floor's. Builds apphostd as deploy/INSTALL.md installs it
# (release, Swift runtime linked in, in .build-release) and the floor, then runs the script.
# Arguments go to the script: --instances N, --quick, --json FILE, --scrape-interval 1s, --keep.
set -euo pipefail
cd "$(dirname "$0")/../.."
bash scripts/deps.sh test
bash scripts/build-release.sh --scratch-path .build-release
# The design's floor: a ServiceGroup of five no-op services notifying through libsystemd,
# linked dynamically (its Package.swift says why), built as the release apphostd is.
bash scripts/build-release.sh --floor --scratch-path .build-floor
exec python3 Benchmarks/fleet/fleet_bench.py \
  --binary "$(bash scripts/build-release.sh --scratch-path .build-release --show-bin-path)/apphostd" \
  --servicegroup-floor "$(bash scripts/build-release.sh --floor --scratch-path .build-floor --show-bin-path)/ServiceGroupFloor" \
  "$@"
