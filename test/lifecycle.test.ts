// The operation's start-up stack (src/lifecycle.ts), and Supervisor.start
// failing late: every resource it opened is undone, newest first, and the
// original failure is what the caller sees.
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as path from 'node:path';
import t from 'tap';
import { OpenStack } from '../src/lifecycle';
import { Supervisor } from '../src/supervisor';
import { parsePolicy, policyHash } from '../src/protocol/json';
import { hooksAttached } from '../src/dataplane';
import { pinDirFor } from '../src/bpffs';
import { opDir } from '../src/state/operation';
import { requireKernel, testCgroup, uniqueName, detachAtTeardown } from './helpers/kernel';
import { shortStateDir, POLICY } from './helpers/supervisor';

t.test('OpenStack: undone newest first, a failing undo does not stop the rest', async (t) => {
  const s = new OpenStack();
  const undone: string[] = [];
  const a = await s.open('a', () => 1, () => undone.push('a'));
  const b = await s.open('b', async () => 2, () => {
    undone.push('b');
    throw new Error('b will not close');
  });
  s.defer('c', () => undone.push('c'));
  t.same([a, b], [1, 2], 'open returns what it opened');
  t.same(s.opened, ['a', 'b', 'c']);
  await s.disposeAll();
  t.same(undone, ['c', 'b', 'a'], 'reverse order, past the failing undo');
  t.same(s.opened, [], 'nothing left to undo');
  await s.disposeAll();
  t.same(undone, ['c', 'b', 'a'], 'a second dispose undoes nothing twice');
});

t.test('OpenStack: an open that throws is not undone; release forgets everything', async (t) => {
  const s = new OpenStack();
  const undone: string[] = [];
  await s.open('ok', () => 1, () => undone.push('ok'));
  await t.rejects(
    s.open('bad', () => {
      throw new Error('no');
    }, () => undone.push('bad')),
    /no/,
  );
  t.same(s.opened, ['ok'], 'the failed open left nothing to undo');
  s.release();
  await s.disposeAll();
  t.same(undone, [], 'after release the owner closes, not the stack');
});

t.test('Supervisor.start failing at its last listener undoes everything it opened', async (t) => {
  if (!requireKernel(t)) return;
  // the live stream's TCP port is taken: start fails after hooks, logs,
  // envelope (control.sock), supervisor.sock and events.sock exist
  const busy = net.createServer();
  await new Promise<void>((r) => busy.listen(0, '127.0.0.1', () => r()));
  t.teardown(() => busy.close());
  const port = (busy.address() as net.AddressInfo).port;
  const cgroup = testCgroup(t, 'gs-life');
  const op = uniqueName('gs-life');
  const stateDir = shortStateDir(t);
  detachAtTeardown(t, op);
  const text = JSON.stringify(POLICY);
  await t.rejects(
    Supervisor.start({ stateDir, op, cgroup, policy: { policy: parsePolicy(POLICY), hash: policyHash(text) }, listen: { host: '127.0.0.1', port }, onError: () => undefined }),
    { code: 'E_STATE', message: /is in use/ },
    'the original failure is reported',
  );
  t.notOk(hooksAttached(op), 'the hooks this start attached are detached');
  t.notOk(fs.existsSync(pinDirFor(op)), 'no pin dir left');
  const dir = opDir(stateDir, op);
  for (const sock of ['supervisor.sock', 'control.sock', 'events.sock']) t.notOk(fs.existsSync(path.join(dir, sock)), `${sock} removed`);
  // and the same op starts cleanly once the port is free
  await new Promise<void>((r) => busy.close(() => r()));
  const sup = await Supervisor.start({ stateDir, op, cgroup, policy: { policy: parsePolicy(POLICY), hash: policyHash(text) }, onError: () => undefined });
  t.ok(hooksAttached(op), 'a second start serves');
  await sup.stop({ close: true });
});
