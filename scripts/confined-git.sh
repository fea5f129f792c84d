#!/bin/sh
# git, run by the service for its own calls (refresh, branches, switch-branch), confined with
# bubblewrap. A repository's .git/config can name programs Git runs by itself (clean and smudge
# filters, textconv, gpg.program, ...), and anyone with a terminal can write that file; confined,
# such a program finds the whole file system read-only, no network, no capabilities, the
# service's secrets masked, and dies with the service. Set by the service per call:
#   ASSISTANT_GIT_WRITABLE      the one folder this call may change (a branch switch), or empty
#   ASSISTANT_GIT_PRIVATE_HOME  replaced by an empty private folder (the service user's home)
#   ASSISTANT_GIT_HIDE_DIR      a folder masked by an empty one (the SQLite database's)
#   ASSISTANT_GIT_HIDE_FILE     a file masked by /dev/null (the .env file)
set -eu

# Build bwrap's arguments behind git's, then rotate git's to the end: POSIX sh has one list.
count=$#
set -- "$@" --ro-bind / / --dev /dev --proc /proc \
  --unshare-pid --unshare-ipc --unshare-net --unshare-uts --cap-drop ALL --die-with-parent
if [ -n "${ASSISTANT_GIT_PRIVATE_HOME:-}" ] && [ -d "$ASSISTANT_GIT_PRIVATE_HOME" ] && [ "$ASSISTANT_GIT_PRIVATE_HOME" != / ]; then
  set -- "$@" --tmpfs "$ASSISTANT_GIT_PRIVATE_HOME"
fi
if [ -n "${ASSISTANT_GIT_WRITABLE:-}" ]; then
  set -- "$@" --bind "$ASSISTANT_GIT_WRITABLE" "$ASSISTANT_GIT_WRITABLE"
fi
if [ -n "${ASSISTANT_GIT_HIDE_DIR:-}" ] && [ -d "$ASSISTANT_GIT_HIDE_DIR" ]; then
  set -- "$@" --tmpfs "$ASSISTANT_GIT_HIDE_DIR"
fi
if [ -n "${ASSISTANT_GIT_HIDE_FILE:-}" ] && [ -f "$ASSISTANT_GIT_HIDE_FILE" ]; then
  set -- "$@" --ro-bind /dev/null "$ASSISTANT_GIT_HIDE_FILE"
fi
set -- "$@" -- git
while [ "$count" -gt 0 ]; do
  set -- "$@" "$1"
  shift
  count=$((count - 1))
done
exec bwrap "$@"
