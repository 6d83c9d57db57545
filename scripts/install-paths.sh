# Sourced by scripts/install.sh and scripts/uninstall.sh, before either changes directory:
# DESTDIR, ORCHD_STATE_DIR, ORCHD_SOCKET and ORCHD_LOG made absolute as the caller meant them
# (from the directory the script was started in; orchd itself starts from /), and DESTDIR=/
# taken as no staging at all, so that both scripts agree on every path.
# shellcheck shell=bash
orchd_absolute_path() { [ -z "$1" ] || realpath -m -- "$1"; }
DESTDIR=$(orchd_absolute_path "${DESTDIR:-}")
[ "$DESTDIR" != / ] || DESTDIR=""
for variable in ORCHD_STATE_DIR ORCHD_SOCKET ORCHD_LOG; do
    [ -z "${!variable:-}" ] || printf -v "$variable" '%s' "$(orchd_absolute_path "${!variable}")"
done
unset variable
