#!/usr/bin/env bash
# Installs the Debian packages apphostd builds and tests with, if any is missing.
# Needs root (apt-get); does nothing when everything is already there.
set -euo pipefail
packages=(libsystemd-dev libyaml-dev pkg-config dbus-daemon dbus-bin util-linux systemd procps systemd-container debootstrap binutils prometheus prometheus-node-exporter curl)
missing=()
for p in "${packages[@]}"; do
  dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "installing: ${missing[*]}"
  apt-get update
  DEBIAN_FRONTEND=noninteractive apt-get install -y "${missing[@]}"
fi
