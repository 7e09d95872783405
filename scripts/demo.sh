#!/bin/sh
# make demo: gensee end to end, on loopback.
#
# Two HTTP servers. A policy that leases one port and says nothing of the
# other (so it is denied). curl from Debian runs under `gensee run`: its
# first connect to the leased port is paused by seccomp, becomes a
# capability fault, the resolver installs an exact expiring lease in the
# kernel and only then lets the call retry (through the eBPF hook); the
# second connect takes the C fast path; the connect to the other port is
# refused. Then the evidence files: the faults, the boundary events (what
# was refused, by which control, and why), and `gensee verify`.
set -eu
cd "$(dirname "$0")/.."
G=bin/gensee
if [ -t 1 ]; then B='\033[1m'; N='\033[0m'; else B=''; N=''; fi
say() { printf "\n${B}== %s${N}\n" "$*"; }

STATE=${GENSEE_STATE_DIR:-/var/lib/gensee}
OP="demo-$$"
TMP=$(mktemp -d)
SRV_PIDS=""
cleanup() {
	for p in $SRV_PIDS; do kill "$p" 2>/dev/null || true; done
	rm -rf "$TMP"
}
trap cleanup EXIT INT TERM

port() { node -e 'const s=require("net").createServer().listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})'; }
P1=$(port); P2=$(port)
for p in $P1 $P2; do
	node -e "require('http').createServer((q,r)=>r.end('hello from port $p\n')).listen($p,'127.0.0.1')" &
	SRV_PIDS="$SRV_PIDS $!"
done
cat > "$TMP/policy.json" <<JSON
{ "schema": 1,
  "grants":   [],
  "leases":   [ { "network": { "protocol": "tcp", "cidr": "127.0.0.1/32", "ports": "$P1" }, "ttl_s": 60, "max_uses": 0 } ],
  "delegate": [],
  "fault_deadline_ms": 5000 }
JSON
sleep 0.3

say "policy: lease tcp 127.0.0.1:$P1 for 60 s; nothing else (so :$P2 is denied)"
cat "$TMP/policy.json"

say "gensee run --op $OP --policy policy.json -- sh -c 'curl :$P1; curl :$P1; curl :$P2'"
$G run --state-dir "$STATE" --op "$OP" --policy "$TMP/policy.json" -- sh -c "
	echo '-- curl http://127.0.0.1:$P1/ (first connect: paused, leased, retried)'
	curl -sS --max-time 5 http://127.0.0.1:$P1/
	echo '-- curl http://127.0.0.1:$P1/ again (lease present: C fast path, no pause)'
	curl -sS --max-time 5 http://127.0.0.1:$P1/
	echo '-- curl http://127.0.0.1:$P2/ (no policy: refused)'
	curl -sS --max-time 5 http://127.0.0.1:$P2/ || echo '(curl was refused: EACCES from the resolver)'
"

D="$STATE/network-operations/$OP"
say "the evidence: $D"
ls -l "$D"
say "faults.jsonl (hash-chained; a fault line, for a lease its durable intent, then its resolution)"
node -e '
const lines = require("fs").readFileSync(process.argv[1], "utf8").trim().split("\n");
for (const l of lines) {
  const o = JSON.parse(l);
  const what = o.kind === "fault" ? `${o.fault.source} pid ${o.fault.subject.process ? o.fault.subject.process.pid : "-"} ${JSON.stringify(o.fault.effect)}`
    : o.kind === "resolution" ? `${o.resolution.action} (${o.resolution.reason})`
    : o.kind === "lease_intent" ? `${o.lease.protocol} ${o.lease.address}:${o.lease.port} for ${o.lease.ttl_s}s, generation ${o.lease.generation} (durable before the install)`
    : `${o.reason}: ${o.detail}`;
  console.log(`${String(o.seq).padStart(3)} ${o.kind.padEnd(12)} ${o.fault_id}  ${what}  prev=${o.prev.slice(0, 12)}…`);
}' "$D/faults.jsonl"
say "gensee events --op $OP (what the boundary refused, by which control, and why)"
$G events --state-dir "$STATE" --op "$OP"
say "gensee verify --op $OP"
$G verify --state-dir "$STATE" --op "$OP"
say "gensee status --op $OP"
$G status --state-dir "$STATE" --op "$OP"
