#!/usr/bin/env bash
# Installs Debian's redis-server for the lobby's scale-out tests (packages/lobby, npm run
# test:redis), if it is missing. The tests start their own servers on random ports (no
# persistence) and stop them; nothing runs as a service. Idempotent; .ci/run calls it.
set -euo pipefail
if [ ! -x /usr/bin/redis-server ]; then
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends redis-server
fi
/usr/bin/redis-server --version
