#!/bin/sh
# Runs a command as an ordinary user: as nobody through setpriv when started as root, else as the
# caller. The cleanup tests run this way too, so the non-root path of every run is tested.
#   as_ordinary_user.sh COMMAND [ARGS...]
set -eu
if [ "$(id -u)" = 0 ]; then
  exec setpriv --reuid=65534 --regid=65534 --clear-groups -- "$@"
fi
exec "$@"
