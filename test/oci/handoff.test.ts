// A container that exits before the listener has taken it over is reported
// as such (`container_gone`, E_CONTAINER_GONE), not as a refusal of a
// runtime error (E_NOT_CGROUP2). Real runc hands its real seccomp fd to a
// socket of this test's; the test holds it until the container has exited,
// then hands it on to `gensee oci-listener`, exactly as a slow hand-off
// would arrive.
import t from 'tap';
import * as path from 'node:path';
import { waitFor } from '../helpers/kernel';
import { pauseAddon } from '../../src/pause/notifier';
import { makeBundle, requireRunc, runcRun, serveOp } from './runc-helpers';

const addon = pauseAddon();

t.test('a container gone before its hand-off is reported as gone, not refused', async (t) => {
  if (!requireRunc(t)) return;
  const { root, op, sock, l } = await serveOp(t);
  const relay = path.join(root, 'relay.sock');
  const rfd = addon.unixListen(relay, 4);
  const held: number[] = [rfd];
  t.teardown(() => held.forEach((fd) => addon.closeFd(fd)));

  const b = makeBundle(t, root, 'h', { listenerPath: relay, metadata: `op=${op}`, script: 'true' });
  const running = runcRun(b);
  const conn = await waitFor(() => addon.accept(rfd), 30_000, 20);
  held.push(conn);
  const got = await waitFor(() => {
    try {
      return addon.recvFd(conn, 0);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'EAGAIN') return null;
      throw e;
    }
  }, 30_000, 20);
  t.ok(got && got.fd >= 0, 'runc handed over its seccomp fd');
  held.push(got!.fd);
  const state = JSON.parse(got!.data.toString()) as { pid: number; state: { id: string } };
  const r = await running;
  t.equal(r.code, 0, `the container ran and exited (${r.out.trim()})`);
  t.equal(state.state.id, b.id);

  // now the hand-off arrives at the listener, the container long gone
  const c = addon.unixConnect(sock);
  held.push(c);
  addon.sendFd(c, [got!.fd], got!.data);
  const gone = await l.waitEvent((e) => e.event === 'container_gone' || e.event === 'connection_refused');
  t.match(gone, { event: 'container_gone', code: 'E_CONTAINER_GONE', container: b.id, pid: state.pid, op, message: /exited before its hand-off finished/ }, `reported as gone (${JSON.stringify(gone)})`);
  t.match(gone.detail, /E_NOT_CGROUP2/, 'what failed on the way is kept as detail');
  t.notOk(l.events.some((e) => e.event === 'connection_refused'), 'not reported as a refusal');
  t.notOk(l.events.some((e) => e.event === 'attached'), 'no operation was started for it');
  t.equal(await l.stop(), 0, 'the listener stops');
  t.match(l.events.find((e) => e.event === 'shutdown'), { connections: 1, attached: 0, refused: 0, gone: 1 }, 'its count: one gone, none refused');
});
