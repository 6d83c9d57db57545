#!/usr/bin/env bash
# Builds orchd and orchctl and installs them as a system service, on Debian 12 or newer with
# the Swift toolchain on PATH. Run as root from the repository: scripts/install.sh
#
# Installs: /usr/local/bin/{orchd,orchctl}, /etc/systemd/system/orchd.{service,socket},
# /etc/systemd/user/orchd.{service,socket} (for `systemctl --user`), and a commented
# /etc/orchd/orchd.conf unless one exists.
# Where systemd runs (PID 1), orchd.service is enabled and started: it must run from boot so
# queued jobs run without waiting for a client. orchd.socket is installed but not enabled;
# `systemctl enable --now orchd.socket` adds it (systemd then holds the socket, and clients
# wait instead of failing while orchd restarts). Elsewhere (a container) orchd is started in
# the background with the same paths systemd would give it.
set -euo pipefail
cd "$(dirname "$0")/.."

if [ "$(id -u)" -ne 0 ]; then
    echo "Error: run as root (sudo $0)" >&2
    exit 1
fi

export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq libsqlite3-dev libsystemd-dev pkg-config >/dev/null

# Static Swift runtime: the binaries start faster and need nothing beside them.
swift build -c release --static-swift-stdlib --disable-local-rpath --product orchd
swift build -c release --static-swift-stdlib --disable-local-rpath --product orchctl
bin=$(swift build -c release --static-swift-stdlib --disable-local-rpath --show-bin-path)
install -m 0755 "$bin/orchd" "$bin/orchctl" /usr/local/bin/
install -m 0644 systemd/orchd.service systemd/orchd.socket /etc/systemd/system/
install -d -m 0755 /etc/systemd/user
install -m 0644 systemd/user/orchd.service systemd/user/orchd.socket /etc/systemd/user/
install -d -m 0755 /etc/orchd
[ -e /etc/orchd/orchd.conf ] || install -m 0644 systemd/orchd.conf /etc/orchd/orchd.conf

if [ -d /run/systemd/system ]; then
    systemctl daemon-reload
    systemctl enable orchd.service
    # When orchd.socket is active, systemd hands its socket to the restarted service.
    systemctl restart orchd.service
    echo "orchd is running under systemd: systemctl status orchd"
    echo "optional: systemctl enable --now orchd.socket (systemd holds the control socket)"
else
    # No systemd here: run it as the service would, with the same state and socket paths.
    # Restart only the orchd that serves the default socket: its pid comes from the daemon
    # itself, so another user's or a test's orchd is never touched.
    if pid=$(orchctl --json info 2>/dev/null | sed -n 's/^ *"pid" *: *\([0-9]*\).*/\1/p') && [ -n "$pid" ]; then
        echo "orchd (pid $pid) is already running; restarting it with the new binary"
        kill -TERM "$pid"
        while kill -0 "$pid" 2>/dev/null; do sleep 0.1; done
    fi
    mkdir -p /var/log
    # From /, so the daemon does not keep the clone it was installed from busy.
    (cd / && nohup /usr/local/bin/orchd >>/var/log/orchd.log 2>&1 &)
    for _ in $(seq 1 100); do orchctl ping >/dev/null 2>&1 && break; sleep 0.1; done
    orchctl ping >/dev/null || { echo "Error: orchd did not start; see /var/log/orchd.log" >&2; exit 1; }
    echo "orchd is running (no systemd here; log: /var/log/orchd.log)"
fi
