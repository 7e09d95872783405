// cgroup v2 helpers: find the cgroup2 mount from /proc/self/mountinfo (the
// hybrid layout puts it at /sys/fs/cgroup/unified; never hard-code), create,
// move a pid in, kill everything in one, remove.
import * as fs from 'node:fs';
import { loadAddon } from './addon';
import * as path from 'node:path';
import { GenseeError } from './errors';

export const CGROUP2_SUPER_MAGIC = 0x63677270;

const mountCache = new Map<string, string>();

export function findCgroup2Mount(mountinfo = '/proc/self/mountinfo'): string {
  const hit = mountCache.get(mountinfo);
  if (hit) return hit;
  const found = scanCgroup2Mount(mountinfo);
  mountCache.set(mountinfo, found);
  return found;
}

/** the one mountinfo parser is the addon's (addon/proc.c): the seccomp loop uses it too */
function scanCgroup2Mount(mountinfo: string): string {
  const found = loadAddon().findCgroup2Mount(mountinfo);
  if (found === null) throw new GenseeError('E_NO_CGROUP2', `no cgroup2 filesystem is mounted at its root (see ${mountinfo})`);
  return found;
}

export function isCgroup2Dir(p: string): boolean {
  try {
    return fs.statfsSync(p).type === CGROUP2_SUPER_MAGIC && fs.statSync(p).isDirectory();
  } catch {
    return false;
  }
}

/** Resolve and check an operator-given cgroup path (absolute, or relative to the cgroup2 mount). */
export function resolveCgroupPath(p: string): string {
  const abs = path.isAbsolute(p) ? p : path.join(findCgroup2Mount(), p);
  if (!fs.existsSync(abs)) throw new GenseeError('E_NOT_CGROUP2', `cgroup path ${abs} does not exist`);
  if (!isCgroup2Dir(abs)) throw new GenseeError('E_NOT_CGROUP2', `${abs} is not a cgroup v2 directory`);
  return fs.realpathSync(abs);
}

export function createCgroup(name: string, parent?: string): string {
  const base = parent ?? findCgroup2Mount();
  const p = path.join(base, name);
  fs.mkdirSync(p, { recursive: false });
  return p;
}

export function movePid(cgroupPath: string, pid: number): void {
  fs.writeFileSync(path.join(cgroupPath, 'cgroup.procs'), String(pid));
}

/** Processes in a cgroup (none when it is gone). */
export function cgroupPids(cgroupPath: string): number[] {
  try {
    return fs
      .readFileSync(path.join(cgroupPath, 'cgroup.procs'), 'utf8')
      .split('\n')
      .filter(Boolean)
      .map(Number);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw e;
  }
}

/**
 * Remove a cgroup (children first). Any process still inside is moved to the
 * parent first so the rmdir cannot fail with EBUSY; only cgroups we created
 * are passed here.
 */
export function removeCgroup(cgroupPath: string): void {
  if (!fs.existsSync(cgroupPath)) return;
  for (const e of fs.readdirSync(cgroupPath, { withFileTypes: true })) {
    if (e.isDirectory()) removeCgroup(path.join(cgroupPath, e.name));
  }
  const parent = path.dirname(cgroupPath);
  for (const pid of cgroupPids(cgroupPath)) {
    try {
      movePid(parent, pid);
    } catch {
      /* exited meanwhile */
    }
  }
  try {
    fs.rmdirSync(cgroupPath);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
  }
}

/** How long a killed cgroup may take to empty: SIGKILL is not instant (exit work, a task in D state). */
export const CGROUP_KILL_TIMEOUT_MS = 5000;
const KILL_POLL_MS = 5;
/** a process that entered after the kill is killed too, this often */
const KILL_REPEAT_MS = 100;

/** "populated" of cgroup.events: true while the cgroup or a descendant has a process; false once it is gone. */
export function cgroupPopulated(cgroupPath: string): boolean {
  let text: string;
  try {
    text = fs.readFileSync(path.join(cgroupPath, 'cgroup.events'), 'utf8');
  } catch (e) {
    // a removed cgroup had no process (rmdir refuses a populated one)
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return false;
    throw e;
  }
  const m = /^populated ([01])$/m.exec(text);
  if (!m) throw new GenseeError('E_KERNEL', `${cgroupPath}/cgroup.events has no "populated" line`);
  return m[1] === '1';
}

/**
 * Kill every process in a cgroup and its descendants (cgroup.kill) and
 * resolve once cgroup.events says "populated 0". This is the teardown rule
 * of a boundary: hooks, pins and listeners come off only after it resolves,
 * so no workload process ever runs without them. A cgroup that is gone is
 * empty. The kill is repeated while the cgroup stays populated, so a process
 * moved in after the first one dies too. Refuses the cgroup2 root and any
 * cgroup holding the caller (E_NOT_CGROUP2); still populated after
 * timeoutMs → E_KERNEL naming the pids left, and the caller must leave the
 * boundary in place.
 */
export async function killCgroupAndWait(cgroupPath: string, timeoutMs: number = CGROUP_KILL_TIMEOUT_MS): Promise<void> {
  const cg = path.resolve(cgroupPath);
  if (!fs.existsSync(cg)) return;
  // the cgroup's owner (runc, say) may remove it at any moment: gone is empty
  let real: string;
  try {
    real = fs.realpathSync(cg);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw e;
  }
  if (!isCgroup2Dir(cg)) {
    if (!fs.existsSync(cg)) return;
    throw new GenseeError('E_NOT_CGROUP2', `${cg} is not a cgroup v2 directory: refusing to kill it`);
  }
  if (real === fs.realpathSync(findCgroup2Mount())) throw new GenseeError('E_NOT_CGROUP2', `${cg} is the cgroup2 root: refusing to kill the whole host`);
  if (pidInCgroupTree(process.pid, real)) throw new GenseeError('E_NOT_CGROUP2', `${cg} contains this process (pid ${process.pid}): refusing to kill it`);
  const deadline = Date.now() + timeoutMs;
  let lastKill = -Infinity;
  while (cgroupPopulated(cg)) {
    const now = Date.now();
    if (now >= deadline) {
      const left = cgroupPidsTree(cg);
      throw new GenseeError('E_KERNEL', `${cg} still has processes ${timeoutMs} ms after cgroup.kill: pids ${left.slice(0, 16).join(' ') || '(none listed; a descendant is populated)'}${left.length > 16 ? ' …' : ''}`);
    }
    if (now - lastKill >= KILL_REPEAT_MS) {
      try {
        fs.writeFileSync(path.join(cg, 'cgroup.kill'), '1');
      } catch (e) {
        const code = (e as NodeJS.ErrnoException).code;
        if (code === 'ENOENT' && !fs.existsSync(cg)) return; // removed meanwhile: empty
        if (code === 'ENOENT') throw new GenseeError('E_KERNEL', `${cg} has no cgroup.kill (Linux 5.14 or later is needed to kill a cgroup)`);
        throw e;
      }
      lastKill = now;
    }
    await new Promise((r) => setTimeout(r, KILL_POLL_MS));
  }
}

/** Processes in a cgroup and its descendants. */
function cgroupPidsTree(cgroupPath: string): number[] {
  const pids = cgroupPids(cgroupPath);
  try {
    for (const e of fs.readdirSync(cgroupPath, { withFileTypes: true })) {
      if (e.isDirectory()) pids.push(...cgroupPidsTree(path.join(cgroupPath, e.name)));
    }
  } catch {
    /* gone */
  }
  return pids;
}

/**
 * Remove an emptied cgroup and its descendants, children first. Unlike
 * removeCgroup it never moves a process out: a populated cgroup fails with
 * EBUSY and stays. Gone already → nothing to do.
 */
export function removeEmptyCgroup(cgroupPath: string): void {
  let entries: fs.Dirent[];
  try {
    entries = fs.readdirSync(cgroupPath, { withFileTypes: true });
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw e;
  }
  for (const e of entries) if (e.isDirectory()) removeEmptyCgroup(path.join(cgroupPath, e.name));
  try {
    fs.rmdirSync(cgroupPath);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
  }
}

/** The cgroup v2 path ("/a/b") a pid is in, from /proc/PID/cgroup. */
export function cgroupOfPid(pid: number): string | null {
  if (!Number.isInteger(pid) || pid <= 0) return null;
  // read in C: this is on every fault's subject check
  return loadAddon().procCgroup(pid);
}

const relCache = new Map<string, string>();

/** cgroupPath (absolute, under the mount) as /proc/PID/cgroup names it: "/gensee/op". */
export function cgroupRelPath(cgroupPath: string): string {
  // on every fault's subject check: computed once per path
  let rel = relCache.get(cgroupPath);
  if (rel === undefined) {
    rel = '/' + path.relative(findCgroup2Mount(), cgroupPath);
    if (relCache.size > 1024) relCache.clear();
    relCache.set(cgroupPath, rel);
  }
  return rel;
}

/**
 * Is `have` (a /proc/PID/cgroup path) `want` or below it? Asked on every
 * fault, so kept in TypeScript; its C twin is subject.c gs_cgroup_within
 * (the supervisor socket's peer check), and test/twins.test.ts holds them
 * to the same answers.
 */
export function cgroupWithin(have: string, want: string): boolean {
  return have === want || have.startsWith(want === '/' ? '/' : want + '/');
}

/** Is pid inside cgroupPath (absolute path under the mount) or a descendant? */
export function pidInCgroupTree(pid: number, cgroupPath: string): boolean {
  const rel = cgroupOfPid(pid);
  if (rel === null) return false;
  return cgroupWithin(rel, cgroupRelPath(cgroupPath));
}

/** The cgroup id (inode number of the directory), as bpf_get_current_cgroup_id reports. */
export function cgroupId(cgroupPath: string): bigint {
  return fs.statSync(cgroupPath, { bigint: true }).ino;
}
