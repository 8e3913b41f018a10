#!/bin/sh
# Installs the Debian libretro cores and the free NES ROM that @netplay/core-libretro's real-core
# tests (npm run test:libretro -w @netplay/core-libretro) and benchmark use. Idempotent: does
# nothing when everything is already there.
set -eu
# gcc + libc6-dev build the fake cores of the crash tests (test/fixtures/fake-core.c); sdcc and
# binutils-arm-none-eabi assemble the package's own GB and GBA test ROMs (test-roms/).
PACKAGES="libretro-nestopia libretro-gambatte libretro-mgba efp gcc libc6-dev sdcc binutils-arm-none-eabi"
missing=""
for p in $PACKAGES; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing="$missing $p"
  fi
done
if [ -z "$missing" ]; then
  echo "setup-libretro: all of $PACKAGES already installed"
  exit 0
fi
SUDO=""
if [ "$(id -u)" != "0" ]; then SUDO="sudo"; fi
echo "setup-libretro: installing$missing"
$SUDO apt-get update
# shellcheck disable=SC2086
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y --no-install-recommends $missing
