// Calls a resolver received and never answered: the kernel delivers a
// seccomp notification once, so after that resolver died the caller would
// wait for ever on a listener that is still open (the holder keeps it).
// Before the next resolver reads, every thread of the container waiting in
// a seccomp user notification inside connect/sendto/sendmsg/sendmmsg is
// interrupted in place (gensee-fdkeep --nudge: PTRACE_INTERRUPT, no signal)
// and its call restarts, raising a fresh notification that is served.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { execFileSync } from 'node:child_process';
import { fdkeepBinary } from './fdkeep';

/** x86_64 and aarch64 numbers of the calls the OCI profile sends to the listener */
const NOTIFIED: Record<string, number[]> = { x64: [42, 44, 46, 307], arm64: [203, 206, 211, 269] };

function threadsOf(cgroup: string): number[] {
  const out: number[] = [];
  const walk = (d: string) => {
    try {
      for (const l of fs.readFileSync(path.join(d, 'cgroup.threads'), 'utf8').split('\n')) if (l) out.push(Number(l));
      for (const e of fs.readdirSync(d, { withFileTypes: true })) if (e.isDirectory()) walk(path.join(d, e.name));
    } catch {
      /* gone meanwhile */
    }
  };
  walk(cgroup);
  return out;
}

/** the thread waits in a seccomp user notification of one of the notified calls */
export function waitsInSeccompNotify(tid: number): boolean {
  const nrs = NOTIFIED[process.arch] ?? [];
  try {
    const nr = Number(fs.readFileSync(`/proc/${tid}/syscall`, 'utf8').split(' ')[0]);
    if (!nrs.includes(nr)) return false;
    const wchan = fs.readFileSync(`/proc/${tid}/wchan`, 'utf8');
    if (wchan && wchan !== '0') return wchan.includes('seccomp');
    return fs.readFileSync(`/proc/${tid}/stack`, 'utf8').includes('seccomp_do_user_notification');
  } catch {
    return false;
  }
}

/** Restart every such call in the cgroup; how many were restarted. */
export function nudgeWaiting(cgroup: string): number {
  const tids = threadsOf(cgroup).filter(waitsInSeccompNotify);
  if (tids.length === 0) return 0;
  let out = '';
  try {
    out = execFileSync(fdkeepBinary(), ['--nudge', ...tids.map(String)], { stdio: ['ignore', 'pipe', 'pipe'], timeout: 10_000 }).toString();
  } catch (e) {
    out = ((e as { stdout?: Buffer }).stdout ?? Buffer.alloc(0)).toString();
  }
  return out.split('\n').filter((l) => / 0$/.test(l)).length;
}
