// `gensee policy check FILE`: every error with its JSON pointer, one per line
// on stdout, exit 2; "ok" and 0 for a valid file; --json for machines. Needs
// no operation, state directory or kernel.
import t, { Test } from 'tap';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { gensee } from '../helpers/gensee';

function tmpdir(t: Test): string {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), 'gs-policy-check-'));
  t.teardown(() => fs.rmSync(d, { recursive: true, force: true }));
  return d;
}

function write(dir: string, name: string, body: unknown): string {
  const f = path.join(dir, name);
  fs.writeFileSync(f, typeof body === 'string' ? body : JSON.stringify(body, null, 2));
  return f;
}

// The library test's bad policy (test/protocol/policy-host.test.ts), restated
// on purpose: the CLI must print every one of its problems.
const BAD = {
  schema: 1,
  grants: [{ network: { protocol: 'tcp', host: 'Bücher.example', port: 443 } }],
  leases: [
    { network: { protocol: 'tcp', host: '*.example.com', ports: '1-100' }, ttl_s: 0 },
    { network: { protocol: 'tcp', cidr: '10.0.0.1/8', port: 1 }, ttl_s: 1 },
  ],
  delegate: [{ network: { protocol: 'tcp', host: 'a.*.example.com', address: '1.2.3.4', port: 1 }, to: 'x' }],
  dns_budget: 100001,
  bogus: true,
};

const WANT = [
  '/: unknown field "bogus"',
  '/grants/0/network/host: host "Bücher.example" must be in lowercase A-label form (IDNA names as xn-- punycode): use "xn--bcher-kva.example"',
  '/leases/0/ttl_s: must be >= 1',
  '/leases/0/network/ports: a host rule names at most 64 ports (each answered address installs one lease per port); "1-100" names 100',
  '/leases/1/network: bad CIDR "10.0.0.1/8": host bits set (did you mean 10.0.0.0/8?)',
  '/delegate/0/network: exactly one of "address", "cidr" or "host" required',
  '/delegate/0/network/host: host "a.*.example.com": "*" is allowed only as the whole first label ("*.example.com" matches one or more labels under example.com, never example.com itself)',
  '/dns_budget: must be <= 100000',
];

t.test('a file with many errors: all printed with pointers, exit 2', async (t) => {
  const f = write(tmpdir(t), 'bad.json', BAD);
  const r = await gensee(['policy', 'check', f]);
  t.equal(r.code, 2, r.stderr);
  t.same(r.stdout.trimEnd().split('\n'), WANT);
  t.equal(r.stderr, `gensee: E_SCHEMA: policy ${f}: ${WANT.length} errors\n`);

  const j = await gensee(['policy', 'check', '--json', f]);
  t.equal(j.code, 2);
  const doc = JSON.parse(j.stdout) as { file: string; ok: boolean; errors: { pointer: string; message: string }[] };
  t.equal(doc.ok, false);
  t.equal(doc.file, f);
  t.same(doc.errors.map((e) => `${e.pointer}: ${e.message}`), WANT);
});

t.test('a valid file: "ok", exit 0', async (t) => {
  const dir = tmpdir(t);
  const f = write(dir, 'good.json', {
    schema: 1,
    grants: [{ network: { protocol: 'udp', address: '127.0.0.53', port: 53 } }],
    leases: [
      { network: { protocol: 'tcp', host: 'api.github.com', port: 443 }, ttl_s: 300 },
      { network: { protocol: 'tcp', host: '*.pypi.org', ports: '443' }, ttl_s: 300, max_uses: 0 },
    ],
    delegate: [{ network: { protocol: 'tcp', cidr: '0.0.0.0/0', ports: '443' }, to: 'egress-proxy' }],
    fault_deadline_ms: 5000,
    dns_budget: 200,
  });
  const r = await gensee(['policy', 'check', f]);
  t.equal(r.code, 0, r.stderr);
  t.equal(r.stdout, 'ok\n');
  t.equal(r.stderr, '');
  const j = await gensee(['policy', 'check', f, '--json']);
  t.equal(j.code, 0);
  t.same(JSON.parse(j.stdout), { file: f, ok: true, errors: [] });
});

t.test('not JSON, missing file, bad usage: exit 2, one line', async (t) => {
  const dir = tmpdir(t);
  const nj = await gensee(['policy', 'check', write(dir, 'nj.json', '{"schema": 1,')]);
  t.equal(nj.code, 2);
  t.match(nj.stdout, /^\/: not JSON: /);
  t.equal(nj.stdout.trimEnd().split('\n').length, 1);

  const missing = await gensee(['policy', 'check', path.join(dir, 'absent.json')]);
  t.equal(missing.code, 2);
  t.match(missing.stderr, /^gensee: E_NOT_FILE: policy .*absent\.json: cannot read: ENOENT\n$/);

  const link = path.join(dir, 'link.json');
  fs.symlinkSync(write(dir, 'target.json', { schema: 1 }), link);
  const sym = await gensee(['policy', 'check', link]);
  t.equal(sym.code, 2);
  t.match(sym.stderr, /E_SYMLINK/);

  const usage = await gensee(['policy', 'check']);
  t.equal(usage.code, 2);
  t.match(usage.stderr, /usage: gensee policy check FILE \[--json\]/);
});
