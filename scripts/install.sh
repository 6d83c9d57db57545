#!/usr/bin/env bash
# Builds orchd and orchctl and installs them as a system service, on Debian 12 or newer with
# the Swift toolchain on PATH. Run as root from the repository: scripts/install.sh
#
# Installs: $PREFIX/bin/{orchd,orchctl} (PREFIX=/usr/local), /etc/systemd/system/orchd.{service,socket},
# /etc/systemd/user/orchd.{service,socket} (for `systemctl --user`), a commented
# /etc/orchd/orchd.conf unless one exists, the manual pages orchctl(1), orchd(8) and orchd.conf(5) in
# $PREFIX/share/man, and completions for bash, zsh and fish in $PREFIX/share; without DESTDIR,
# it also creates the empty system group orchd (the default admin-group) if there is none.
# Where systemd runs (PID 1), orchd.service is enabled and started: it must run from boot so
# queued jobs run without waiting for a client. orchd.socket is installed but not enabled;
# `systemctl enable --now orchd.socket` adds it (systemd then holds the socket, and clients
# wait instead of failing while orchd restarts). Elsewhere (a container) orchd is started in
# the background with the same paths systemd would give it, in its own session, its output to
# its log and its input from /dev/null (so `install.sh | tee install.log` ends), and stopped
# with `orchctl shutdown`.
#
# Without arguments it installs into the system as above. For a test or a staged install, these
# environment variables change where things go (each defaults to the system path):
#   DESTDIR        prefix of every installed path (binaries, units, configuration)
#   PREFIX         where bin/ goes (default /usr/local)
#   ORCHD_BIN_DIR  already-built orchd and orchctl to install: skips apt-get and the build
#   ORCHD_NO_SYSTEMD=1  start orchd in the background even where systemd runs
#   ORCHD_STATE_DIR, ORCHD_SOCKET, ORCHD_LOG  the started orchd's state directory, socket and
#                  log file (default /var/lib/orchd, /run/orchd/orchd.sock, /var/log/orchd.log,
#                  each under DESTDIR when it is set)
# With DESTDIR, systemd is never asked to do anything: where it runs, nothing is started
# unless ORCHD_NO_SYSTEMD=1 (then orchd starts in the background on the paths above). Relative
# paths are taken from the directory the script is started in; a socket path longer than a
# Unix socket's 107 bytes is refused before anything is installed.
#   ORCHD_ALLOW_NON_ROOT=1  skip the root check (with a DESTDIR the user can write)
#
# It lists what it installed, and the directories and group it had to make, in
# $PREFIX/share/orchd/installed, which scripts/uninstall.sh reads to remove exactly those.
set -euo pipefail

# shellcheck source=scripts/install-paths.sh
. "$(dirname "$0")/install-paths.sh"
cd "$(dirname "$0")/.."

PREFIX=${PREFIX:-/usr/local}
if [ "$(id -u)" -ne 0 ] && [ "${ORCHD_ALLOW_NON_ROOT:-0}" != 1 ]; then
    echo "Error: run as root (sudo $0)" >&2
    exit 1
fi

# Where systemd runs (and ORCHD_NO_SYSTEMD is not 1) it starts orchd; elsewhere this script
# does, on these paths. A staged install's orchd takes its paths under DESTDIR too, as
# scripts/uninstall.sh looks for them: it must never stop or replace the system's orchd on the
# default socket.
under_systemd=0
[ ! -d /run/systemd/system ] || [ "${ORCHD_NO_SYSTEMD:-0}" = 1 ] || under_systemd=1
socket=${ORCHD_SOCKET:-${DESTDIR:+$DESTDIR/run/orchd/orchd.sock}}
state=${ORCHD_STATE_DIR:-${DESTDIR:+$DESTDIR/var/lib/orchd}}
log=${ORCHD_LOG:-$DESTDIR/var/log/orchd.log}
# Checked before anything is installed: orchd could not listen there (unix(7): sun_path).
if [ $under_systemd = 0 ] && [ "${#socket}" -gt 107 ]; then
    echo "Error: the socket path $socket is ${#socket} bytes, more than the 107 a Unix socket's path may have; set ORCHD_SOCKET or a shorter DESTDIR" >&2
    exit 64
fi

if [ -n "${ORCHD_BIN_DIR:-}" ]; then
    bin=$ORCHD_BIN_DIR
else
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq libsqlite3-dev libsystemd-dev pkg-config >/dev/null

    # Static Swift runtime: the binaries start faster and need nothing beside them.
    swift build -c release --static-swift-stdlib --disable-local-rpath --product orchd
    swift build -c release --static-swift-stdlib --disable-local-rpath --product orchctl
    bin=$(swift build -c release --static-swift-stdlib --disable-local-rpath --show-bin-path)
fi
bindir=$DESTDIR$PREFIX/bin
share=$DESTDIR$PREFIX/share

# What this script made, one "kind path" line each (dir, file, conf, group), for
# scripts/uninstall.sh; paths without DESTDIR, so a staged tree that is moved uninstalls where
# it is. A directory counts only when this script made it, so that uninstalling never removes
# one that was there before (an earlier install's entries are kept).
manifest=$share/orchd/installed
made=()
[ ! -f "$manifest" ] || mapfile -t made <"$manifest"
# Notes that this script made `kind` at `path` (a path under DESTDIR).
note() {
    case "$2" in
        "$DESTDIR"/*) made+=("$1 ${2#"$DESTDIR"}") ;;
    esac
}
# Makes each directory (0755) with its missing parents, noting those that did not exist.
make_directories() {
    local directory parent
    for directory in "$@"; do
        parent=$directory
        while [ ! -e "$parent" ]; do
            note dir "$parent"
            parent=$(dirname "$parent")
        done
        install -d -m 0755 "$directory"
    done
}
make_directories "$bindir" "$DESTDIR/etc/systemd/system" "$DESTDIR/etc/systemd/user" "$DESTDIR/etc/orchd" \
    "$share/orchd" "$share/man/man1" "$share/man/man5" "$share/man/man8" "$share/bash-completion/completions" \
    "$share/zsh/site-functions" "$share/fish/vendor_completions.d"
# ORCHD_BIN_DIR=/usr/local/bin starts the installed binaries again: nothing to copy.
[ "$(realpath "$bin")" = "$(realpath "$bindir")" ] || install -m 0755 "$bin/orchd" "$bin/orchctl" "$bindir/"
install -m 0644 systemd/orchd.service systemd/orchd.socket "$DESTDIR/etc/systemd/system/"
install -m 0644 systemd/user/orchd.service systemd/user/orchd.socket "$DESTDIR/etc/systemd/user/"
if [ ! -e "$DESTDIR/etc/orchd/orchd.conf" ]; then
    install -m 0644 systemd/orchd.conf "$DESTDIR/etc/orchd/orchd.conf"
    note conf "$DESTDIR/etc/orchd/orchd.conf"
fi
# The admin group (admin-group, default orchd), empty, as Debian's packages make theirs: adding
# an admin is then one usermod, and orchd does not warn at every start that it does not exist.
if [ -z "$DESTDIR" ] && ! getent group orchd >/dev/null; then
    groupadd --system orchd
    made+=("group orchd")
fi

# Manual pages (generated from the command tables; see man/) and shell completions, written
# by the orchctl being installed so they match its commands.
install -m 0644 man/orchctl.1 "$share/man/man1/"
install -m 0644 man/orchd.8 "$share/man/man8/"
install -m 0644 man/orchd.conf.5 "$share/man/man5/"
"$bin/orchctl" completion bash >"$share/bash-completion/completions/orchctl"
"$bin/orchctl" completion zsh >"$share/zsh/site-functions/_orchctl"
"$bin/orchctl" completion fish >"$share/fish/vendor_completions.d/orchctl.fish"
for file in "$bindir/orchd" "$bindir/orchctl" "$DESTDIR/etc/systemd/system/orchd.service" \
    "$DESTDIR/etc/systemd/system/orchd.socket" "$DESTDIR/etc/systemd/user/orchd.service" \
    "$DESTDIR/etc/systemd/user/orchd.socket" "$share/man/man1/orchctl.1" "$share/man/man8/orchd.8" \
    "$share/man/man5/orchd.conf.5" "$share/bash-completion/completions/orchctl" "$share/zsh/site-functions/_orchctl" \
    "$share/fish/vendor_completions.d/orchctl.fish"; do
    note file "$file"
done
# A staged orchd's own directories (its state directory, which orchd makes, sits in the
# first): listed so that uninstall.sh removes them once empty.
if [ -n "$DESTDIR" ] && [ $under_systemd = 0 ]; then
    make_directories "$(dirname "$state")" "$(dirname "$log")"
    [ -n "${ORCHD_SOCKET:-}" ] || make_directories "$(dirname "$socket")"
fi
printf '%s\n' "${made[@]}" | sort -u >"$manifest"

if [ -n "$DESTDIR" ] && [ $under_systemd = 1 ]; then
    # A staged install: its units are not where systemd reads them, and the system's own
    # orchd.service is not this install's to enable or restart.
    echo "orchd is staged under $DESTDIR; nothing was started (ORCHD_NO_SYSTEMD=1 starts one on paths under it)"
elif [ $under_systemd = 1 ]; then
    systemctl daemon-reload
    systemctl enable orchd.service
    # When orchd.socket is active, systemd hands its socket to the restarted service.
    systemctl restart orchd.service
    echo "orchd is running under systemd: systemctl status orchd"
    echo "optional: systemctl enable --now orchd.socket (systemd holds the control socket)"
else
    # No systemd here: run it as the service would, with the same state and socket paths.
    # Only the orchd that serves this socket is restarted, so another user's or a test's
    # orchd is never touched.
    orchctl=("$bindir/orchctl")
    orchd=("$bindir/orchd")
    if [ -n "$socket" ]; then
        orchctl+=(--socket "$socket")
        orchd+=(--socket "$socket")
    fi
    [ -z "$state" ] || orchd+=(--state-dir "$state")
    [ -z "$DESTDIR" ] || orchd+=(--config "$DESTDIR/etc/orchd/orchd.conf")
    if timeout 5 "${orchctl[@]}" ping >/dev/null 2>&1; then
        echo "orchd is already running; restarting it with the new binary"
        if ! "${orchctl[@]}" shutdown --wait >/dev/null; then
            # An orchd older than `orchctl shutdown`: stop it by its pid, which it reports.
            pid=$("${orchctl[@]}" --json info | sed -n 's/^ *"pid" *: *\([0-9]*\).*/\1/p')
            kill -TERM "$pid"
            while kill -0 "$pid" 2>/dev/null; do sleep 0.1; done
        fi
    fi
    # The modes systemd gives the service's directories at every start (StateDirectoryMode=,
    # RuntimeDirectoryMode=): orchd creates them so, but leaves an existing one as it is, and
    # one an older orchd made 0700 would keep every other user out of the socket and logs.
    if [ "$(id -u)" -eq 0 ] && [ -z "$DESTDIR" ]; then
        [ -n "$socket" ] || install -d -m 0755 /run/orchd
        [ -n "$state" ] || install -d -m 0711 /var/lib/orchd
    fi
    mkdir -p "$(dirname "$log")"
    # Its own session (no terminal, no signals from this shell's job control), its output to
    # the log and its input from /dev/null: nothing of the caller's stays open, so a pipe
    # from this script ends. From /, so it does not keep the clone it was installed from busy.
    # Descriptors above 2 that this script inherited (a caller's pipe or socket) are closed too.
    (
        cd /
        for fd in /proc/$BASHPID/fd/*; do
            fd=${fd##*/}
            if [ "$fd" -gt 2 ]; then eval "exec $fd>&-"; fi
        done
        exec setsid "${orchd[@]}" </dev/null >>"$log" 2>&1
    ) &
    for _ in $(seq 1 100); do timeout 5 "${orchctl[@]}" ping >/dev/null 2>&1 && break; sleep 0.1; done
    timeout 5 "${orchctl[@]}" ping >/dev/null || { echo "Error: orchd did not start; see $log" >&2; exit 1; }
    echo "orchd is running (no systemd here; log: $log; stop it with: orchctl shutdown)"
fi
