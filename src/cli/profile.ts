// gensee profile --socket PATH (--op ID | --policy NAME) [--policy-dir DIR]
//                [--base FILE|none]
// Prints a seccomp profile (the Docker/OCI JSON podman, containerd's ctr,
// CRI-O and a Kubernetes `Localhost` profile read) whose connect, sendto,
// sendmsg and sendmmsg go to `gensee oci-listener` on PATH
// (`listenerPath`), with `listenerMetadata` naming the operation
// (`op=ID`: one container at a time) or the policy (`policy=NAME`: each
// container its own operation under --policy-dir's NAME.json).
//
// The profile replaces the runtime's default filter, so it is built on a
// base: the containers-common default profile when it is installed, else
// the one --base names; `--base none` gives an allow-everything-else
// profile and says so. The base's rules for the four calls are taken out
// and one SCMP_ACT_NOTIFY rule added: the listener decides them (and the
// eBPF hooks on the container's cgroup enforce whatever the filter misses).
import * as fs from 'node:fs';
import * as path from 'node:path';
import { parse, out } from './args';
import { GenseeError, isErrno } from '../errors';
import { isValidOpId, OP_ID_RE } from '../state/operation';
import { SUN_PATH_MAX } from '../privsock';
import { loadPolicyFile } from '../supervisor';
import { refuseHostRules } from '../oci/listener';
import { readFileNoFollow } from '../state/fsutil';

export const usage = 'usage: gensee profile --socket PATH (--op ID | --policy NAME) [--policy-dir DIR] [--base FILE|none]';

/** the calls the listener pauses (the same set runc-helpers.ts and the README use) */
export const NOTIFY_SYSCALLS = ['connect', 'sendto', 'sendmsg', 'sendmmsg'];
/** containers-common's default profile (podman, CRI-O, buildah) */
export const DEFAULT_BASE = '/usr/share/containers/seccomp.json';
const BASE_MAX_BYTES = 1024 * 1024;

interface Rule {
  names?: unknown;
  name?: unknown;
  action?: unknown;
  [k: string]: unknown;
}

export interface Profile {
  defaultAction: string;
  listenerPath: string;
  listenerMetadata: string;
  syscalls: Rule[];
  [k: string]: unknown;
}

function bad(file: string, pointer: string, what: string): GenseeError {
  return new GenseeError('E_SCHEMA', `--base ${file}: ${pointer}: ${what}`);
}

/**
 * The base profile with the notify calls taken out of every rule (a rule
 * left with no names goes) and one SCMP_ACT_NOTIFY rule for them added.
 */
export function buildProfile(base: Record<string, unknown> | null, file: string, listenerPath: string, metadata: string): Profile {
  if (base === null) {
    return { defaultAction: 'SCMP_ACT_ALLOW', listenerPath, listenerMetadata: metadata, syscalls: [{ names: NOTIFY_SYSCALLS, action: 'SCMP_ACT_NOTIFY' }] };
  }
  if (typeof base.defaultAction !== 'string') throw bad(file, '/defaultAction', 'must be a string (SCMP_ACT_...)');
  if (base.defaultAction === 'SCMP_ACT_NOTIFY') throw bad(file, '/defaultAction', 'SCMP_ACT_NOTIFY as the default would send every call to the listener');
  for (const k of ['listenerPath', 'listenerMetadata']) {
    if (base[k] !== undefined) throw bad(file, `/${k}`, 'is already set: this is a listener profile already; start from the runtime default');
  }
  if (base.syscalls !== undefined && !Array.isArray(base.syscalls)) throw bad(file, '/syscalls', 'must be an array');
  const notify = new Set(NOTIFY_SYSCALLS);
  const syscalls: Rule[] = [];
  ((base.syscalls as unknown[] | undefined) ?? []).forEach((r, i) => {
    if (typeof r !== 'object' || r === null || Array.isArray(r)) throw bad(file, `/syscalls/${i}`, 'must be an object');
    const rule = r as Rule;
    if (typeof rule.action !== 'string') throw bad(file, `/syscalls/${i}/action`, 'must be a string');
    if (rule.action === 'SCMP_ACT_NOTIFY') throw bad(file, `/syscalls/${i}/action`, 'SCMP_ACT_NOTIFY: one profile has one listener, and this one is gensee');
    if (rule.name !== undefined) {
      if (typeof rule.name !== 'string') throw bad(file, `/syscalls/${i}/name`, 'must be a string');
      if (!notify.has(rule.name)) syscalls.push(rule);
      return;
    }
    if (!Array.isArray(rule.names) || !rule.names.every((n) => typeof n === 'string')) throw bad(file, `/syscalls/${i}/names`, 'must be an array of strings');
    const names = (rule.names as string[]).filter((n) => !notify.has(n));
    if (names.length > 0) syscalls.push({ ...rule, names });
  });
  syscalls.push({ names: NOTIFY_SYSCALLS, action: 'SCMP_ACT_NOTIFY' });
  return { ...(base as { defaultAction: string }), listenerPath, listenerMetadata: metadata, syscalls };
}

async function readBase(file: string): Promise<Record<string, unknown>> {
  let bytes: Buffer;
  try {
    bytes = await readFileNoFollow(path.resolve(file), BASE_MAX_BYTES);
  } catch (e) {
    if (isErrno(e) && e.code === 'ENOENT') throw new GenseeError('E_NOT_FILE', `--base ${file}: no such file (give the runtime's default seccomp profile, or --base none)`);
    throw e;
  }
  let v: unknown;
  try {
    v = JSON.parse(bytes.toString('utf8'));
  } catch (e) {
    throw new GenseeError('E_BAD_JSON', `--base ${file}: not JSON: ${(e as Error).message}`);
  }
  if (typeof v !== 'object' || v === null || Array.isArray(v)) throw bad(file, '', 'must be a JSON object (a seccomp profile)');
  return v as Record<string, unknown>;
}

export async function run(argv: string[]): Promise<number> {
  const { values } = parse(argv, { socket: { type: 'string' }, op: { type: 'string' }, policy: { type: 'string' }, 'policy-dir': { type: 'string' }, base: { type: 'string' } }, false);
  if (values.flags.has('help')) {
    out(usage);
    return 0;
  }
  const sock = values.socket;
  if (sock === undefined) throw new GenseeError('E_USAGE', `--socket PATH is required (the oci-listener's --socket); ${usage}`);
  // the runtime connects from wherever it runs: only an absolute path means the same socket there
  if (!path.isAbsolute(sock)) throw new GenseeError('E_USAGE', `--socket ${sock}: must be an absolute path (the runtime connects to it from its own working directory)`);
  if (Buffer.byteLength(sock) > SUN_PATH_MAX) throw new GenseeError('E_USAGE', `--socket ${sock}: ${Buffer.byteLength(sock)} bytes; a unix socket path holds at most ${SUN_PATH_MAX}`);
  if ((values.op === undefined) === (values.policy === undefined)) {
    throw new GenseeError('E_USAGE', 'give exactly one of --op ID (every container of this profile in one operation) or --policy NAME (each container its own operation, under --policy-dir NAME.json)');
  }
  const key = values.op !== undefined ? 'op' : 'policy';
  const name = (values.op ?? values.policy)!;
  if (!isValidOpId(name)) throw new GenseeError(key === 'op' ? 'E_BAD_OP_ID' : 'E_USAGE', `--${key} ${JSON.stringify(name)}: expected ${OP_ID_RE.source}`);
  if (values['policy-dir'] !== undefined) {
    // what the listener will load for it, checked now: present, valid, no host rules
    const file = path.join(values['policy-dir'], `${name}.json`);
    const present = fs.lstatSync(file, { throwIfNoEntry: false }) !== undefined;
    if (!present && key === 'policy') throw new GenseeError('E_NOT_FILE', `--policy ${name}: ${file} does not exist (the listener would refuse every container of this profile)`);
    if (present) refuseHostRules(await loadPolicyFile(file), file);
  }
  let base: Record<string, unknown> | null;
  let baseFile: string;
  if (values.base === 'none') {
    base = null;
    baseFile = 'none';
    process.stderr.write('gensee: --base none: every call but the network ones is allowed (the runtime\'s default filter is not in this profile)\n');
  } else {
    baseFile = values.base ?? DEFAULT_BASE;
    if (values.base === undefined && !fs.existsSync(DEFAULT_BASE)) {
      throw new GenseeError('E_NOT_FILE', `${DEFAULT_BASE} (the containers-common default profile) is not installed: give --base FILE (your runtime's default profile) or --base none`);
    }
    base = await readBase(baseFile);
  }
  out(JSON.stringify(buildProfile(base, baseFile, sock, `${key}=${name}`), null, 2));
  return 0;
}
