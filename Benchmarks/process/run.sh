#!/usr/bin/env bash
# Whole-process benchmarks: builds apphostd as deploy/INSTALL.md does (release, Swift runtime
# linked in; in .build-release, apart from the debug build the tests use) and measures it
# against C and Swift floors. Arguments go to the script
# (--quick for a short run, --json FILE for the raw figures). Run it on a quiet machine.
set -euo pipefail
cd "$(dirname "$0")/../.."
bash scripts/deps.sh test
bash scripts/build-release.sh --scratch-path .build-release
# The design's floor: a ServiceGroup of five no-op services notifying through libsystemd,
# linked dynamically (its Package.swift says why), built as the release apphostd is.
bash scripts/build-release.sh --floor --scratch-path .build-floor
# The debug build links the Swift libraries dynamically: its ldd shows whether Foundation or ICU
# came back through any dependency.
swift build --product apphostd
exec python3 Benchmarks/process/process_bench.py \
  --binary "$(bash scripts/build-release.sh --scratch-path .build-release --show-bin-path)/apphostd" \
  --servicegroup-floor "$(bash scripts/build-release.sh --floor --scratch-path .build-floor --show-bin-path)/ServiceGroupFloor" \
  --dynamic-binary "$(swift build --show-bin-path)/apphostd" "$@"
