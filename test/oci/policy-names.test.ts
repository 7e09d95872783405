// Which policy the OCI listener serves a container with, and what it
// refuses: a policy with host rules (no DNS stub serves containers, so it
// would deny every name without a word) at start and per container; a
// `policy=NAME` that names a missing file or a path is refused, never
// served under a broader default. Real runc containers; their connects fail
// closed (ENOSYS) when refused.
import t from 'tap';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { spawnSync } from 'node:child_process';
import { GENSEE_BIN, tcpServer, uniqueName } from '../helpers/kernel';
import { makeBundle, ncScript, requireRunc, runcRun, startListener, tempRoot, cleanupOp } from './runc-helpers';

const HOSTS = { schema: 1, grants: [], leases: [{ network: { protocol: 'tcp', host: 'api.test', port: 443 }, ttl_s: 30 }], delegate: [] };
const PLAIN = (port: number) => ({ schema: 1, grants: [], leases: [{ network: { protocol: 'tcp', cidr: '127.0.0.1/32', ports: String(port) }, ttl_s: 30, max_uses: 0 }], delegate: [], fault_deadline_ms: 5000 });

function write(dir: string, name: string, body: object): string {
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  const f = path.join(dir, `${name}.json`);
  fs.writeFileSync(f, JSON.stringify(body), { mode: 0o600 });
  return f;
}

t.test('a policy with host rules is refused at start', async (t) => {
  const root = tempRoot(t);
  const hosts = write(path.join(root, 'one'), 'hosts', HOSTS);
  const st = path.join(root, 'st');
  // --policy FILE; the listener never listens (no root needed to see the refusal, but it is root here)
  const a = spawnSync(process.execPath, [GENSEE_BIN, 'oci-listener', '--socket', path.join(root, 'a.sock'), '--state-dir', st, '--policy', hosts], { encoding: 'utf8', timeout: 60_000 });
  t.equal(a.status, 2, '--policy with host rules: exit 2');
  t.match(a.stderr, /E_HOST_RULES.*\/leases\/0\/network\/host \("api\.test"\).*no DNS stub/, `names the rule and why (${a.stderr.trim()})`);
  t.notOk(fs.existsSync(path.join(root, 'a.sock')), 'nothing listens');
  // one such file among good ones in --policy-dir
  const dir = path.join(root, 'dir');
  write(dir, 'good', PLAIN(9));
  write(dir, 'named', HOSTS);
  const b = spawnSync(process.execPath, [GENSEE_BIN, 'oci-listener', '--socket', path.join(root, 'b.sock'), '--state-dir', st, '--policy-dir', dir], { encoding: 'utf8', timeout: 60_000 });
  t.equal(b.status, 2, '--policy-dir holding a host-rule policy: exit 2');
  t.match(b.stderr, new RegExp(`E_HOST_RULES: policy ${path.join(dir, 'named.json')}`), 'names the file');
  // and gensee profile checks the same before a profile is handed out
  const p = spawnSync(process.execPath, [GENSEE_BIN, 'profile', '--socket', '/run/gensee/oci.sock', '--policy', 'named', '--policy-dir', dir], { encoding: 'utf8' });
  t.equal(p.status, 2, 'gensee profile for that policy: exit 2');
  t.match(p.stderr, /E_HOST_RULES/);
  t.equal(p.stdout, '', 'no profile printed');
});

t.test('per container: host rules added later, a missing or path-like policy name: refused, failing closed', async (t) => {
  if (!requireRunc(t)) return;
  const srv = await tcpServer(t);
  const root = tempRoot(t);
  const dir = path.join(root, 'pol');
  const good = uniqueName('good');
  write(dir, good, PLAIN(srv.port));
  const sock = path.join(root, 'oci.sock');
  const l = await startListener(t, ['--socket', sock, '--state-dir', path.join(root, 'st'), '--policy-dir', dir]);
  // appears after the listener checked the directory
  const late = uniqueName('late');
  write(dir, late, HOSTS);
  const script = ncScript([['c', srv.port]]);
  const cases: [string, string, RegExp][] = [
    ['l', `policy=${late}`, /E_HOST_RULES/],
    ['m', `policy=${uniqueName('missing')}`, /E_NOT_FILE/],
    ['p', 'policy=../pol/x', /E_SCHEMA/],
  ];
  for (const [n, metadata, code] of cases) {
    const b = makeBundle(t, root, n, { listenerPath: sock, metadata, script });
    const r = await runcRun(b);
    t.match(r.out, /^c=1 .*Function not implemented/m, `${metadata}: the container's connect fails closed (${r.out.trim()})`);
    const e = await l.waitEvent((x) => x.event === 'connection_refused' && x.container === b.id);
    t.match(String(e.code), code, `${metadata}: refused ${e.code as string}: ${e.message as string}`);
  }
  t.equal(srv.accepted(), 0, 'nothing reached the server');
  // the good name is served: each container its own operation
  const b = makeBundle(t, root, 'g', { listenerPath: sock, metadata: `policy=${good}`, script });
  const r = await runcRun(b);
  t.match(r.out, /^c=0 /m, `policy=${good}: served, the leased connect succeeds (${r.out.trim()})`);
  const att = await l.waitEvent((x) => x.event === 'attached' && x.container === b.id);
  cleanupOp(t, att.op as string);
  t.equal(att.policy, path.join(dir, `${good}.json`));
  t.equal(att.op, `oci-${b.id}`, 'its own operation, named after the container');
  await l.waitEvent((x) => x.event === 'stopped' && x.op === att.op);
});
