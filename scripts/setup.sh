#!/usr/bin/env bash
# Installs everything a fresh Debian 12 machine needs to build and test perfschema.
# Idempotent: packages already present are left alone, and apt-get runs only if one is missing.
set -euo pipefail

packages=(
  build-essential g++ cmake ninja-build pkg-config ccache
  libgtest-dev googletest libbenchmark-dev
  postgresql-15 postgresql-server-dev-15 postgresql-client-15 postgresql-common libpq-dev
  clang-format clang libclang-rt-14-dev
  sysbench python3 libjemalloc2 libtcmalloc-minimal4
  postgresql-15-cron
  chromium tmux
  prometheus-postgres-exporter curl
  debhelper lintian postgresql-server-dev-all
  libssl-dev openssl
  debootstrap
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "setup: all ${#packages[@]} packages present"
  exit 0
fi

echo "setup: installing ${missing[*]}"
as_root=()
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null || { echo "setup: need root (or sudo) to install ${missing[*]}" >&2; exit 1; }
  as_root=(sudo)
fi
export DEBIAN_FRONTEND=noninteractive
"${as_root[@]}" apt-get update -q
"${as_root[@]}" apt-get install -y -q --no-install-recommends "${missing[@]}"
