#!/usr/bin/env bash
# Issue 42: files the agent creates cannot be turned against the user who runs it.
# An unprivileged user (nobody) plants symbolic links to root's 0600 files, FIFOs
# and hard links under every name the agent would create in a world-writable
# sticky directory (the old temporary names <region>.tmp.<pid> for the next pids,
# forked children's %p regions and their .tmp copies, trace files
# thread.background.<n>), and directories unsafe to create files in are offered;
# then root runs instrumented programs: the interposer (build/agent/libpfs_preload.so)
# on /bin/true, cat and a pre-forking program, and the C++ API's pfs_prefork and
# pfs_demo, with tracing on (PFS_TRACE_ALL=1). Checked: root's files keep their
# content, mode and owner; the programs exit as they do without the agent; each
# says on stderr why it did not record.
# Needs root, to plant as another user (CI runs as root); skipped otherwise.
# Usage: bash tests/live/symlink_attack_test.sh [build-dir]    (about 20 s)
source "$(dirname "$0")/lib.sh"
build=${1:-build}
case "$build" in /*) ;; *) build="$PWD/$build" ;; esac
preload="$build/agent/libpfs_preload.so"
pl_prefork="$build/tests/preload_programs/pl_prefork"
pfs_prefork="$build/tests/pfs_prefork"
pfs_demo="$build/tools/pfs_demo"
cmake --build "$build" --target pfs_preload pl_prefork pfs_prefork pfs_demo >/dev/null

if [ "$(id -u)" != 0 ]; then
  echo "symlink_attack_test: skipped: needs root to plant files as another user"
  exit 0
fi
attacker=(setpriv --reuid=nobody --regid=nogroup --clear-groups --)

work=$(mktemp -d /tmp/pfs_symlink_attack.XXXXXX)
trap 'rm -rf "$work"' EXIT
chmod 755 "$work"
secret="$work/secret"  # root's files, out of the attacker's reach
mkdir -m 700 "$secret"
for v in victim1 victim2 victim3; do
  echo "root's $v" >"$secret/$v"
  chmod 600 "$secret/$v"
done
shared="$work/shared"  # like /tmp: everyone may create names, the sticky bit protects them
mkdir "$shared"
chmod 1777 "$shared"
data="$work/data"
mkdir "$data"

fail() {
  echo "symlink_attack_test: FAILED: $*" >&2
  exit 1
}
state() { (cd "$secret" && sha256sum victim* && stat -c '%n %a %U %h' victim*); }
before=$(state)
check_victims() {
  [ "$(state)" = "$before" ] || fail "$1: root's files changed: $(state)"
}
expect_said() {  # scenario, file, text
  grep -qF -- "$3" "$2" || fail "$1: stderr does not say \"$3\": $(cat "$2")"
}
expect_regular() {  # scenario, path
  [ -f "$2" ] && [ ! -L "$2" ] && [ "$(stat -c %U "$2")" = root ] ||
    fail "$1: $2 is not a regular file of root: $(ls -l "$2" 2>&1)"
}
expect_planted() {  # scenario, path: still what the attacker put there
  [ -L "$2" ] || [ -p "$2" ] || [ "$(stat -c %U%h "$2")" = nobody2 ] ||
    fail "$1: the planted $2 was replaced: $(ls -l "$2" 2>&1)"
}
# Plants, as the attacker, for every name on stdin: a symbolic link to a root
# file, a FIFO or a file of the attacker's with a second (hard) link, in turn.
# One process (the system python3): a shell loop would use up the very pids it
# plants for.
plant() {
  "${attacker[@]}" /usr/bin/python3 -c '
import os, sys
for i, name in enumerate(sys.stdin.read().split()):
    kind = i % 3
    if kind == 0:
        os.symlink(sys.argv[1] + "/victim%d" % (i // 3 % 3 + 1), name)
    elif kind == 1:
        os.mkfifo(name)
    else:
        with open(name + ".own", "w") as f:
            f.write("planted\n")
        os.link(name + ".own", name)
' "$secret"
}
next_pid=$(($(cat /proc/sys/kernel/ns_last_pid) + 1))
pids() { seq "$next_pid" $((next_pid + ${1:-3000})); }

# Runs a command under the interposer, tracing; its stdout goes to $1.out, its
# stderr to $1, its exit status to $status.
run_preload() {  # stderr file, command...
  local err=$1
  shift
  status=0
  LD_PRELOAD="$preload" PFS_PRELOAD_VERBOSE=1 PFS_INSTRUMENT='%=ON' PFS_TRACE_ALL=1 \
    timeout 60 "$@" >"$err.out" 2>"$err" || status=$?
}

echo "=== 1. the temporary names of the next 3000 pids planted: /bin/true and cat record"
pids | sed "s|^|$shared/app.pfs.tmp.|" | plant
echo "$shared/app.pfs.tmp" | plant
seq 1 300 | sed "s|^|$shared/thread.background.|" | plant
PFS_REGION="$shared/app.pfs" run_preload "$work/err1" /bin/true
[ "$status" = 0 ] || fail "1: /bin/true exited with $status"
expect_said 1 "$work/err1" "pfs_preload: recording into $shared/app.pfs"
expect_regular 1 "$shared/app.pfs"
echo "some text" >"$data/in"
out=$(LD_PRELOAD="$preload" PFS_REGION="$shared/cat.pfs" PFS_INSTRUMENT='%=ON' PFS_TRACE_ALL=1 \
  PFS_TRACE_DIR="$shared" cat "$data/in" 2>"$work/err1b")
[ "$out" = "some text" ] || fail "1: cat printed \"$out\""
expect_regular 1 "$shared/cat.pfs"
check_victims 1

echo "=== 2. the region path itself planted: refused, the programs run on"
for kind in link fifo hardlink; do
  name="$shared/planted_$kind.pfs"
  case $kind in
    link) "${attacker[@]}" ln -s "$secret/victim1" "$name" ;;
    fifo) "${attacker[@]}" mkfifo "$name" ;;
    hardlink) "${attacker[@]}" bash -c "echo planted >'$name.own' && ln '$name.own' '$name'" ;;
  esac
  PFS_REGION="$name" run_preload "$work/err2" /bin/true
  [ "$status" = 0 ] || fail "2: /bin/true exited with $status ($kind)"
  expect_said "2 ($kind)" "$work/err2" "perfschema: agent not started: could not create region \"$name\": it is"
  expect_planted 2 "$name"
done
"${attacker[@]}" ln -s "$secret/victim2" "$shared/demo.pfs"
status=0
PFS_REGION="$shared/demo.pfs" timeout 60 "$pfs_demo" --seconds=1 >/dev/null 2>"$work/err2b" || status=$?
[ "$status" = 1 ] || fail "2: pfs_demo exited with $status"
expect_said 2 "$work/err2b" "pfs_demo: the agent did not start: could not create region \"$shared/demo.pfs\": it is a symbolic link"
check_victims 2

echo "=== 3. a pre-forking program (%p): the old temporary names of parent and children planted"
next_pid=$(($(cat /proc/sys/kernel/ns_last_pid) + 1))
pids | sed "s|.*|$shared/w.&.pfs.tmp|" | plant
pids | sed "s|.*|$shared/w.&.pfs.tmp.&|" | plant
PFS_REGION="$shared/w.%p.pfs" WORKERS=3 LOCKS=200 run_preload "$work/err3" "$pl_prefork" "$data"
[ "$status" = 0 ] || fail "3: pl_prefork exited with $status: $(cat "$work/err3")"
grep -q '^workers_ok=1$' "$work/err3.out" || fail "3: pl_prefork: $(cat "$work/err3.out")"
for w in $(sed -n 's/^worker=//p' "$work/err3.out"); do expect_regular 3 "$shared/w.$w.pfs"; done
expect_said 3 "$work/err3" "perfschema: not tracing into \"$shared/thread.background."
status=0
PFS_REGION="$shared/api.%p.pfs" PFS_TRACE_ALL=1 PFS_INSTRUMENT='%=ON' WORKERS=3 LOCKS=200 \
  timeout 60 "$pfs_prefork" "$data" >"$work/out3b" 2>"$work/err3b" || status=$?
[ "$status" = 0 ] || fail "3: pfs_prefork exited with $status: $(cat "$work/err3b")"
for w in $(sed -n 's/^worker=//p' "$work/out3b"); do expect_regular 3 "$shared/api.$w.pfs"; done
check_victims 3

echo "=== 4. the children's regions planted: the parent records, the children say why they do not"
fifo="$work/go"
mkfifo "$fifo"
(
  read -r _ <"$fifo"
  exec env LD_PRELOAD="$preload" PFS_PRELOAD_VERBOSE=1 PFS_INSTRUMENT='%=ON' PFS_REGION="$shared/c.%p.pfs" \
    WORKERS=3 LOCKS=200 "$pl_prefork" "$data" >"$work/out4" 2>"$work/err4"
) &
parent=$!
seq $((parent + 1)) $((parent + 3000)) | sed "s|.*|$shared/c.&.pfs|" | plant
echo go >"$fifo"
status=0
wait "$parent" || status=$?
[ "$status" = 0 ] || fail "4: pl_prefork exited with $status: $(cat "$work/err4")"
grep -q '^workers_ok=1$' "$work/out4" || fail "4: pl_prefork: $(cat "$work/out4")"
expect_regular 4 "$shared/c.$parent.pfs"
for w in $(sed -n 's/^worker=//p' "$work/out4"); do
  expect_planted 4 "$shared/c.$w.pfs"
  expect_said 4 "$work/err4" "forked child records nothing: could not create region \"$shared/c.$w.pfs\": it is"
done
check_victims 4

echo "=== 5. unsafe directories: refused with the reason, allowed by PFS_ALLOW_UNSAFE_DIR=1"
open_dir="$work/open"
mkdir "$open_dir"
chmod 777 "$open_dir"  # writable by all, no sticky bit
PFS_REGION="$open_dir/app.pfs" run_preload "$work/err5" /bin/true
[ "$status" = 0 ] || fail "5: /bin/true exited with $status"
expect_said 5 "$work/err5" "could not create region \"$open_dir/app.pfs\": its directory \"$open_dir\" is writable by other users and has no sticky bit: Set PFS_ALLOW_UNSAFE_DIR=1"
[ -z "$(ls -A "$open_dir")" ] || fail "5: files were created in $open_dir: $(ls -A "$open_dir")"
PFS_ALLOW_UNSAFE_DIR=1 PFS_REGION="$open_dir/app.pfs" run_preload "$work/err5b" /bin/true
[ "$status" = 0 ] || fail "5: /bin/true exited with $status"
expect_regular 5 "$open_dir/app.pfs"
theirs="$work/theirs"
mkdir "$theirs"
chown nobody:nogroup "$theirs"
PFS_REGION="$theirs/app.pfs" run_preload "$work/err5c" /bin/true
[ "$status" = 0 ] || fail "5: /bin/true exited with $status"
expect_said 5 "$work/err5c" "its directory \"$theirs\" belongs to another user"
status=0
PFS_REGION="$shared/traced.pfs" PFS_TRACE_DIR="$theirs" PFS_TRACE_ALL=1 PFS_INSTRUMENT='%=ON' WORKERS=1 \
  LOCKS=10 timeout 60 "$pfs_prefork" "$data" >/dev/null 2>"$work/err5d" || status=$?
[ "$status" = 0 ] || fail "5: pfs_prefork exited with $status"
expect_said 5 "$work/err5d" "its directory is not safe: it belongs to another user"
[ -z "$(ls -A "$theirs")" ] || fail "5: files were created in $theirs: $(ls -A "$theirs")"
check_victims 5
echo "=== symlink attack test passed"
