# Sourced by the scripts that run the extension on a throwaway cluster:
#   source scripts/build_fdw.sh; build_and_install_fdw [cmake target...]
# installs what is missing (scripts/setup.sh: Debian packages), configures build/
# if it is new (Release, Ninja when there is one, as scripts/test.sh does), builds
# the given CMake targets (the fixture writer, the demo...), then builds and
# installs the extension with PGXS (warnings are errors: PFS_WERROR=1). Run from the repository's root, as root.
# PFS_PREBUILT=1 (a copy of the clone in a tree of scripts/pg_trees.sh, whose CMake
# programs were built on the machine): no setup.sh and no CMake build, the programs
# given must be there already.
#   build_fdw_programs [cmake target...]: the first part alone (no PGXS, no install).
build_fdw_programs() {
  bash scripts/setup.sh
  if [ ! -f build/CMakeCache.txt ]; then
    local generator=()
    command -v ninja >/dev/null && generator=(-G Ninja)
    cmake -S . -B build "${generator[@]}" -DCMAKE_BUILD_TYPE=Release >/dev/null
  fi
  if [ $# -gt 0 ]; then cmake --build build -j"$(nproc)" --target "$@" >/dev/null; fi
}

build_and_install_fdw() {
  if [ -n "${PFS_PREBUILT:-}" ]; then
    local target
    for target in "$@"; do
      [ -n "$(find build \( -name "$target" -o -name "lib$target.so" \) -type f -print -quit 2>/dev/null)" ] ||
        { echo "build_and_install_fdw: PFS_PREBUILT set but $target is not built" >&2; return 1; }
    done
  else
    build_fdw_programs "$@"
  fi
  make -f Makefile.pgxs -j"$(nproc)" PFS_WERROR=1 >/dev/null
  make -f Makefile.pgxs install >/dev/null
}
