#!/usr/bin/env bash
# Installs the Debian packages one use of apphostd needs, if any is missing, and no more:
#
#   bash scripts/deps.sh build   building and running the daemon (scripts/run.sh):
#                                libsystemd-dev, libyaml-dev, pkg-config
#   bash scripts/deps.sh try     build, plus a private systemd user manager (scripts/try.sh):
#                                dbus-daemon, dbus-bin, util-linux, procps
#   bash scripts/deps.sh test    try, plus the test suite's tools (scripts/test.sh, the
#                                benchmarks): systemd-container and debootstrap (the Debian 12
#                                and 13 roots), binutils (install.sh strips), curl, scdoc (the
#                                man pages, deploy/man), debhelper and lintian (the Debian
#                                package, scripts/build-deb.sh), and the
#                                programs prometheus, promtool and prometheus-node-exporter
#
# Everything goes in with --no-install-recommends. Nothing installed starts a network listener or
# enables a service, now or at the next boot: Prometheus and node_exporter are not installed as
# packages (theirs enable and start units that listen on the network); their .debs are
# downloaded and unpacked into .build-tools/ (`apt-get download`, `dpkg-deb -x`), and the tests
# run them on loopback ports of their own. `bash scripts/deps.sh test --print-path` prints the
# folder that holds those programs, for PATH; `--list` the level's packages.
#
# libsystemd-dev depends on exactly its own libsystemd0 version, and so does systemd: on a machine
# behind Debian's archive, installing it upgrades systemd too (apt cannot avoid it).
# Needs root (apt-get) only when something is missing.
set -euo pipefail
cd "$(dirname "$0")/.."
level=${1:-}
tools=$PWD/.build-tools
tool_bin=$tools/root/usr/bin

build=(libsystemd-dev libyaml-dev pkg-config)
try=("${build[@]}" dbus-daemon dbus-bin util-linux procps)
test=("${try[@]}" systemd-container debootstrap binutils curl scdoc debhelper lintian)
case "$level" in
  build) packages=("${build[@]}") ;;
  try) packages=("${try[@]}") ;;
  test) packages=("${test[@]}") ;;
  *)
    echo "usage: bash scripts/deps.sh build|try|test [--list|--print-path]" >&2
    echo "  build: what building and running apphostd needs; try: and scripts/try.sh; test: and the test suite" >&2
    exit 64
    ;;
esac
case "${2:-}" in
  --print-path) echo "$tool_bin"; exit 0 ;;
  --list) echo "${packages[*]}"; exit 0 ;;
esac

updated=0
update() {
  if [ "$updated" = 0 ]; then apt-get update; updated=1; fi
}

missing=()
for p in "${packages[@]}"; do
  # Installed, not merely known: a removed package whose config files stay is still listed.
  [ "$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null)" = "install ok installed" ] || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "installing: ${missing[*]}"
  update
  DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${missing[@]}"
fi

if [ "$level" = test ]; then
  # The programs only, out of Debian's own packages: no unit, no user, nothing enabled.
  programs=(prometheus promtool prometheus-node-exporter)
  absent=()
  for program in "${programs[@]}"; do
    [ -x "$tool_bin/$program" ] || absent+=("$program")
  done
  if [ ${#absent[@]} -gt 0 ]; then
    echo "unpacking into .build-tools: ${programs[*]} (Debian's prometheus and prometheus-node-exporter, not installed)"
    update
    rm -rf "$tools/debs"
    mkdir -p "$tools/debs" "$tools/root"
    (cd "$tools/debs" && apt-get download -o APT::Sandbox::User=root prometheus prometheus-node-exporter)
    for deb in "$tools"/debs/*.deb; do
      dpkg-deb -x "$deb" "$tools/root"
    done
    for program in "${programs[@]}"; do
      [ -x "$tool_bin/$program" ] || { echo "deps.sh: $program is not in the unpacked packages ($tool_bin)" >&2; exit 1; }
    done
  fi
fi
