// Subject validation: who faulted must be who the operation supervises.
// A process is (pid, start_time_ticks) — pids are reused, the start time
// (field 22 of /proc/PID/stat) pins the incarnation — and must live in the
// operation's cgroup subtree. A peer must be one of the operation's exact
// isolated peer addresses.
import * as fs from 'node:fs';
import { loadAddon } from '../addon';
import { cgroupRelPath, cgroupWithin } from '../cgroup';
import type { DenyReason } from '../errors';
import type { Subject } from '../protocol/types';
import { parseAddress } from '../addr';

/** Field 22 (starttime, clock ticks since boot) of /proc/PID/stat; null if gone. */
export function readStartTimeTicks(pid: number): number | null {
  if (!Number.isInteger(pid) || pid <= 0 || pid > 0xffffffff) return null;
  // parsed in C (after the last ')': comm may hold spaces and parentheses);
  // this is on every fault's subject check
  return loadAddon().procStartTime(pid);
}

/** Is this very process (pid and start time) still running? A zombie has ended: it only waits to be reaped. */
export function identityAlive(p: { pid: number; start_time_ticks: number }): boolean {
  if (readStartTimeTicks(p.pid) !== p.start_time_ticks) return false;
  try {
    const stat = fs.readFileSync(`/proc/${p.pid}/stat`, 'utf8');
    // the state follows the last ')': comm may hold spaces and parentheses
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return false;
  }
}

export interface SubjectScope {
  /** absolute cgroup v2 directory of the operation */
  cgroup: string;
  /** exact isolated peer addresses of the operation */
  peers: readonly string[];
}

/** null when the subject validates, else the deny reason. */
export function checkSubject(s: Subject, scope: SubjectScope): DenyReason | null {
  if (s.process) {
    const pid = s.process.pid;
    if (!Number.isInteger(pid) || pid <= 0 || pid > 0xffffffff) return 'invalid_subject';
    // start time and cgroup of one and the same process (addon/subject.c:
    // read behind a pidfd, so a pid reused between the reads is caught)
    const now = loadAddon().subject(pid);
    if (now === null || now.start !== s.process.start_time_ticks) return 'invalid_subject';
    if (!cgroupWithin(now.cgroup, cgroupRelPath(scope.cgroup))) return 'subject_not_in_operation';
    return null;
  }
  if (s.peer) {
    let want: string;
    try {
      want = parseAddress(s.peer.address).address;
    } catch {
      return 'invalid_subject';
    }
    for (const p of scope.peers) {
      try {
        if (parseAddress(p).address === want) return null;
      } catch {
        /* a bad configured peer matches nothing */
      }
    }
    return 'subject_not_in_operation';
  }
  return 'invalid_subject';
}
