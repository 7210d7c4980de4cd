#!/usr/bin/env bash
# The whole test suite: unit tests of every module, the bad-config corpus, and the integration
# tests under a real systemd user manager and journald (those need root and unshare; without
# them they skip and say why). The benchmarks are built (so they keep compiling) but not run.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/deps.sh
if [ -f Benchmarks/Package.swift ]; then
  swift build --package-path Benchmarks --scratch-path .build-benchmarks
fi
swift build --build-tests
# Documentation: every public symbol of the libraries has a /// comment, and the DocC catalog
# (the getting-started article and the API reference) builds without a warning.
swift package dump-symbol-graph --minimum-access-level public > /dev/null
python3 scripts/check-docs.py "$(dirname "$(swift build --show-bin-path)")/symbolgraph"
swift package generate-documentation --target AppHost --warnings-as-errors
swift test --skip-build
