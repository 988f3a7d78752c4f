#!/usr/bin/env bash
# Docs are code: runs every fenced block of README.md and docs/*.md
# (scripts/doc_check.py says how each kind of block runs and how a page marks one
# that cannot) against the built tree and a throwaway PostgreSQL cluster.
# Ends with `doc blocks: N run, M untested`.
# Usage (as root): bash scripts/doc_check.sh [PAGE.md...]    (scripts/test.sh runs it)
source "$(dirname "$0")/../tests/live/lib.sh"

# Everything the pages use: the tools, the interposer, the extension.
live_session pfs_demo pfs_top pfs_trace_merge pfs_flamegraph pfs_otlp pfs_preload pfs_prefork pfs_tls_openssl
shift
python3 scripts/doc_check.py "$@"
