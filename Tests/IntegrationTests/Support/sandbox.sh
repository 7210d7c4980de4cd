#!/bin/bash
# A private systemd for the integration tests: journald plus a user manager (and its D-Bus),
# confined to a private mount namespace and a private cgroup subtree.
#
#   unshare --mount --propagation private -- bash sandbox.sh STATE_DIR
#
# Sets up:  tmpfs over /run/systemd and /run/log (the host's stay untouched), /run/systemd/system,
#           systemd-journald (files under the tmpfs /run/log/journal),
#           systemd --user --log-target=journal with XDG_RUNTIME_DIR=STATE_DIR/run (0700),
#           XDG_CONFIG_HOME=STATE_DIR/config (units go in STATE_DIR/config/systemd/user),
#           the user bus at STATE_DIR/run/bus (dbus.socket of the user manager, else our own dbus-daemon).
# Then writes STATE_DIR/ready (KEY=VALUE lines, written atomically) or STATE_DIR/failed (error=...),
# and waits until stdin reaches EOF, STATE_DIR/stop exists, or SIGTERM/SIGINT; then stops everything
# it started, removes its cgroups and writes STATE_DIR/cleaned.
# Manual use: sleep 3600 | unshare --mount --propagation private -- bash sandbox.sh /tmp/sb
#             (then: nsenter --mount=/proc/$(sed -n 's/^pid=//p' /tmp/sb/ready)/ns/mnt -- env ... systemctl --user ...)
#
# Why a private cgroup subtree: a user manager migrates every process of its own root cgroup into
# init.scope. Started in the root cgroup it would move all processes of the machine; started in
# `<unique>.slice/user-UID.slice/user@UID.service` it moves only ours, concurrent sandboxes do not
# share app.slice, and journald derives _SYSTEMD_USER_UNIT= for our units exactly as on a real system.
set -u
S=${1:?usage: sandbox.sh STATE_DIR}
start_ns=$(date +%s%N)
ms_since_start() { echo $(( ($(date +%s%N) - start_ns) / 1000000 )); }
log() { echo "sandbox[$$] $(ms_since_start)ms: $*" >&2; }

UID_=$(id -u)
CG="apphostd_it_$$.slice/user-$UID_.slice/user@$UID_.service"
CG_TOP="apphostd_it_$$.slice"
HIERARCHIES=()
JOURNALD_PID=""
MANAGER_PID=""
DBUS_PID=""
CLEANED=0

cgroup_hierarchies() {
    if [ -e /sys/fs/cgroup/cgroup.controllers ]; then
        echo /sys/fs/cgroup            # pure cgroup v2
        return
    fi
    local d
    for d in /sys/fs/cgroup/*; do
        [ -d "$d" ] && [ -e "$d/cgroup.procs" ] || continue
        case "$(basename "$d")" in cpuset|*cpuset*) continue ;; esac   # needs cpus/mems set first
        echo "$d"
    done
}

confine_to_cgroup() {
    local h
    for h in $(cgroup_hierarchies); do
        if mkdir -p "$h/$CG" 2>/dev/null && echo $$ > "$h/$CG/cgroup.procs" 2>/dev/null; then
            HIERARCHIES+=("$h")
        else
            log "warning: could not confine to $h/$CG"
        fi
    done
}

# All pids in our cgroup subtree (first hierarchy that worked) except this script, into PIDS.
# Builtins only: a command substitution would fork a subshell that lists itself.
cgroup_pids() {
    PIDS=()
    local h=${HIERARCHIES[0]:-} f p
    [ -n "$h" ] && [ -d "$h/$CG_TOP" ] || return 0
    shopt -s globstar nullglob
    for f in "$h/$CG_TOP"/**/cgroup.procs; do
        while read -r p; do [ "$p" != "$$" ] && PIDS+=("$p"); done < "$f"
    done
}

wait_gone() {   # wait_gone TIMEOUT_DECISECONDS PID...
    local n=$1; shift
    local p alive
    while [ "$n" -gt 0 ]; do
        alive=0
        for p in "$@"; do kill -0 "$p" 2>/dev/null && alive=1; done
        [ $alive = 0 ] && return 0
        sleep 0.1; n=$((n - 1))
    done
    return 1
}

cleanup() {
    [ $CLEANED = 1 ] && return
    CLEANED=1
    log "cleaning up"
    if [ -n "$MANAGER_PID" ] && kill -0 "$MANAGER_PID" 2>/dev/null; then
        kill -TERM "$MANAGER_PID"                   # the user manager stops its units, then exits
        wait_gone 150 "$MANAGER_PID" || { log "user manager still running, SIGKILL"; kill -KILL "$MANAGER_PID"; }
    fi
    [ -n "$DBUS_PID" ] && kill -TERM "$DBUS_PID" 2>/dev/null
    cgroup_pids
    local p left=()
    for p in "${PIDS[@]}"; do [ "$p" != "${JOURNALD_PID:-none}" ] && left+=("$p"); done
    if [ ${#left[@]} -gt 0 ]; then
        log "killing leftovers: ${left[*]}"
        kill -KILL "${left[@]}" 2>/dev/null
    fi
    if [ -n "$JOURNALD_PID" ] && kill -0 "$JOURNALD_PID" 2>/dev/null; then
        kill -TERM "$JOURNALD_PID"
        wait_gone 50 "$JOURNALD_PID" || kill -KILL "$JOURNALD_PID"
    fi
    wait 2>/dev/null
    cgroup_pids
    [ ${#PIDS[@]} -gt 0 ] && { kill -KILL "${PIDS[@]}" 2>/dev/null; sleep 0.2; }
    local h
    for h in "${HIERARCHIES[@]}"; do
        echo $$ > "$h/cgroup.procs" 2>/dev/null
        find "$h/$CG_TOP" -depth -type d -exec rmdir {} \; 2>/dev/null
        [ -d "$h/$CG_TOP" ] && log "warning: could not remove $h/$CG_TOP"
    done
    umount /run/log 2>/dev/null; umount /run/systemd 2>/dev/null
    log "cleaned"
    : > "$S/cleaned"
}

fail() {
    log "error: $*"
    { echo "error=$*"; } > "$S/failed.tmp" && mv "$S/failed.tmp" "$S/failed"
    for f in journald.log manager.log; do [ -s "$S/$f" ] && { echo "--- $f"; tail -n 20 "$S/$f"; } >&2; done
    cleanup
    exit 1
}

trap 'cleanup; exit 0' TERM INT HUP
trap cleanup EXIT

mkdir -p "$S" || { echo "cannot create $S" >&2; exit 1; }
[ "$(id -u)" = 0 ] || fail "not root"

confine_to_cgroup

# Private /run/systemd and /run/log: our journald's sockets and files, invisible outside.
mkdir -p /run/systemd /run/log
mount -t tmpfs -o mode=0755,size=64m tmpfs /run/systemd || fail "mount tmpfs /run/systemd"
mount -t tmpfs -o mode=0755,size=256m tmpfs /run/log || fail "mount tmpfs /run/log"
mkdir -p /run/systemd/system

# Nothing from an enclosing service manager or session may leak in.
unset NOTIFY_SOCKET JOURNAL_STREAM INVOCATION_ID LISTEN_PID LISTEN_FDS LISTEN_FDNAMES WATCHDOG_PID WATCHDOG_USEC \
      MANAGERPID SYSTEMD_EXEC_PID DBUS_SESSION_BUS_ADDRESS MEMORY_PRESSURE_WATCH MEMORY_PRESSURE_WRITE \
      STATE_DIRECTORY CREDENTIALS_DIRECTORY APPHOSTD_CONFIG

/lib/systemd/systemd-journald </dev/null >"$S/journald.log" 2>&1 &
JOURNALD_PID=$!
for _ in $(seq 1 500); do
    [ -S /run/systemd/journal/stdout ] && [ -S /run/systemd/journal/socket ] && break
    kill -0 $JOURNALD_PID 2>/dev/null || fail "systemd-journald exited: $(tail -n 5 "$S/journald.log")"
    sleep 0.02
done
[ -S /run/systemd/journal/stdout ] || fail "journald did not create /run/systemd/journal/stdout within 10s"
journald_ms=$(ms_since_start)

export XDG_RUNTIME_DIR="$S/run" XDG_CONFIG_HOME="$S/config" XDG_STATE_HOME="$S/state" \
       XDG_DATA_HOME="$S/data" XDG_CACHE_HOME="$S/cache"
mkdir -p -m 0700 "$XDG_RUNTIME_DIR"
chmod 0700 "$XDG_RUNTIME_DIR"
mkdir -p "$XDG_CONFIG_HOME/systemd/user" "$XDG_STATE_HOME" "$XDG_DATA_HOME" "$XDG_CACHE_HOME"

/lib/systemd/systemd --user --log-target=journal </dev/null >"$S/manager.log" 2>&1 &
MANAGER_PID=$!
state=""
for _ in $(seq 1 750); do
    kill -0 $MANAGER_PID 2>/dev/null || fail "systemd --user exited: $(tail -n 5 "$S/manager.log")"
    if [ -S "$XDG_RUNTIME_DIR/systemd/private" ]; then
        state=$(systemctl --user is-system-running 2>/dev/null)
        case "$state" in running|degraded) break ;; esac
    fi
    sleep 0.02
done
case "$state" in running|degraded) ;; *) fail "user manager not running within 15s (state: '$state')" ;; esac
manager_ms=$(ms_since_start)

DBUS_SOURCE=user-manager
if [ ! -S "$XDG_RUNTIME_DIR/bus" ]; then
    DBUS_SOURCE=sandbox
    dbus-daemon --session --nofork --nopidfile --address="unix:path=$XDG_RUNTIME_DIR/bus" </dev/null >"$S/dbus.log" 2>&1 &
    DBUS_PID=$!
    for _ in $(seq 1 250); do [ -S "$XDG_RUNTIME_DIR/bus" ] && break; sleep 0.02; done
    [ -S "$XDG_RUNTIME_DIR/bus" ] || fail "no session bus at $XDG_RUNTIME_DIR/bus"
fi
export DBUS_SESSION_BUS_ADDRESS="unix:path=$XDG_RUNTIME_DIR/bus"
systemctl --user set-environment DBUS_SESSION_BUS_ADDRESS="$DBUS_SESSION_BUS_ADDRESS" || true

{
    echo "pid=$$"
    echo "manager_pid=$MANAGER_PID"
    echo "journald_pid=$JOURNALD_PID"
    echo "XDG_RUNTIME_DIR=$XDG_RUNTIME_DIR"
    echo "XDG_CONFIG_HOME=$XDG_CONFIG_HOME"
    echo "XDG_STATE_HOME=$XDG_STATE_HOME"
    echo "DBUS_SESSION_BUS_ADDRESS=$DBUS_SESSION_BUS_ADDRESS"
    echo "dbus=$DBUS_SOURCE"
    echo "unit_dir=$XDG_CONFIG_HOME/systemd/user"
    echo "journal_dir=/run/log/journal"
    echo "cgroup=/$CG"
    echo "journald_ms=$journald_ms"
    echo "manager_ms=$manager_ms"
    echo "ready_ms=$(ms_since_start)"
} > "$S/ready.tmp" && mv "$S/ready.tmp" "$S/ready"
log "ready: journald ${journald_ms}ms, manager ${manager_ms}ms, bus from $DBUS_SOURCE"

# Wait for EOF on stdin (the test closed its pipe or died) or STATE_DIR/stop.
while :; do
    read -r -t 1 _
    rc=$?
    if [ $rc -eq 0 ]; then continue; fi
    if [ $rc -gt 128 ]; then [ -e "$S/stop" ] && break; continue; fi
    break
done
cleanup
exit 0
