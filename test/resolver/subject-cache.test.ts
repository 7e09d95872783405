// The subject check reads (start time, cgroup) once behind a pidfd and keeps
// the answer while PIDFD_GET_INFO says the process is alive in the same
// cgroup (addon/subject.c). A kept answer must never outlive what it says:
// a process moved out of the operation's cgroup, or one that exited, is
// caught on its very next fault.
import t from 'tap';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { requireKernel, testCgroup, waitFor } from '../helpers/kernel';
import { startTestSupervisor, workload, networkFault } from '../helpers/supervisor';

t.test('a kept subject answer follows the process', async (t) => {
  if (!requireKernel(t)) return;
  const s = await startTestSupervisor(t, undefined, 'gs-sc');
  const w = await workload(t, s.cgroup);

  // first look, then a kept one
  t.match((await s.submit(networkFault(s.op, w.pid, w.start, 'tcp', '127.0.0.1', 18001))).resolution, { action: 'retry_after_lease' }, 'inside: lease');
  t.match((await s.submit(networkFault(s.op, w.pid, w.start, 'tcp', '127.0.0.1', 18002))).resolution, { action: 'retry_after_lease' }, 'inside again (kept answer): lease');
  t.match((await s.submit(networkFault(s.op, w.pid, w.start + 1, 'tcp', '127.0.0.1', 18003))).resolution, { action: 'deny', reason: 'invalid_subject' }, 'a wrong start time is still refused against the kept answer');

  // moved out of the operation's cgroup (into a sibling): the next fault says so
  const elsewhere = testCgroup(t, 'gs-sc-out');
  fs.writeFileSync(path.join(elsewhere, 'cgroup.procs'), String(w.pid));
  t.match((await s.submit(networkFault(s.op, w.pid, w.start, 'tcp', '127.0.0.1', 18004))).resolution, { action: 'deny', reason: 'subject_not_in_operation' }, 'moved out: subject_not_in_operation at once');
  // and back in
  fs.writeFileSync(path.join(s.cgroup, 'cgroup.procs'), String(w.pid));
  t.match((await s.submit(networkFault(s.op, w.pid, w.start, 'tcp', '127.0.0.1', 18005))).resolution, { action: 'retry_after_lease' }, 'moved back: lease');

  // exited: the kept answer is dropped
  w.child.kill('SIGKILL');
  await waitFor(() => !fs.existsSync(`/proc/${w.pid}`));
  t.match((await s.submit(networkFault(s.op, w.pid, w.start, 'tcp', '127.0.0.1', 18006))).resolution, { action: 'deny', reason: 'invalid_subject' }, 'exited: invalid_subject');
  t.notOk(s.sup.dp.getLease({ family: 'ipv4', protocol: 'tcp', address: '127.0.0.1', port: 18004 }), 'nothing installed for the moved process');
  t.notOk(s.sup.dp.getLease({ family: 'ipv4', protocol: 'tcp', address: '127.0.0.1', port: 18006 }), 'nothing installed for the dead one');
});
