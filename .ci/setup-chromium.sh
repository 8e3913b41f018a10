#!/usr/bin/env bash
# Installs Debian's chromium for the browser end-to-end tests (apps/web/e2e), if it is missing.
# Idempotent; .ci/run calls it before `npm run test:e2e`.
set -euo pipefail
if [ ! -x /usr/bin/chromium ]; then
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends chromium
fi
/usr/bin/chromium --version
