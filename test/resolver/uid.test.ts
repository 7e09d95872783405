// supervisor.sock admits uid root or the operation owner (SO_PEERCRED,
// addon/sup_server.c on_accept). A client of any other uid that reaches the socket
// and sends a valid frame is refused before its frame is read, answered
// unauthenticated_peer, and the refusal is recorded in faults.jsonl.
//
// The socket is 0600 in a 0700 directory, so an unprivileged client is
// normally stopped by the file system (EACCES on connect) before gensee
// sees it. Here the test opens the path to everyone, so the connection
// really arrives and the uid check itself is what refuses it.
import t from 'tap';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { spawn } from 'node:child_process';
import { requireKernel } from '../helpers/kernel';
import { startTestSupervisor, workload, networkFault, faultLines, POLICY } from '../helpers/supervisor';
import { encodeFault, decodeResolution } from '../../src/protocol/codec';
import { encodeFrame } from '../../src/protocol/framing';

const NOBODY = 65534;

// connect, send the frame (hex in argv), print the answer frame's body as hex (or the error code)
const CLIENT = `
const net = require('net');
const s = net.connect(process.argv[1]);
let got = Buffer.alloc(0);
s.on('connect', () => s.write(Buffer.from(process.argv[2], 'hex')));
s.on('data', (d) => { got = Buffer.concat([got, d]); });
s.on('error', (e) => { console.log(JSON.stringify({ error: e.code })); process.exit(0); });
s.on('end', () => {
  const n = got.length >= 4 ? got.readUInt32BE(0) : -1;
  console.log(JSON.stringify({ answer: n >= 0 && got.length >= 4 + n ? got.subarray(4, 4 + n).toString('hex') : null, bytes: got.length }));
  process.exit(0);
});
`;

/** Run the client as uid:gid; its one JSON line. */
function clientAs(uid: number, sock: string, frame: Buffer): Promise<{ answer?: string | null; error?: string; out: string; err: string; uid: number }> {
  return new Promise((resolve) => {
    const c = spawn(process.execPath, ['-e', CLIENT, sock, frame.toString('hex')], { uid, gid: uid, cwd: '/', stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    c.stdout.on('data', (d: Buffer) => (out += d.toString()));
    c.stderr.on('data', (d: Buffer) => (err += d.toString()));
    c.on('close', () => {
      const line = out.split('\n').find((l) => l.startsWith('{'));
      resolve({ ...(line ? (JSON.parse(line) as object) : {}), out, err, uid });
    });
  });
}

/**
 * Let any uid reach the socket: search on every directory of the path, write
 * on the socket. Returns the undo (the supervisor refuses to write its
 * records into a directory that is not 0700 again).
 */
function openToAll(stateDir: string, sock: string): () => void {
  const modes: [string, number][] = [];
  for (let p = sock; p.startsWith(stateDir); p = path.dirname(p)) modes.push([p, fs.statSync(p).mode & 0o7777]);
  for (const [p] of modes) fs.chmodSync(p, p === sock ? 0o666 : 0o711);
  return () => {
    for (const [p, m] of modes) {
      try {
        fs.chmodSync(p, m);
      } catch {
        /* already removed */
      }
    }
  };
}

t.test('a client that is neither root nor the owner is refused on uid, and recorded', async (t) => {
  if (!requireKernel(t)) return;
  const s = await startTestSupervisor(t, undefined, 'gs-uid');
  const w = await workload(t, s.cgroup);
  const sock = s.sup.socketPath;
  const f = networkFault(s.op, w.pid, w.start, 'tcp', '127.0.0.1', 8080);
  const frame = encodeFrame(encodeFault(f));

  // without opening the path the file system stops the client first: not what this test is about
  const blocked = await clientAs(NOBODY, sock, frame);
  t.equal(blocked.error, 'EACCES', `0700/0600: uid ${NOBODY} cannot even connect (${blocked.err})`);

  const undo = openToAll(s.stateDir, sock);
  t.teardown(undo);
  const r = await clientAs(NOBODY, sock, frame);
  t.ok(r.answer, `the connection reached gensee and was answered (${r.out}${r.err})`);
  const d = r.answer ? decodeResolution(Buffer.from(r.answer, 'hex')) : null;
  t.ok(d?.ok, 'the answer is a resolution');
  if (d?.ok) t.match(d.resolution, { action: 'deny', reason: 'unauthenticated_peer' }, 'deny: unauthenticated_peer');

  const lines = faultLines(s.stateDir, s.op);
  const refusal = lines.filter((l) => l.kind === 'refusal' && (l.peer as { uid?: number } | null)?.uid === NOBODY);
  t.equal(refusal.length, 1, 'one refusal line for the uid');
  t.match(refusal[0], { reason: 'unauthenticated_peer', via: 'socket', detail: /uid 65534 is neither root nor the operation owner/, peer: { uid: NOBODY, gid: NOBODY } }, 'recorded with the uid reason and the peer\'s credentials');
  t.notOk(lines.some((l) => l.fault_id === f.fault_id), 'its frame was never read: no fault line for it');

  // root, through the same opened path: admitted and resolved
  const root = await clientAs(0, sock, frame);
  undo();
  const dr = root.answer ? decodeResolution(Buffer.from(root.answer, 'hex')) : null;
  t.ok(dr?.ok && dr.resolution.action === 'retry_after_lease', `root is admitted: ${dr?.ok ? `${dr.resolution.action} ${dr.resolution.reason}` : root.out + root.err}`);
});

t.test('the operation owner, not root, is admitted', async (t) => {
  if (!requireKernel(t)) return;
  const { sup, op, cgroup, stateDir } = await startTestSupervisor(t, POLICY, 'gs-uido', { ownerUid: NOBODY });
  const w = await workload(t, cgroup);
  const f = networkFault(op, w.pid, w.start, 'tcp', '127.0.0.1', 8081);
  const undo = openToAll(stateDir, sup.socketPath);
  t.teardown(undo);
  const r = await clientAs(NOBODY, sup.socketPath, encodeFrame(encodeFault(f)));
  undo();
  const d = r.answer ? decodeResolution(Buffer.from(r.answer, 'hex')) : null;
  t.ok(d?.ok && d.resolution.action === 'retry_after_lease', `uid ${NOBODY} owns the operation: resolved (${d?.ok ? `${d.resolution.action} ${d.resolution.reason}` : r.out + r.err})`);
  t.notOk(faultLines(stateDir, op).some((l) => l.kind === 'refusal'), 'no refusal recorded');
});
