#!/usr/bin/env bash
# Installs everything a fresh Debian 12 machine needs to build and test perfschema.
# Idempotent: packages already present are left alone, and apt-get runs only if one is missing.
# Servers installed only for the tests (nginx) are installed with their service neither
# started nor enabled: nothing of theirs listens after this script.
set -euo pipefail

packages=(
  build-essential g++ cmake ninja-build pkg-config ccache
  libgtest-dev googletest libbenchmark-dev
  postgresql-15 postgresql-server-dev-15 postgresql-client-15 postgresql-common libpq-dev
  clang-format clang libclang-rt-14-dev
  sysbench python3 libjemalloc2 libtcmalloc-minimal4
  postgresql-15-cron
  chromium tmux libncurses-dev
  prometheus-postgres-exporter curl
  debhelper lintian postgresql-server-dev-all
  libssl-dev openssl
  zlib1g-dev protobuf-compiler
  debootstrap
)
# Installed with no service started or enabled: the tests run their own instances
# (tests/live/nginx_preload_test.sh). Bookworm's nginx-light is nginx plus the echo
# module (it depends on nginx), so nginx itself is the lighter package.
quiet_servers=(nginx)

installed() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "install ok installed"; }
missing=()
for p in "${packages[@]}"; do
  installed "$p" || missing+=("$p")
done
missing_servers=()
for p in "${quiet_servers[@]}"; do
  installed "$p" || missing_servers+=("$p")
done

if [ ${#missing[@]} -eq 0 ] && [ ${#missing_servers[@]} -eq 0 ]; then
  echo "setup: all $((${#packages[@]} + ${#quiet_servers[@]})) packages present"
  exit 0
fi

echo "setup: installing ${missing[*]} ${missing_servers[*]}"
as_root=()
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null || { echo "setup: need root (or sudo) to install ${missing[*]}" >&2; exit 1; }
  as_root=(sudo)
fi
export DEBIAN_FRONTEND=noninteractive
"${as_root[@]}" apt-get update -q
if [ ${#missing[@]} -gt 0 ]; then
  "${as_root[@]}" apt-get install -y -q --no-install-recommends "${missing[@]}"
fi
if [ ${#missing_servers[@]} -gt 0 ]; then
  # invoke-rc.d asks /usr/sbin/policy-rc.d before a maintainer script starts a
  # service; exit status 101 forbids it (Debian's invoke-rc.d(8)). One already there
  # (a container's) is left as it is; the one made here is removed after.
  policy=/usr/sbin/policy-rc.d
  made_policy=
  if [ ! -e "$policy" ]; then
    "${as_root[@]}" sh -c "printf '#!/bin/sh\\n# perfschema setup.sh: no service starts during its install\\nexit 101\\n' >$policy && chmod 755 $policy"
    made_policy=1
    trap '"${as_root[@]}" rm -f "$policy"' EXIT
  fi
  "${as_root[@]}" apt-get install -y -q --no-install-recommends "${missing_servers[@]}"
  if [ -n "$made_policy" ]; then
    "${as_root[@]}" rm -f "$policy"
    trap - EXIT
  fi
  # The package enables its service for the next boot (systemd's link and the
  # init script's rc.d links): both off.
  for p in "${missing_servers[@]}"; do
    "${as_root[@]}" deb-systemd-helper disable "$p.service" >/dev/null 2>&1 || true
    "${as_root[@]}" update-rc.d "$p" disable >/dev/null 2>&1 || true
  done
fi
