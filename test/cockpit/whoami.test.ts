// /cockpit/whoami reports the operation's own mode (audit or enforce), read
// from its record, and nothing without the token. A real HTTP server on
// loopback serves the cockpit's routes over real state directories.
import t from 'tap';
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as os from 'node:os';
import * as path from 'node:path';
import type { AddressInfo } from 'node:net';
import { cockpitRoute } from '../../src/cockpit/page';
import { createOperation, type OperationInit } from '../../src/state/operation';

const init = (id: string, mode: 'audit' | 'enforce'): OperationInit => ({
  id,
  owner_uid: 0,
  cgroup: `/sys/fs/cgroup/gensee/${id}`,
  policy_hash: 'sha256:' + 'cd'.repeat(32),
  resolver: { pid: process.pid, start_time_ticks: 1 },
  mode,
});

async function serve(stateDir: string, op: string, authorized: boolean): Promise<{ url: string; close: () => Promise<void> }> {
  const route = cockpitRoute({ stateDir, op });
  const srv = http.createServer((req, res) => {
    if (!route(req, res, authorized)) {
      res.statusCode = 401;
      res.end('refused\n');
    }
  });
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  const port = (srv.address() as AddressInfo).port;
  return { url: `http://127.0.0.1:${port}`, close: () => new Promise((r) => srv.close(() => r())) };
}

t.test('whoami says audit for an audit operation and enforce for an enforcing one', async (t) => {
  const state = fs.mkdtempSync(path.join(os.tmpdir(), 'gs-whoami-'));
  t.teardown(() => fs.rmSync(state, { recursive: true, force: true }));
  fs.chmodSync(state, 0o700);
  for (const [op, mode] of [[`wa-${process.pid}`, 'audit'], [`we-${process.pid}`, 'enforce']] as const) {
    await createOperation(state, init(op, mode));
    const s = await serve(state, op, true);
    try {
      const r = await fetch(`${s.url}/cockpit/whoami`);
      t.equal(r.status, 200, `${op}: whoami answers`);
      const j = (await r.json()) as { op: string; mode: string; verify: string };
      t.equal(j.op, op, `${op}: names its operation`);
      t.equal(j.mode, mode, `${op}: mode is the record's (${mode})`);
      t.type(j.verify, 'string', `${op}: carries a verify status`);
    } finally {
      await s.close();
    }
  }
});

t.test('whoami without the token is not served by the cockpit', async (t) => {
  const state = fs.mkdtempSync(path.join(os.tmpdir(), 'gs-whoami-'));
  t.teardown(() => fs.rmSync(state, { recursive: true, force: true }));
  fs.chmodSync(state, 0o700);
  const op = `wn-${process.pid}`;
  await createOperation(state, init(op, 'audit'));
  const s = await serve(state, op, false);
  try {
    const r = await fetch(`${s.url}/cockpit/whoami`);
    t.equal(r.status, 401, 'left to the stream, which refuses it');
    t.notMatch(await r.text(), /audit/, 'nothing about the operation leaks');
  } finally {
    await s.close();
  }
});
