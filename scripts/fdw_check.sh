#!/usr/bin/env bash
# Builds and tests the perfschema_fdw extension: the CMake build (for the fixture
# tool the tests use; build/ is reused if configured), the extension with PGXS,
# its installation, and the pg_regress suite on a throwaway PostgreSQL cluster
# (pg_virtualenv). Prints regression.diffs and exits non-zero on failure.
# Usage (as root): bash scripts/fdw_check.sh
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/setup.sh

if [ ! -f build/CMakeCache.txt ]; then
  generator=()
  command -v ninja >/dev/null && generator=(-G Ninja)  # as scripts/test.sh configures it
  cmake -S . -B build "${generator[@]}" -DCMAKE_BUILD_TYPE=Release >/dev/null
fi
cmake --build build -j"$(nproc)" --target pfs_fixture

make -f Makefile.pgxs -j"$(nproc)"
make -f Makefile.pgxs install

rm -rf build/pgxs/regress
if ! pg_virtualenv -t make -f Makefile.pgxs installcheck; then
  echo "=== perfschema_fdw regression failed; build/pgxs/regress/regression.diffs:" >&2
  cat build/pgxs/regress/regression.diffs >&2 || true
  exit 1
fi
echo "=== perfschema_fdw: all regression tests passed"
