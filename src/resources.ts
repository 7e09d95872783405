// An operation's resource limits (docs/design.md "Resource limits"): the
// tasks (pids.max) and the memory (memory.max, swap included) its workload
// may use, so a fork bomb or a memory bomb stays inside the operation.
//
// Where the controllers are depends on the host's layout, read from
// /proc/self/mountinfo, never assumed:
// - cgroup2 (the controller is in the cgroup2 root's cgroup.controllers):
//   enabled down the tree through each ancestor's cgroup.subtree_control,
//   then pids.max / memory.max / memory.swap.max written in the operation's
//   own cgroup, so the workload is inside them the moment it joins;
// - cgroup v1 (hybrid layout: the controller has its own v1 hierarchy): the
//   operation gets a cgroup of its own in that hierarchy,
//   <v1 mount>/gensee/<OP>, with pids.max or memory.limit_in_bytes (and
//   memory.memsw.limit_in_bytes), which gensee-exec joins right after the
//   cgroup2 one (--join-cgroup), before CMD's first instruction; they are
//   removed when the operation ends, after its cgroup2 cgroup is empty, or
//   by the next run when a killed one left them.
// Every value is read back from the kernel and recorded in operation.json
// (`resources`), with the reason when a limit could not be applied.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { findCgroup2Mount } from './cgroup';
import { GenseeError } from './errors';
import type { PolicyLimits } from './protocol/types';

export const DEFAULT_PIDS_MAX = 4096;
/** the default memory limit is the smaller of this and half the host's RAM */
export const DEFAULT_MEMORY_CAP_BYTES = 4 * 1024 ** 3;

/** What the operation's limits are: the policy's, else the defaults. */
export function effectiveLimits(p: PolicyLimits, totalMem = os.totalmem()): { pids: Requested; memory: Requested } {
  return {
    pids: p.pids_max !== undefined ? { value: p.pids_max, source: 'policy' } : { value: DEFAULT_PIDS_MAX, source: 'default' },
    memory:
      p.memory_max_bytes !== undefined
        ? { value: p.memory_max_bytes, source: 'policy' }
        : { value: Math.min(DEFAULT_MEMORY_CAP_BYTES, Math.floor(totalMem / 2)), source: 'default' },
  };
}

export interface Requested {
  value: number;
  source: 'policy' | 'default';
}

export const LIMIT_NAMES = ['pids', 'memory'] as const;
export type LimitName = (typeof LIMIT_NAMES)[number];
export const LIMIT_SOURCES = ['policy', 'default'] as const;
export const LIMIT_CONTROLLERS = ['cgroup2', 'cgroup1'] as const;
export const CGROUP_LAYOUTS = ['cgroup2', 'hybrid'] as const;

/** One limit as applied (operation.json `resources.pids` / `resources.memory`). */
export interface LimitRecord {
  requested: number;
  source: (typeof LIMIT_SOURCES)[number];
  applied: boolean;
  /** the hierarchy it was written in; null when not applied */
  controller: (typeof LIMIT_CONTROLLERS)[number] | null;
  /** the cgroup directory holding the limit; null when not applied */
  cgroup: string | null;
  /** the limit as the kernel reads it back ("4096", "4294967296") */
  value: string | null;
  /** memory only: the swap limit written beside it, "FILE VALUE"; null when the host has none */
  swap: string | null;
  /** why it was not applied, or what was kept instead */
  reason: string | null;
}

export interface ResourcesRecord {
  /** cgroup2: every controller is on cgroup2; hybrid: cgroup v1 hierarchies are mounted beside it */
  layout: (typeof CGROUP_LAYOUTS)[number];
  pids: LimitRecord;
  memory: LimitRecord;
}

/** The cgroup mounts of this mount namespace. */
export interface CgroupLayout {
  cgroup2: string;
  /** v1 controller → mount point (the first mount of its hierarchy) */
  v1: Map<string, string>;
}

function unescapeMount(s: string): string {
  return s.replace(/\\([0-7]{3})/g, (_, o: string) => String.fromCharCode(parseInt(o, 8)));
}

/** cgroup2 and the v1 hierarchies, from mountinfo (fields 5: mount point; after " - ": type, source, super options). */
export function cgroupLayout(mountinfo = '/proc/self/mountinfo'): CgroupLayout {
  const v1 = new Map<string, string>();
  for (const line of fs.readFileSync(mountinfo, 'utf8').split('\n')) {
    const sep = line.indexOf(' - ');
    if (sep < 0) continue;
    const [fstype, , opts = ''] = line.slice(sep + 3).split(' ');
    if (fstype !== 'cgroup') continue;
    const mnt = unescapeMount(line.split(' ')[4]);
    for (const o of opts.split(',')) if (!v1.has(o)) v1.set(o, mnt);
  }
  return { cgroup2: findCgroup2Mount(mountinfo), v1 };
}

function readTrim(file: string): string {
  return fs.readFileSync(file, 'utf8').trim();
}

function errText(e: unknown): string {
  const x = e as NodeJS.ErrnoException;
  return x.code ? `${x.code} (${x.message})` : String(e);
}

/** Write value to file and read it back. */
function writeLimit(file: string, value: string): string {
  fs.writeFileSync(file, value);
  return readTrim(file);
}

function notApplied(req: Requested, reason: string, observed: { controller?: LimitRecord['controller']; cgroup?: string; value?: string } = {}): LimitRecord {
  return { requested: req.value, source: req.source, applied: false, controller: observed.controller ?? null, cgroup: observed.cgroup ?? null, value: observed.value ?? null, swap: null, reason };
}

/** The controller (pids|memory) in every subtree_control from the cgroup2 root down to dir's parent. */
function enableV2(controller: string, root: string, dir: string): void {
  const rel = path.relative(root, path.dirname(dir));
  const chain = [root];
  if (rel) for (const part of rel.split(path.sep)) chain.push(path.join(chain[chain.length - 1], part));
  for (const d of chain) {
    const ctl = path.join(d, 'cgroup.subtree_control');
    if (readTrim(ctl).split(/\s+/).includes(controller)) continue;
    try {
      fs.writeFileSync(ctl, `+${controller}`);
    } catch (e) {
      throw new Error(`cannot enable ${controller} in ${ctl}: ${errText(e)}`);
    }
  }
}

/** memory.max and memory.swap.max 0 (where the host has swap accounting), or memsw = the limit on v1 */
function writeMemory(dir: string, v2: boolean, bytes: number): { value: string; swap: string | null } {
  const value = writeLimit(path.join(dir, v2 ? 'memory.max' : 'memory.limit_in_bytes'), String(bytes));
  // memory and swap together stay within the limit: no swap on v2, memsw = memory on v1
  const [swapFile, swapValue] = v2 ? ['memory.swap.max', '0'] : ['memory.memsw.limit_in_bytes', String(bytes)];
  if (!fs.existsSync(path.join(dir, swapFile))) return { value, swap: null };
  try {
    return { value, swap: `${swapFile} ${writeLimit(path.join(dir, swapFile), swapValue)}` };
  } catch (e) {
    // the memory limit holds; say that swap may add to it
    return { value, swap: `${swapFile} not set: ${errText(e)}` };
  }
}

function writeOne(name: LimitName, dir: string, v2: boolean, req: Requested): LimitRecord {
  const base = { requested: req.value, source: req.source, applied: true, controller: v2 ? ('cgroup2' as const) : ('cgroup1' as const), cgroup: dir, reason: null };
  if (name === 'pids') return { ...base, value: writeLimit(path.join(dir, 'pids.max'), String(req.value)), swap: null };
  return { ...base, ...writeMemory(dir, v2, req.value) };
}

/**
 * Empty v1 limit cgroups of runs that were killed before they could remove
 * them (no cgroup2 cgroup of that name any more under v2Parent). A run's
 * cgroup2 cgroup is made before its v1 ones and removed after them, so a
 * live run's are never taken; a populated one is never removed (EBUSY).
 */
function sweepV1Leftovers(mount: string, v2Parent: string): void {
  let names: string[];
  try {
    names = fs.readdirSync(path.join(mount, path.basename(v2Parent)), { withFileTypes: true }).filter((e) => e.isDirectory()).map((e) => e.name);
  } catch {
    return;
  }
  for (const n of names) {
    if (fs.existsSync(path.join(v2Parent, n))) continue;
    try {
      fs.rmdirSync(path.join(mount, path.basename(v2Parent), n));
    } catch {
      /* populated, or gone meanwhile */
    }
  }
}

/** <v1 mount>/<parent>/<op> (parent: the cgroup2 parent's name, gensee), fresh; a leftover of a killed run is removed when empty, else reused (its tasks count against the limit) */
function makeV1Cgroup(mount: string, parentName: string, op: string): string {
  const parent = path.join(mount, parentName);
  const dir = path.join(parent, op);
  for (let attempt = 0; attempt < 4; attempt++) {
    fs.mkdirSync(parent, { recursive: true });
    try {
      fs.mkdirSync(dir);
      return dir;
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      if (code === 'ENOENT') continue; // another operation removed the shared parent meanwhile
      if (code !== 'EEXIST') throw e;
    }
    try {
      fs.rmdirSync(dir);
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      if (code === 'EBUSY') return dir;
      if (code !== 'ENOENT') throw e;
    }
  }
  throw new Error(`cannot create ${dir}: it kept disappearing or reappearing`);
}

export interface AppliedLimits {
  record: ResourcesRecord;
  /** cgroup v1 directories the workload joins (gensee-exec --join-cgroup) */
  join: string[];
}

/**
 * Set the limits of an operation gensee created (`gensee run`): cgroup is
 * <cgroup2>/gensee/<op>, still empty. A limit that cannot be applied is
 * recorded with its reason and left out, and a later removeLimitCgroups
 * tolerates what was made before a failure.
 */
export function applyOperationLimits(o: { op: string; cgroup: string; limits: PolicyLimits; mountinfo?: string }): AppliedLimits {
  const layout = cgroupLayout(o.mountinfo);
  const want = effectiveLimits(o.limits);
  const v2Available = readTrim(path.join(layout.cgroup2, 'cgroup.controllers')).split(/\s+/);
  const one = (name: LimitName): LimitRecord => {
    const req = want[name];
    try {
      if (v2Available.includes(name)) {
        enableV2(name, layout.cgroup2, o.cgroup);
        return writeOne(name, o.cgroup, true, req);
      }
      const mount = layout.v1.get(name);
      if (!mount) return notApplied(req, `no ${name} controller: not in ${path.join(layout.cgroup2, 'cgroup.controllers')} and no cgroup v1 ${name} hierarchy is mounted`);
      sweepV1Leftovers(mount, path.dirname(o.cgroup));
      const dir = makeV1Cgroup(mount, path.basename(path.dirname(o.cgroup)), o.op);
      try {
        return writeOne(name, dir, false, req);
      } catch (e) {
        // still recorded, so that it is removed with the operation
        return notApplied(req, `writing the ${name} limit in ${dir} failed: ${errText(e)}`, { controller: 'cgroup1', cgroup: dir });
      }
    } catch (e) {
      return notApplied(req, e instanceof Error && !(e as NodeJS.ErrnoException).code ? e.message : `writing the ${name} limit failed: ${errText(e)}`);
    }
  };
  const record: ResourcesRecord = { layout: layout.v1.size ? 'hybrid' : 'cgroup2', pids: one('pids'), memory: one('memory') };
  // a v1 cgroup whose limit could not be written is not joined: it would bound nothing
  const join = LIMIT_NAMES.map((n) => record[n]).filter((r) => r.applied && r.controller === 'cgroup1').map((r) => r.cgroup as string);
  return { record, join };
}

/**
 * Limits on a cgroup someone else owns (`gensee supervise --cgroup`, a
 * container's): cgroup2 only, where the owner enabled the controller (the
 * file is there); gensee never enables a controller in the owner's parent
 * and never loosens a limit the owner set (a lower one is kept). Its v1
 * cgroups, if any, are the runtime's: not touched.
 */
export function applyExistingCgroupLimits(o: { cgroup: string; limits: PolicyLimits; mountinfo?: string }): ResourcesRecord {
  const layout = cgroupLayout(o.mountinfo);
  const want = effectiveLimits(o.limits);
  const one = (name: LimitName): LimitRecord => {
    const req = want[name];
    const file = path.join(o.cgroup, name === 'pids' ? 'pids.max' : 'memory.max');
    if (!fs.existsSync(file)) {
      const v1 = layout.v1.has(name) ? `; ${name} is a cgroup v1 controller here, whose cgroups belong to the container's runtime` : '';
      return notApplied(req, `${file} is missing: the cgroup's owner did not enable the ${name} controller${v1}`);
    }
    try {
      const cur = readTrim(file);
      if (cur !== 'max' && Number(cur) <= req.value) {
        return { requested: req.value, source: req.source, applied: true, controller: 'cgroup2', cgroup: o.cgroup, value: cur, swap: null, reason: `kept the owner's lower limit ${cur}` };
      }
      return writeOne(name, o.cgroup, true, req);
    } catch (e) {
      return notApplied(req, `writing the ${name} limit failed: ${errText(e)}`);
    }
  };
  return { layout: layout.v1.size ? 'hybrid' : 'cgroup2', pids: one('pids'), memory: one('memory') };
}

/** The limits named in the policy that were not applied: an error for the operator who asked. */
export function missingPolicyLimits(r: ResourcesRecord): string[] {
  return LIMIT_NAMES.filter((n) => r[n].source === 'policy' && !r[n].applied).map((n) => `${n}: ${r[n].reason}`);
}

/** One line per limit not applied (for a warning). */
export function unappliedLimits(r: ResourcesRecord): string[] {
  return LIMIT_NAMES.filter((n) => !r[n].applied).map((n) => `${n} limit (${r[n].source} ${r[n].requested}) not applied: ${r[n].reason}`);
}

const RMDIR_TRIES = 50;
const RMDIR_WAIT_MS = 10;

/**
 * Remove an operation's cgroup v1 directories, once its cgroup2 cgroup is
 * empty (a task leaves every hierarchy as it exits, so they empty with it);
 * each shared <v1 mount>/gensee parent goes with the last operation. Gone
 * already is fine; still busy after a short wait → the error names it.
 */
export async function removeLimitCgroups(dirs: string[]): Promise<void> {
  const failed: string[] = [];
  for (const dir of new Set(dirs)) {
    for (let i = 0; ; i++) {
      try {
        fs.rmdirSync(dir);
        break;
      } catch (e) {
        const code = (e as NodeJS.ErrnoException).code;
        if (code === 'ENOENT') break;
        if (code !== 'EBUSY' || i >= RMDIR_TRIES) {
          failed.push(`${dir}: ${errText(e)}`);
          break;
        }
        await new Promise((r) => setTimeout(r, RMDIR_WAIT_MS));
      }
    }
    try {
      fs.rmdirSync(path.dirname(dir));
    } catch {
      /* another operation's, still there */
    }
  }
  if (failed.length) throw new GenseeError('E_KERNEL', `cgroup v1 limit cgroups left behind: ${failed.join('; ')}`);
}

/** The v1 directories a record names (for removal). */
export function limitCgroupsOf(r: ResourcesRecord | null): string[] {
  if (!r) return [];
  return LIMIT_NAMES.map((n) => r[n]).filter((l) => l.controller === 'cgroup1' && l.cgroup !== null).map((l) => l.cgroup as string);
}

/** "pids 4096 (cgroup1), memory 4294967296 (cgroup1, swap: memory.memsw.limit_in_bytes 4294967296)" or why not. */
export function describeLimits(r: ResourcesRecord): string {
  return LIMIT_NAMES.map((n) => {
    const l = r[n];
    if (!l.applied) return `${n} NOT applied (${l.reason})`;
    return `${n} ${l.value} (${l.controller}${l.swap ? `, swap: ${l.swap}` : ''}${l.reason ? `; ${l.reason}` : ''})`;
  }).join(', ');
}

/** The v1 directories a process of the operation joins (the limits applied there). */
export function limitCgroupsToJoin(r: ResourcesRecord | null): string[] {
  if (!r) return [];
  return LIMIT_NAMES.map((n) => r[n]).filter((l) => l.applied && l.controller === 'cgroup1' && l.cgroup !== null).map((l) => l.cgroup as string);
}
