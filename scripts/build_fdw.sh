# Sourced by the scripts that run the extension on a throwaway cluster:
#   source scripts/build_fdw.sh; build_and_install_fdw [cmake target...]
# installs what is missing (scripts/setup.sh: Debian packages), configures build/
# if it is new (Release, Ninja when there is one, as scripts/test.sh does), builds
# the given CMake targets (the fixture writer, the demo...), then builds and
# installs the extension with PGXS. Run from the repository's root, as root.
build_and_install_fdw() {
  bash scripts/setup.sh
  if [ ! -f build/CMakeCache.txt ]; then
    local generator=()
    command -v ninja >/dev/null && generator=(-G Ninja)
    cmake -S . -B build "${generator[@]}" -DCMAKE_BUILD_TYPE=Release >/dev/null
  fi
  if [ $# -gt 0 ]; then cmake --build build -j"$(nproc)" --target "$@" >/dev/null; fi
  make -f Makefile.pgxs -j"$(nproc)" >/dev/null
  make -f Makefile.pgxs install >/dev/null
}
