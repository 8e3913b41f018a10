#!/usr/bin/env bash
# Installs what `npm run test:interop` needs: a headless RetroArch 1.14 with the Nestopia core, and
# the free NES homebrew ROM from Debian's `efp` package, unpacked into $NETPLAY_EFP_DIR
# (default /tmp/netplay-efp; the tests read $NETPLAY_EFP_ROM or that directory). Idempotent.
set -euo pipefail
EFP_DIR="${NETPLAY_EFP_DIR:-/tmp/netplay-efp}"
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
# The tests also use `ss` (iproute2) to wait for ports and `ps` (procps) to find RetroArch's PID.
if ! command -v retroarch >/dev/null || [ ! -f /usr/lib/x86_64-linux-gnu/libretro/nestopia_libretro.so ] ||
  ! command -v ss >/dev/null || ! command -v ps >/dev/null || ! command -v timeout >/dev/null; then
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends retroarch libretro-nestopia iproute2 procps coreutils
fi
if [ ! -f "$EFP_DIR/usr/share/nes/efp.nes" ]; then
  mkdir -p "$EFP_DIR"
  work="$(mktemp -d)"
  trap 'rm -rf "$work"' EXIT
  if ! (cd "$work" && apt-get download efp >/dev/null 2>&1); then
    $SUDO apt-get update -qq
    (cd "$work" && apt-get download efp)
  fi
  dpkg-deb -x "$work"/efp_*.deb "$EFP_DIR"
fi
echo "retroarch: $(retroarch --version 2>&1 | head -1)"
echo "efp ROM: $EFP_DIR/usr/share/nes/efp.nes"
