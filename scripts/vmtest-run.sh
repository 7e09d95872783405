#!/bin/sh
# vmtest: run test files one after another (tap files, run by node) under
# GENSEE_REQUIRE_KERNEL=1; OUT/<file>.tap keeps each file's TAP and
# OUT/results one line per file: file rc passed failed seconds.
# usage: vmtest-run.sh OUT KERNEL TIME_SCALE FILE...
set -u
out=$1
kernel=$2
echo "$kernel" >"$out/kernel"
scale=$3
shift 3
: >"$out/results"
for f in "$@"; do
  log=$out/$(echo "${f#dist/test/}" | tr / _).tap
  t0=$(date +%s.%N)
  # Each file is run by node itself: the tap library prints its TAP and
  # its count, and the tap runner's own start-up (loaders, process info)
  # would add more than the test under emulation. The runner's per-file
  # limit (300 s in .taprc) is kept, grown with the machine.
  # (TAP_TIMEOUT: the library's own limit, which the runner sets from it)
  GENSEE_REQUIRE_KERNEL=1 GENSEE_TIME_SCALE=$scale TAP_TIMEOUT=$((300 * scale)) \
    timeout -k 10 $((300 * scale + 60)) node "$f" >"$log" 2>&1
  rc=$?
  t1=$(date +%s.%N)
  # assertions: tap's own count of them, "# { total: 7, pass: 6, fail: 1 }"
  counts=$(grep -E '^# \{ total: ' "$log" | tail -n1)
  pass=$(echo "$counts" | sed -nE 's/.*pass: ([0-9]+).*/\1/p')
  fail=$(echo "$counts" | sed -nE 's/.*fail: ([0-9]+).*/\1/p')
  total=$(echo "$counts" | sed -nE 's/.*total: ([0-9]+).*/\1/p')
  pass=${pass:-0}
  fail=$((${total:-0} - pass))
  echo "$f $rc $pass $fail $(echo "$t0 $t1" | awk '{ printf "%.1f", $2 - $1 }')" >>"$out/results"
  echo "vmtest: $kernel $f rc=$rc pass=$pass of $((pass + fail))" >&2
done
