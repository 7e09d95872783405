#!/bin/sh
# make demo: the data-plane boundary, end to end, on loopback.
# Two HTTP servers; the operation's cgroup gets the eBPF hooks; one port is
# leased; curl inside the cgroup reaches the leased one and is refused (EPERM)
# on the other; the kernel's counters show both. Everything is cleaned up.
set -eu
cd "$(dirname "$0")/.."
G=bin/gensee
if [ -t 1 ]; then B='\033[1m'; N='\033[0m'; else B=''; N=''; fi
say() { printf "\n${B}== %s${N}\n" "$*"; }

CG2=$(awk '$0 ~ / - cgroup2 / {print $5; exit}' /proc/self/mountinfo)
[ -n "$CG2" ] || { echo "demo: no cgroup2 mount found" >&2; exit 1; }
OP="demo-$$"
CG="$CG2/gensee-$OP"
DIR=$(mktemp -d)
SRV_PIDS=""
cleanup() {
	$G hooks detach --op "$OP" >/dev/null 2>&1 || true
	for p in $SRV_PIDS; do kill "$p" 2>/dev/null || true; done
	[ -d "$CG" ] && rmdir "$CG" 2>/dev/null || true
	rm -rf "$DIR"
}
trap cleanup EXIT INT TERM

port() { node -e 'const s=require("net").createServer().listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})'; }
P1=$(port); P2=$(port)
for p in $P1 $P2; do
	node -e "require('http').createServer((q,r)=>r.end('hello from port $p\n')).listen($p,'127.0.0.1')" &
	SRV_PIDS="$SRV_PIDS $!"
done
sleep 0.5

say "operation $OP: cgroup $CG"
mkdir "$CG"
$G hooks attach --op "$OP" --cgroup "$CG"

say "lease tcp 127.0.0.1:$P1 for 60s (and nothing for :$P2)"
$G lease add --op "$OP" tcp "127.0.0.1:$P1" --ttl 60s
$G lease ls --op "$OP"

inside() { sh -c 'echo $$ > "$0/cgroup.procs" && shift && exec "$@"' "$CG" -- "$@"; }
say "curl http://127.0.0.1:$P1/ from inside the cgroup (leased)"
inside curl -sS --max-time 5 "http://127.0.0.1:$P1/" || true
say "curl http://127.0.0.1:$P2/ from inside the cgroup (not leased: EPERM)"
inside curl -sS --max-time 5 "http://127.0.0.1:$P2/" || echo "(refused, as it should be)"
say "curl http://127.0.0.1:$P2/ from outside the cgroup (not supervised)"
curl -sS --max-time 5 "http://127.0.0.1:$P2/"

say "kernel counters, per destination"
$G counters --op "$OP"

say "detach: no links, pins or cgroup left"
$G hooks detach --op "$OP"
