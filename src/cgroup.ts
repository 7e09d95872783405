// cgroup v2 helpers: find the cgroup2 mount from /proc/self/mountinfo (the
// hybrid layout puts it at /sys/fs/cgroup/unified; never hard-code), create,
// move a pid in, remove.
import * as fs from 'node:fs';
import { loadAddon } from './addon';
import * as path from 'node:path';
import { GenseeError } from './errors';

export const CGROUP2_SUPER_MAGIC = 0x63677270;

/** Unescape the octal escapes mountinfo uses for spaces etc. */
function unescapeMount(s: string): string {
  return s.replace(/\\([0-7]{3})/g, (_, o: string) => String.fromCharCode(parseInt(o, 8)));
}

const mountCache = new Map<string, string>();

export function findCgroup2Mount(mountinfo = '/proc/self/mountinfo'): string {
  const hit = mountCache.get(mountinfo);
  if (hit) return hit;
  const found = scanCgroup2Mount(mountinfo);
  mountCache.set(mountinfo, found);
  return found;
}

function scanCgroup2Mount(mountinfo: string): string {
  const text = fs.readFileSync(mountinfo, 'utf8');
  for (const line of text.split('\n')) {
    const sep = line.indexOf(' - ');
    if (sep < 0) continue;
    const fstype = line.slice(sep + 3).split(' ')[0];
    if (fstype === 'cgroup2') return unescapeMount(line.split(' ')[4]);
  }
  throw new GenseeError('E_NO_CGROUP2', 'no cgroup2 filesystem is mounted (see /proc/self/mountinfo)', 1);
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

/** The cgroup v2 path ("/a/b") a pid is in, from /proc/PID/cgroup. */
export function cgroupOfPid(pid: number): string | null {
  if (!Number.isInteger(pid) || pid <= 0) return null;
  // read in C: this is on every fault's subject check
  return (loadAddon().procCgroup as (pid: number) => string | null)(pid);
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

/** Is `have` (a /proc/PID/cgroup path) `want` or below it? */
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
