#!/usr/bin/env bash
# The whole test suite: unit tests of every module, the bad-config corpus, and the integration
# tests under a real systemd user manager and journald (those need root and unshare; without
# them they skip and say why). The benchmarks are built (so they keep compiling) but not run.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/deps.sh test
if [ -f Benchmarks/Package.swift ]; then
  swift build --package-path Benchmarks --scratch-path .build-benchmarks
fi
# The project's own build, tests included, has no warning: a clean build (CI's) shows every one;
# an incremental one shows those of the files it compiled. Dependencies' warnings do not count.
build_log=$(mktemp)
trap 'rm -f "$build_log"' EXIT
swift build --build-tests 2>&1 | tee "$build_log"
own_warnings=$(grep -E '^(/|macro expansion|warning:).*warning: ' "$build_log" | grep -vE '/\.build[^/]*/' | sort -u || true)
if [ -n "$own_warnings" ]; then
  echo "the build warned (keep it at zero):" >&2
  echo "$own_warnings" >&2
  exit 1
fi
# Documentation: every public symbol of the libraries has a /// comment, and the DocC
# catalogs (AppHost: the getting-started article and the API reference; AppHostSystemd: the
# edge and how to compose it; AppHostServices: the built-in services) build without a warning.
swift package dump-symbol-graph --minimum-access-level public > /dev/null
python3 scripts/check-docs.py "$(dirname "$(swift build --show-bin-path)")/symbolgraph"
# The name-clash check names every public type (HummingbirdReadinessTests builds it, and sees it
# fail on a planted clash).
python3 scripts/check-names.py "$(dirname "$(swift build --show-bin-path)")/symbolgraph"
for target in AppHost AppHostSupport AppHostSystemd AppHostServices; do
  swift package generate-documentation --target "$target" --warnings-as-errors
done
# The Prometheus alerting rules: promtool check rules, promtool test rules.
bash scripts/check-prometheus-rules.sh
swift test --skip-build
# The fuzz targets' seeds, each run once through its target without mutation (a regression check,
# not the hunt: scripts/fuzz.sh is that).
"$(swift build --show-bin-path)/apphost-fuzz" replay Fuzz/Corpus
# SystemManagerTests once more, booted in a minimal Debian 13 with systemd 257: everything they
# check under 252 must hold there too, and what 254 and later add ($FDSTORE, the
# $MEMORY_PRESSURE_WATCH systemd sets, FileDescriptorStorePreserve=) is checked only there.
APPHOSTD_DEBIAN_RELEASE=trixie swift test --skip-build --filter 'SystemManagerTests|SystemManagerShutdownTests|LogindContainerTests|TimeZoneContainerTests|MachineConditionContainerTests|DebianPackageTests/installUpgradeRemovePurge'
