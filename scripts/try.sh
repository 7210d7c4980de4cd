#!/usr/bin/env bash
# Try apphostd under systemd without touching the machine's own systemd (or on a machine, such as
# a container, that has none): builds apphostd, starts a private journald and systemd user
# manager in a private mount namespace (the integration tests' sandbox), installs apphostd as the
# user unit `apphostd.service` on config/apphostd.yaml, and opens a shell in which
# `systemctl --user` and `journalctl` reach them. Leaving the shell stops everything.
#
#   bash scripts/try.sh                # an interactive shell; see the README's walkthrough
#   bash scripts/try.sh 'COMMANDS'     # runs COMMANDS in that shell instead (bash -c), for scripts
#
# Needs root (unshare, tmpfs mounts, cgroups). On a machine where systemd runs as PID 1, install
# the real unit instead: deploy/INSTALL.md.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
if [ "$(id -u)" != 0 ]; then
    echo "scripts/try.sh: needs root to start a private systemd (unshare, mounts); or install the unit: deploy/INSTALL.md" >&2
    exit 1
fi
bash scripts/deps.sh try
binary=$(swift build --product apphostd --show-bin-path)/apphostd
# SwiftPM's own no-op build plans the whole package (seconds): skip it when nothing the binary
# is built from changed since.
if [ ! -x "$binary" ] || [ -n "$(find Package.swift Sources -newer "$binary" -print -quit)" ]; then
    swift build --product apphostd >&2
fi

S=$(mktemp -d /tmp/apphostd-try.XXXXXX)
cleanup() {
    touch "$S/stop"
    # The sandbox stops journald and the manager (and with it apphostd), then writes `cleaned`.
    for _ in $(seq 100); do [ -e "$S/cleaned" ] && break; sleep 0.1; done
    exec 3>&- 2>/dev/null || true
    # Nothing of this run stays behind once the sandbox says it stopped everything.
    if [ -e "$S/cleaned" ]; then rm -rf "$S"; fi
}
trap cleanup EXIT

# The sandbox runs until its stdin closes or $S/stop appears.
exec 3> >(unshare --mount --propagation private -- bash Tests/IntegrationTests/Support/sandbox.sh "$S" 2>"$S/sandbox.log")
for _ in $(seq 300); do
    [ -e "$S/ready" ] || [ -e "$S/failed" ] && break
    sleep 0.1
done
if [ ! -e "$S/ready" ]; then
    echo "scripts/try.sh: the private systemd did not start:" >&2
    cat "$S/failed" "$S/sandbox.log" >&2 2>/dev/null || true
    exit 1
fi
get() { sed -n "s/^$1=//p" "$S/ready"; }
pid=$(get pid)

# What systemd's LoadCredential= would provide: the session-lock secret, 0600.
mkdir -p "$S/credentials"
(umask 077; head -c 32 /dev/urandom | base64 > "$S/credentials/session-secret")

# The user-manager version of deploy/apphostd.service: the same contract with systemd (notify,
# reload, watchdog), without the system-only sandboxing a user manager cannot apply.
unit_dir=$(get unit_dir)
mkdir -p "$unit_dir"
cat > "$unit_dir/apphostd.service" <<EOF
[Unit]
Description=apphostd application service host (try.sh)

[Service]
Type=notify
NotifyAccess=main
ExecStart=$binary run --config $root/config/apphostd.yaml
ExecReload=$binary reload --config $root/config/apphostd.yaml
ExecStopPost=-$binary record-exit --config $root/config/apphostd.yaml
TimeoutStartSec=90s
TimeoutStopSec=30s
WatchdogSec=30s
Restart=on-failure
RestartPreventExitStatus=78
FileDescriptorStoreMax=1
Environment=STATE_DIRECTORY=$S/state
Environment=CREDENTIALS_DIRECTORY=$S/credentials
EOF
mkdir -p "$S/state"

inside=(nsenter "--mount=/proc/$pid/ns/mnt" -- env
    "XDG_RUNTIME_DIR=$(get XDG_RUNTIME_DIR)" "XDG_CONFIG_HOME=$(get XDG_CONFIG_HOME)"
    "DBUS_SESSION_BUS_ADDRESS=$(get DBUS_SESSION_BUS_ADDRESS)" "SYSTEMD_PAGER=" "PAGER=cat"
    "APPHOSTD_CONFIG=$root/config/apphostd.yaml" "STATE_DIRECTORY=$S/state" "PATH=$(dirname "$binary"):$PATH")
"${inside[@]}" systemctl --user daemon-reload

if [ $# -gt 0 ]; then
    "${inside[@]}" bash -c "$1"
else
    echo "A private systemd user manager and journald are running; apphostd.service is installed."
    echo "Try: systemctl --user start apphostd; systemctl --user status apphostd; journalctl --user-unit apphostd"
    echo "State directory: $S/state. Leave with exit (stops everything)."
    "${inside[@]}" env PS1='(apphostd-try) \w# ' bash --norc -i
fi
