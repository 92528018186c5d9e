#!/bin/sh
# Stops reading after the handshake: sleeps with its stdin left open.
. "$(dirname "$0")/lib.sh"
handshake
exec sleep 300
