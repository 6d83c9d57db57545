#!/usr/bin/env bash
# Stops orchd and removes what scripts/install.sh installed: the files, directories and group
# its list ($PREFIX/share/orchd/installed) names, so nothing that was there before goes.
# Run as root from the repository: scripts/uninstall.sh [--purge]
#
# Kept unless --purge is given, for a later install: the jobs and their logs (the state
# directory, /var/lib/orchd), the settings (/etc/orchd) and the log of an orchd started
# without systemd (/var/log/orchd.log). --purge after a plain uninstall removes what it kept. A directory is removed only when it is empty, and the
# group orchd only when the install made it and it has no members (an admin added since is
# kept, with a note).
#
# The same environment variables as scripts/install.sh say where things are: DESTDIR, PREFIX,
# ORCHD_NO_SYSTEMD=1, ORCHD_STATE_DIR, ORCHD_SOCKET, ORCHD_LOG, ORCHD_ALLOW_NON_ROOT=1. Only an
# orchd running this install's binary is stopped: another one on an exported ORCHD_SOCKET is
# left alone, with a note.
set -euo pipefail

purge=0
case "${1:-}" in
    "") ;;
    --purge) purge=1 ;;
    -h | --help)
        sed -n '2,15p' "$0" | sed 's/^# \{0,1\}//'
        exit 0
        ;;
    *)
        echo "Error: unknown argument '$1'; usage: $0 [--purge]" >&2
        exit 64
        ;;
esac
[ $# -le 1 ] || { echo "Error: too many arguments; usage: $0 [--purge]" >&2; exit 64; }

# shellcheck source=scripts/install-paths.sh
. "$(dirname "$0")/install-paths.sh"
PREFIX=${PREFIX:-/usr/local}
if [ "$(id -u)" -ne 0 ] && [ "${ORCHD_ALLOW_NON_ROOT:-0}" != 1 ]; then
    echo "Error: run as root (sudo $0)" >&2
    exit 1
fi
manifest=$DESTDIR$PREFIX/share/orchd/installed
state=${ORCHD_STATE_DIR:-$DESTDIR/var/lib/orchd}
log=${ORCHD_LOG:-$DESTDIR/var/log/orchd.log}
# Removes what a plain uninstall keeps: the jobs, the settings and the log.
purge_kept() {
    [ "$(realpath -m "$state")" != / ] || { echo "Error: will not remove the state directory '$state'" >&2; exit 1; }
    rm -rf "$DESTDIR/etc/orchd" "$state"
    rm -f "$log"
}
if [ ! -f "$manifest" ]; then
    kept=()
    for path in "$state" "$DESTDIR/etc/orchd" "$log"; do [ ! -e "$path" ] || kept+=("$path"); done
    if [ $purge = 1 ] && [ ! -e "$DESTDIR$PREFIX/bin/orchd" ] && [ ${#kept[@]} -gt 0 ]; then
        # A plain uninstall ran before and kept these; the list of installed files went with it.
        # An orchd still using the state directory (started by hand) holds its lock.
        if [ -e "$state/orchd.lock" ] && ! flock -n "$state/orchd.lock" true; then
            echo "Error: an orchd is running on $state (it holds $state/orchd.lock); stop it, then run $0 --purge again" >&2
            exit 1
        fi
        purge_kept
        echo "removed what the earlier uninstall kept: ${kept[*]}"
        exit 0
    fi
    echo "Error: $manifest does not exist, so scripts/install.sh did not install orchd here, or it was uninstalled already (set DESTDIR or PREFIX as for the install)" >&2
    exit 1
fi

# Stop it first: a running orchd would go on running jobs from a deleted binary.
if [ -z "$DESTDIR" ] && [ -d /run/systemd/system ] && [ "${ORCHD_NO_SYSTEMD:-0}" != 1 ]; then
    systemctl disable --now orchd.service orchd.socket || true
else
    # The orchd install.sh started: on ORCHD_SOCKET, else (staged) on its socket under
    # DESTDIR, else on the default one; only one running this install's binary is stopped, so
    # an ORCHD_SOCKET exported for another orchd never stops that one.
    installed=$DESTDIR$PREFIX/bin/orchd
    sockets=()
    [ -z "${ORCHD_SOCKET:-}" ] || sockets+=("$ORCHD_SOCKET")
    [ -z "$DESTDIR" ] || sockets+=("$DESTDIR/run/orchd/orchd.sock")
    # "": orchctl's default socket, for an install into the system.
    [ ${#sockets[@]} -gt 0 ] || sockets=("")
    for socket in "${sockets[@]}"; do
        orchctl=("$DESTDIR$PREFIX/bin/orchctl")
        [ -z "$socket" ] || orchctl+=(--socket "$socket")
        [ -x "${orchctl[0]}" ] || continue
        # A timeout each: a stopped (SIGSTOP) orchd must not hang the uninstall.
        answer=0
        timeout 5 "${orchctl[@]}" ping >/dev/null 2>&1 || answer=$?
        if [ $answer = 124 ]; then
            # Something listens there and does not answer (a stopped orchd): removing its
            # binary and state from under it would leave it behind.
            echo "Error: the orchd on ${socket:-the default socket} does not answer (stopped with SIGSTOP?); nothing was removed: resume or stop it (kill -CONT, kill) and run $0 again" >&2
            exit 1
        fi
        [ $answer = 0 ] || continue
        pid=$(timeout 5 "${orchctl[@]}" --json info | sed -n 's/^ *"pid" *: *\([0-9]*\).*/\1/p')
        running=$(readlink "/proc/$pid/exe" 2>/dev/null || true)
        running=${running% (deleted)}
        if [ -z "$pid" ] || [ "$running" != "$(realpath -m -- "$installed")" ]; then
            echo "left alone: the orchd on ${socket:-the default socket} runs ${running:-an unknown binary}, not $installed"
            continue
        fi
        # Said first: a running job holds the stop for up to orchd's drain timeout.
        echo "stopping orchd (pid $pid): jobs still running get its --drain-timeout (10s unless set) to end"
        if timeout 60 "${orchctl[@]}" shutdown --wait >/dev/null; then
            echo "stopped orchd"
        else
            echo "Error: orchd (pid $pid) on ${socket:-the default socket} did not stop within 60 s; stop it (kill $pid) and run $0 again" >&2
            exit 1
        fi
        break
    done
fi

directories=()
group=""
while IFS=' ' read -r kind path; do
    # Paths are under DESTDIR, as the install wrote them; any other line is not the install's.
    case "$path" in
        /*/../* | /*/.. | */./* | "") [ "$kind" = group ] || continue ;;
        /*) ;;
        *) [ "$kind" = group ] || continue ;;
    esac
    case "$kind" in
        file) rm -f "$DESTDIR$path" ;;
        dir) directories+=("$DESTDIR$path") ;;
        conf) ;;  # the settings, which --purge removes with the rest of /etc/orchd
        group) group=$path ;;
    esac
done <"$manifest"
rm -f "$manifest"
if [ $purge = 1 ]; then
    purge_kept
fi
# Deepest first, so a parent made for them is empty by its turn.
if [ ${#directories[@]} -gt 0 ]; then
    printf '%s\n' "${directories[@]}" | awk '{ print gsub("/", "/"), $0 }' | sort -rn | cut -d' ' -f2- |
        while IFS= read -r directory; do
            [ ! -d "$directory" ] || rmdir --ignore-fail-on-non-empty "$directory"
        done
fi
[ -n "$DESTDIR" ] || [ ! -d /run/systemd/system ] || systemctl daemon-reload
if [ -z "$DESTDIR" ] && [ -z "${ORCHD_SOCKET:-}" ] && [ -d /run/orchd ]; then
    rmdir --ignore-fail-on-non-empty /run/orchd
fi
if [ -n "$group" ] && getent group "$group" >/dev/null; then
    if [ -z "$(getent group "$group" | cut -d: -f4)" ]; then
        groupdel "$group"
    else
        echo "kept the group $group: it has members ($(getent group "$group" | cut -d: -f4)); groupdel $group removes it"
    fi
fi
if [ $purge = 1 ]; then
    echo "orchd is uninstalled, with its jobs, settings and log"
else
    echo "orchd is uninstalled; kept for a later install: the jobs ($state), the settings ($DESTDIR/etc/orchd) and the log ($log); $0 --purge removes them"
fi
