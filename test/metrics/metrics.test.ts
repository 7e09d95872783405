// Prometheus /metrics (issue 30): a real `gensee run` whose workload makes
// real connects on loopback (two leased, one denied), scraped on --listen
// with the operation token and on --metrics without one, parsed with a
// Prometheus text-format parser; every value equals what faults.jsonl,
// counters.jsonl and events.jsonl hold at that moment (computed here from
// the files, independently of src/metrics). Wrong and missing tokens are
// refused and recorded.
import t from 'tap';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as path from 'node:path';
import parseProm from 'parse-prometheus-text-format';
import { GENSEE_BIN, requireKernel, uniqueName, freePort, tcpServer, waitFor } from '../helpers/kernel';
import { Proc } from '../helpers/gensee';
import { shortStateDir } from '../helpers/supervisor';
import { startupDeadline } from '../helpers/trials';

type Line = Record<string, unknown>;
const lines = (file: string): Line[] =>
  fs.existsSync(file)
    ? fs
        .readFileSync(file, 'utf8')
        .split('\n')
        .filter((l) => l.endsWith('}'))
        .map((l) => JSON.parse(l) as Line)
    : [];

/** what the evidence says, computed from the files alone: "metric{labels}" → value */
function expected(dir: string, op: string): Map<string, number> {
  const m = new Map<string, number>();
  const add = (k: string, v: number) => m.set(k, (m.get(k) ?? 0) + v);
  const faultAt = new Map<string, { at: number; source: string }>();
  let open = 0;
  let takeovers = 0;
  for (const l of lines(path.join(dir, 'faults.jsonl'))) {
    if (l.kind === 'resolver_takeover') takeovers++;
    if (l.kind === 'fault') {
      const source = String((l.fault as Line).source);
      add(`gensee_faults_total{op=${op},source=${source}}`, 1);
      faultAt.set(String(l.fault_id), { at: Date.parse(String(l.at)), source });
      open++;
    }
    if (l.kind === 'refusal') add(`gensee_refusals_total{op=${op},reason=${String(l.reason)},via=${String(l.via)}}`, 1);
    if (l.kind === 'resolution') {
      const r = l.resolution as Line;
      add(`gensee_resolutions_total{action=${String(r.action)},op=${op},reason=${String(r.reason)}}`, 1);
      const f = faultAt.get(String(l.fault_id));
      if (f) {
        open--;
        add(`gensee_fault_answer_seconds_count{op=${op},source=${f.source}}`, 1);
        add(`gensee_fault_answer_seconds_sum{op=${op},source=${f.source}}`, (Date.parse(String(l.at)) - f.at) / 1000);
      }
    }
  }
  m.set(`gensee_open_faults{op=${op}}`, open);
  m.set(`gensee_connections_allowed_total{op=${op},source=ebpf}`, 0);
  m.set(`gensee_ringbuf_lost_events_total{op=${op}}`, 0);
  let starts = 0;
  for (const l of lines(path.join(dir, 'counters.jsonl'))) {
    const d = typeof l.delta === 'number' ? l.delta : 0;
    if (l.kind === 'allow') add(`gensee_connections_allowed_total{op=${op},source=${l.source === 'nft' ? 'nft' : 'ebpf'}}`, d);
    if (l.kind === 'deny') add(`gensee_connections_denied_total{op=${op},reason=${String(l.reason)}}`, d);
    if (l.kind === 'lost_events') add(`gensee_ringbuf_lost_events_total{op=${op}}`, d);
    if (l.kind === 'sampler' && l.event === 'start') starts++;
  }
  m.set(`gensee_resolver_restarts_total{op=${op}}`, Math.max(0, starts - 1, takeovers));
  let suppressed = 0;
  for (const l of lines(path.join(dir, 'events.jsonl'))) {
    if (l.type === 'boundary') add(`gensee_boundary_events_total{kind=${String((l.event as Line).kind)},op=${op}}`, 1);
    if (l.type === 'suppressed') suppressed += Number(l.count);
  }
  m.set(`gensee_boundary_events_suppressed_total{op=${op}}`, suppressed);
  return m;
}

/** the scrape as "metric{labels}" → value, through the npm parser (histogram _count/_sum from their lines) */
function scraped(text: string): Map<string, number> {
  const m = new Map<string, number>();
  const key = (name: string, labels: Record<string, string> = {}) =>
    `${name}{${Object.keys(labels)
      .sort()
      .map((k) => `${k}=${labels[k]}`)
      .join(',')}}`;
  for (const fam of parseProm(text)) {
    if (fam.type === 'HISTOGRAM') continue;
    for (const s of fam.metrics) m.set(key(fam.name, s.labels), Number(s.value));
  }
  // the parser keeps a histogram's buckets only: its _count and _sum lines are plain samples
  for (const l of text.split('\n')) {
    const x = /^(gensee_fault_answer_seconds_(?:count|sum))\{([^}]*)\} (\S+)$/.exec(l);
    if (!x) continue;
    const labels: Record<string, string> = {};
    for (const kv of x[2].split(',')) {
      const [k, v] = kv.split('=');
      labels[k] = JSON.parse(v) as string;
    }
    m.set(key(x[1], labels), Number(x[3]));
  }
  return m;
}

async function get(url: string, headers: Record<string, string> = {}): Promise<{ status: number; type: string; body: string }> {
  const r = await fetch(url, { headers });
  return { status: r.status, type: r.headers.get('content-type') ?? '', body: await r.text() };
}

t.test('/metrics equals the evidence, behind the token on --listen and without it on --metrics', async (t) => {
  if (!requireKernel(t)) return;
  const st = shortStateDir(t);
  fs.chmodSync(st, 0o755);
  const op = uniqueName('gs-metrics');
  const dir = path.join(st, 'network-operations', op);
  const allowed = await tcpServer(t);
  const denied = await freePort();
  // the workload holds a connection to this one until the test lets it go
  const held: net.Socket[] = [];
  const control = net.createServer((s) => held.push(s.on('error', () => undefined)));
  await new Promise<void>((r) => control.listen(0, '127.0.0.1', () => r()));
  const controlPort = (control.address() as net.AddressInfo).port;
  t.teardown(() => {
    for (const s of held) s.destroy();
    control.close();
  });
  const leases = [allowed.port, controlPort].map((p) => ({ network: { protocol: 'tcp', cidr: '127.0.0.1/32', ports: String(p) }, ttl_s: 300 }));
  const policy = path.join(st, 'policy.json');
  fs.writeFileSync(policy, JSON.stringify({ schema: 1, grants: [], leases, delegate: [] }));
  const [listenPort, metricsPort] = [await freePort(), await freePort()];
  const script = [
    `exec 3<>/dev/tcp/127.0.0.1/${allowed.port}; exec 3<&-`,
    `exec 3<>/dev/tcp/127.0.0.1/${allowed.port}; exec 3<&-`,
    `(exec 4<>/dev/tcp/127.0.0.1/${denied}) 2>/dev/null`,
    `exec 6<>/dev/tcp/127.0.0.1/${controlPort}; read -u 6 x; exit 0`,
  ].join('; ');
  const run = new Proc(GENSEE_BIN, ['run', '--state-dir', st, '--op', op, '--no-dns', '--policy', policy, '--listen', `127.0.0.1:${listenPort}`, '--metrics', `127.0.0.1:${metricsPort}`, '--', '/bin/bash', '-c', script]);
  t.teardown(() => run.end());
  await waitFor(() => held.length > 0 || !run.running, startupDeadline(), 20);
  t.ok(run.running, `the workload made its connects and waits (${run.stderr.slice(-300)})`);
  t.match(run.stderr, `metrics for ${op} on http://127.0.0.1:${metricsPort}/metrics`, 'gensee run says where /metrics is');
  // the sampler records the allows within its interval (1 s): wait for all three
  await waitFor(() => (expected(dir, op).get(`gensee_connections_allowed_total{op=${op},source=ebpf}`) ?? 0) >= 3, startupDeadline(), 50);

  const token = fs.readFileSync(path.join(dir, 'token'), 'utf8').trim();
  const base = `http://127.0.0.1:${listenPort}`;
  const none = await get(`${base}/metrics`);
  t.equal(none.status, 401, '--listen /metrics without the token: 401');
  const wrong = await get(`${base}/metrics`, { Authorization: `Bearer ${'x'.repeat(token.length)}` });
  t.equal(wrong.status, 401, '--listen /metrics with a wrong token: 401');
  t.notMatch(wrong.body, /gensee_/, 'nothing of the metrics in a refusal');

  // the logs are quiet now (the workload waits): scrape until a scrape sits between two equal readings
  let checked = false;
  for (let i = 0; i < 20 && !checked; i++) {
    const before = expected(dir, op);
    const withToken = await get(`${base}/metrics`, { Authorization: `Bearer ${token}` });
    const open = await get(`http://127.0.0.1:${metricsPort}/metrics`);
    const after = expected(dir, op);
    if (JSON.stringify([...before]) !== JSON.stringify([...after])) continue;
    checked = true;
    t.equal(withToken.status, 200, '--listen /metrics with the token: 200');
    t.match(withToken.type, /^text\/plain; version=0\.0\.4/, 'the Prometheus text format');
    t.equal(open.status, 200, '--metrics /metrics without a token: 200');
    for (const [name, body] of [
      ['--listen', withToken.body],
      ['--metrics', open.body],
    ]) {
      const got = scraped(body);
      for (const [k, v] of after) {
        if (k.includes('_sum{')) t.ok(Math.abs((got.get(k) ?? NaN) - v) < 1e-9, `${name}: ${k} = ${v} (got ${got.get(k)})`);
        else t.equal(got.get(k), v, `${name}: ${k} = ${v}`);
      }
      t.equal(got.get(`gensee_connections_allowed_total{op=${op},source=ebpf}`), 3, `${name}: three allowed connects (two to the server, one to the control port)`);
      t.equal(got.get(`gensee_connections_denied_total{op=${op},reason=policy_denied}`), 1, `${name}: one denied`);
      t.equal(got.get(`gensee_faults_total{op=${op},source=seccomp_notify}`), 3, `${name}: three paused faults (one per destination)`);
      t.equal(got.get(`gensee_leases_live{op=${op}}`), 2, `${name}: two live leases`);
      t.equal(got.get(`gensee_attention_open{op=${op}}`), 0, `${name}: no attention`);
      t.ok((got.get(`gensee_refusals_total{op=${op},reason=unauthenticated_peer,via=socket}`) ?? 0) >= 2, `${name}: the refused scrapes are counted`);
      // gensee_fdatasync_seconds: live from the fault log's syncer (not in the files): at least one
      // fdatasync per durable resolution line, buckets cumulative, +Inf = _count
      const buckets = [...body.matchAll(/^gensee_fdatasync_seconds_bucket\{op="([^"]*)",le="([^"]+)"\} (\d+)$/gm)];
      const count = /^gensee_fdatasync_seconds_count\{op="([^"]*)"\} (\d+)$/m.exec(body);
      const sum = /^gensee_fdatasync_seconds_sum\{op="([^"]*)"\} (\S+)$/m.exec(body);
      t.equal(buckets.length, 13, `${name}: gensee_fdatasync_seconds has its 13 buckets`);
      t.ok(buckets.every((b) => b[1] === op) && count?.[1] === op, `${name}: labelled with the operation`);
      t.ok(buckets.every((b, i) => i === 0 || Number(b[3]) >= Number(buckets[i - 1][3])), `${name}: buckets are cumulative`);
      t.equal(buckets[buckets.length - 1]?.[2], '+Inf', `${name}: the last bucket is +Inf`);
      t.equal(Number(buckets[buckets.length - 1]?.[3]), Number(count?.[2]), `${name}: +Inf bucket = _count`);
      t.ok(Number(count?.[2]) >= 1, `${name}: the resolutions' fdatasyncs are counted (${count?.[2]})`);
      t.ok(Number(sum?.[2]) > 0, `${name}: their time is summed (${sum?.[2]} s)`);
    }
  }
  t.ok(checked, 'a scrape between two equal readings of the evidence');
  const other = await get(`http://127.0.0.1:${metricsPort}/`);
  t.equal(other.status, 404, '--metrics serves /metrics and nothing else');
  const stream = await get(`${base}/`, { Authorization: `Bearer ${token}` });
  t.equal(stream.status, 426, 'the stream route is as it was (426 for a plain request)');

  for (const s of held) s.end('go\n');
  const exit = await run.exited;
  t.equal(exit.code, 0, "gensee run ends with the workload's 0");
  const refused = lines(path.join(dir, 'faults.jsonl')).filter((l) => l.kind === 'refusal' && l.reason === 'unauthenticated_peer' && /events\.sock: HTTP 401/.test(String(l.detail)));
  t.ok(refused.length >= 2, `the missing and the wrong token are recorded as refused peers (${refused.length})`);
  const gone = await fetch(`http://127.0.0.1:${metricsPort}/metrics`).then(
    () => 'answered',
    () => 'refused',
  );
  t.equal(gone, 'refused', 'the --metrics server ends with the operation');
});
