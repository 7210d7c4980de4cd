#!/usr/bin/env bash
# Installs apphostd as a system service: deploy/install.sh BINARY [ROOT]
#
#   BINARY  the built daemon, e.g. .build/release/apphostd (see deploy/INSTALL.md for the build)
#   ROOT    the root of the system to install into (default /); another directory (a container's
#           or an image's root) gets the same files, and systemctl is left to its caller.
#
# Installs, under ROOT:
#   usr/local/bin/apphostd                  the binary, stripped (install -s -m 0755)
#   etc/apphostd/apphostd.yaml              config/apphostd.yaml, unless a config is already there
#   etc/apphostd/session-secret             a new random secret (root-only), unless one is there
#   etc/systemd/system/apphostd.service     deploy/apphostd.service
#   usr/local/share/doc/apphostd/README.md  README.md (the unit's Documentation=)
#   etc/sysusers.d/apphostd.conf            the system user apphostd (the unit's User=), made at
#                                           once with systemd-sysusers
#   etc/dbus-1/system.d/org.apphost.apphostd.conf
#                                           the D-Bus policy: apphostd owns org.apphost.apphostd
#                                           (systemctl service-log-level; see INSTALL.md)
#   etc/tmpfiles.d/apphostd.conf            /run/apphostd-metrics (apphostd's, 0755) and an empty
#                                           apphostd.prom in it, at boot and at once (the metrics
#                                           textfile's place; see INSTALL.md)
#   var/lib/prometheus/node-exporter/apphostd.prom
#                                           a link to /run/apphostd-metrics/apphostd.prom, when
#                                           node_exporter's textfile directory is there
# On ROOT=/ it then runs `systemctl daemon-reload`; enabling and starting is the operator's step.
# Runs as root (no sudo inside). Running it again upgrades the binary, the unit and the README
# and keeps the config and the secret.
set -euo pipefail

usage="usage: $0 BINARY [ROOT]   (ROOT defaults to /)"
if [ $# -lt 1 ] || [ $# -gt 2 ]; then
  echo "$usage" >&2
  exit 2
fi
binary=$1
root=${2:-/}
source_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

if [ "$(id -u)" -ne 0 ]; then
  echo "install.sh: must run as root (it writes /etc and /usr/local under $root): run it with sudo or as root" >&2
  exit 1
fi
if [ ! -e "$binary" ]; then
  echo "install.sh: no binary at $binary: build it first (bash scripts/build-release.sh)" >&2
  exit 1
fi
if [ ! -f "$binary" ] || [ ! -x "$binary" ]; then
  echo "install.sh: $binary is not an executable file" >&2
  exit 1
fi
status=0
version=$("$binary" --version 2>&1) || status=$?
if [ "$status" -ne 0 ]; then
  # The dynamic loader's own words: "error while loading shared libraries: NAME: cannot open ...".
  missing=$(printf '%s' "$version" | sed -n 's/.*error while loading shared libraries: \([^:]*\):.*/\1/p' | head -n 1)
  if [ -n "$missing" ]; then
    case "$missing" in
      libsystemd.so.*) package=libsystemd0 ;;
      libyaml-0.so.*) package=libyaml-0-2 ;;
      libstdc++.so.*) package=libstdc++6 ;;
      *) package="the package that has $missing" ;;
    esac
    echo "install.sh: $binary needs the shared library $missing, which this machine lacks: install $package (apt-get install $package)" >&2
    exit 1
  fi
  echo "install.sh: $binary --version failed (exit $status${version:+: $(printf '%s' "$version" | head -c 300)}): build it with bash scripts/build-release.sh" >&2
  exit 1
fi
if ! command -v strip >/dev/null; then
  echo "install.sh: no strip (Debian: binutils), which install -s needs to strip the binary" >&2
  exit 1
fi
if [ ! -d "$root" ]; then
  echo "install.sh: the target root $root is not a directory" >&2
  exit 1
fi
for file in config/apphostd.yaml deploy/apphostd.service deploy/dbus/org.apphost.apphostd.conf README.md; do
  if [ ! -f "$source_dir/$file" ]; then
    echo "install.sh: $source_dir/$file is missing (run it from a checkout of apphostd)" >&2
    exit 1
  fi
done

# "/" and "/x/" both end without a slash here, so "$prefix/etc" is "/etc" or "/x/etc".
prefix=${root%/}
while [ "${prefix%/}" != "$prefix" ]; do prefix=${prefix%/}; done
bin_dir=$prefix/usr/local/bin
etc_dir=$prefix/etc/apphostd
unit_dir=$prefix/etc/systemd/system
doc_dir=$prefix/usr/local/share/doc/apphostd

install -d -m 0755 "$bin_dir" "$etc_dir" "$unit_dir" "$doc_dir"

install -s -m 0755 "$binary" "$bin_dir/apphostd"
echo "installed $bin_dir/apphostd (stripped, from $binary)"

if [ -e "$etc_dir/apphostd.yaml" ]; then
  echo "kept $etc_dir/apphostd.yaml (already there; the shipped default is $source_dir/config/apphostd.yaml)"
else
  install -m 0644 "$source_dir/config/apphostd.yaml" "$etc_dir/apphostd.yaml"
  echo "installed $etc_dir/apphostd.yaml"
fi

if [ -e "$etc_dir/session-secret" ]; then
  echo "kept $etc_dir/session-secret (already there)"
else
  # Root-only on disk; systemd hands it to the service through LoadCredential=.
  (umask 077; head -c 32 /dev/urandom | base64 > "$etc_dir/session-secret")
  echo "created $etc_dir/session-secret (mode 0600, 32 random bytes in base64)"
fi

install -m 0644 "$source_dir/deploy/apphostd.service" "$unit_dir/apphostd.service"
echo "installed $unit_dir/apphostd.service"

install -m 0644 "$source_dir/README.md" "$doc_dir/README.md"
echo "installed $doc_dir/README.md"

# The daemon's own system user (the unit's User=): dbus-daemon resolves the owner of a bus name
# against its policy when it loads it, so the user exists before the policy does.
sysusers_dir=$prefix/etc/sysusers.d
tmpfiles_dir=$prefix/etc/tmpfiles.d
dbus_dir=$prefix/etc/dbus-1/system.d
install -d -m 0755 "$sysusers_dir" "$tmpfiles_dir" "$dbus_dir"
printf '%s\n' \
  '# apphostd: the user the unit runs as (User=apphostd)' \
  'u apphostd - "apphostd application service host" /var/lib/apphostd' > "$sysusers_dir/apphostd.conf"
chmod 0644 "$sysusers_dir/apphostd.conf"
if [ -z "$prefix" ]; then
  systemd-sysusers "$sysusers_dir/apphostd.conf"
else
  systemd-sysusers --root="$root" "$sysusers_dir/apphostd.conf"
fi
echo "installed $sysusers_dir/apphostd.conf (system user apphostd)"

install -m 0644 "$source_dir/deploy/dbus/org.apphost.apphostd.conf" "$dbus_dir/org.apphost.apphostd.conf"
echo "installed $dbus_dir/org.apphost.apphostd.conf (apphostd may own org.apphost.apphostd on the system bus)"

# The metrics textfile: /run/apphostd-metrics, apphostd's (0755), which the unit may write
# (ReadWritePaths=); tmpfiles.d makes it with an empty file at boot, so node_exporter's link to it
# never dangles (an empty textfile has no series and is no error).
printf '%s\n' \
  '# apphostd: the metrics textfile (host.metrics.textfile), read by node_exporter through a link' \
  'd /run/apphostd-metrics 0755 apphostd apphostd -' \
  'f /run/apphostd-metrics/apphostd.prom 0644 apphostd apphostd -' > "$tmpfiles_dir/apphostd.conf"
chmod 0644 "$tmpfiles_dir/apphostd.conf"
echo "installed $tmpfiles_dir/apphostd.conf"
collector_dir=$prefix/var/lib/prometheus/node-exporter
if [ -d "$collector_dir" ]; then
  ln -sfn /run/apphostd-metrics/apphostd.prom "$collector_dir/apphostd.prom"
  echo "linked $collector_dir/apphostd.prom -> /run/apphostd-metrics/apphostd.prom (node_exporter's textfile directory)"
else
  echo "no $collector_dir (prometheus-node-exporter not installed): to export metrics later, link it as deploy/INSTALL.md says"
fi

if [ -z "$prefix" ]; then
  if ! systemctl daemon-reload; then
    echo "install.sh: the files are installed, but systemctl daemon-reload failed (is systemd PID 1 here?)" >&2
    exit 1
  fi
  echo "ran systemctl daemon-reload"
  systemd-tmpfiles --create "$tmpfiles_dir/apphostd.conf" || echo "install.sh: systemd-tmpfiles --create failed; /run/apphostd-metrics appears at the next boot" >&2
  # dbus-daemon reads a new policy file on its own (inotify); asking makes it certain.
  if systemctl -q is-active dbus.service; then
    systemctl reload dbus.service || echo "install.sh: systemctl reload dbus failed; the bus policy applies at dbus-daemon's next reload" >&2
  fi
  echo "next: systemctl enable --now apphostd   (or systemctl restart apphostd if it was already running)"
else
  echo "not calling systemctl: $root is not the running system's root; enable the unit there (systemctl enable apphostd)"
fi
