// The resolver's side of gensee-fdkeep (launcher/gensee-fdkeep.c): hand it
// every fd that must outlive this process (the OCI listening socket, each
// container's seccomp listener fd), take them back on start, drop them when
// their operation ends. One SOCK_SEQPACKET connection, kept open: its
// closing is how the holder knows no resolver reads the fds any more.
// Requests are synchronous round trips (a few tens of microseconds, once
// per container start), so the answers never interleave.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { spawn } from 'node:child_process';
import { GenseeError, isErrno } from '../errors';
import { PACKAGE_ROOT } from '../addon';
import { pauseAddon, FdWatcher } from '../pause/notifier';

/** what the resolver keeps beside each fd (opaque to the holder) */
export interface KeepMeta {
  kind: 'listener' | 'socket';
  /** listener: the operation, container, pid that installed the filter, its cgroup */
  op?: string;
  container?: string;
  pid?: number;
  cgroup?: string;
  status?: string;
  oci_version?: string;
  /** listener: the policy name the container's metadata gave (`policy=NAME`) */
  policy?: string;
  /** socket: the path and inode it was bound as */
  path?: string;
  ino?: number;
  /** CLOCK_BOOTTIME ns the resolver received the fd */
  kept_boot_ns: string;
  resolver_pid: number;
}

export interface KeptFd {
  tag: string;
  fd: number;
  meta: KeepMeta;
  /** CLOCK_BOOTTIME ns a paused call was first seen waiting while no resolver read it; 0n: none */
  pendingSinceNs: bigint;
}

export interface HolderRefusal {
  bootNs: string;
  pid: number;
  uid: number;
  why: string;
}

/** a call the holder received while no resolver read its fd (never answered: it still waits) */
export interface HeldCall {
  tag: string;
  tid: number;
  nr: number;
  /** CLOCK_BOOTTIME ns it arrived */
  arrivedNs: bigint;
}

export interface HolderListing {
  fds: KeptFd[];
  calls: HeldCall[];
  /** calls past the holder's table: counted only, their arrival unknown */
  callsLost: number;
  refused: HolderRefusal[];
  /** refusals past the holder's table, counted only */
  refusedLost: number;
}

const REPLY_TIMEOUT_MS = 5000;

export function fdkeepBinary(): string {
  return process.env.GENSEE_FDKEEP ?? path.join(PACKAGE_ROOT, 'obj', 'gensee-fdkeep');
}

/** The holder socket that goes with an OCI listener socket: a 0700 directory of its own beside it. */
export function defaultHolderPath(socketPath: string): string {
  return path.join(`${socketPath}.keep`, 'fdkeep.sock');
}

export class FdKeep {
  readonly path: string;
  private sock: number;
  private watcher: FdWatcher | null = null;
  private lostCb: ((why: string) => void) | null = null;
  /** the holder closed our connection (it died): the fds kept so far are gone with it */
  lost: string | null = null;

  private constructor(p: string, sock: number) {
    this.path = p;
    this.sock = sock;
  }

  /** Connect to a running holder; null when none serves at p. */
  static connect(p: string): FdKeep | null {
    let sock: number;
    try {
      sock = pauseAddon().unixConnect(p, 'seqpacket');
    } catch (e) {
      if (isErrno(e) && (e.code === 'ENOENT' || e.code === 'ECONNREFUSED')) return null;
      throw e;
    }
    const k = new FdKeep(p, sock);
    // admitted? a refused peer is closed without a byte
    try {
      k.ping();
    } catch (e) {
      k.close();
      throw new GenseeError('E_STATE', `the fd holder at ${p} refused this process: ${(e as Error).message} (see its log)`);
    }
    return k;
  }

  /** Connect, or start the holder (detached: it outlives us) and connect. */
  static async ensure(p: string, logFile?: string): Promise<FdKeep> {
    const got = FdKeep.connect(p);
    if (got) return got;
    const bin = fdkeepBinary();
    if (!fs.existsSync(bin)) throw new GenseeError('E_STATE', `fd holder ${bin} is missing (make build), or run with --no-fdkeep`);
    fs.mkdirSync(path.dirname(p), { recursive: true, mode: 0o700 });
    const log = fs.openSync(logFile ?? path.join(path.dirname(p), 'fdkeep.log'), 'a', 0o600);
    const child = spawn(bin, [p], { detached: true, stdio: ['ignore', 'pipe', log] });
    fs.closeSync(log);
    const ready = await new Promise<string>((resolve) => {
      let out = '';
      const done = (why: string) => {
        child.stdout!.removeAllListeners();
        child.removeAllListeners('exit');
        resolve(why);
      };
      child.stdout!.on('data', (d: Buffer) => {
        out += d.toString();
        if (out.includes('\n')) done('');
      });
      child.once('exit', (code) => done(`exited ${code}`));
    });
    child.stdout!.destroy();
    child.unref();
    const k = FdKeep.connect(p);
    if (!k) throw new GenseeError('E_STATE', `fd holder ${bin} ${p} did not start${ready ? ` (${ready})` : ''}; its log: ${path.join(path.dirname(p), 'fdkeep.log')}`);
    return k;
  }

  private request(line: string, fds: number[] = [], body?: Buffer): string {
    const a = pauseAddon();
    if (this.lost) throw new GenseeError('E_STATE', `fd holder ${this.path} is gone: ${this.lost}`);
    a.sendFd(this.sock, fds, body ? Buffer.concat([Buffer.from(line + '\n'), body]) : Buffer.from(line));
    return this.readLine().text;
  }

  private readLine(): { text: string; body: Buffer; fd: number } {
    const got = pauseAddon().recvFd(this.sock, REPLY_TIMEOUT_MS);
    if (got === null) {
      this.markLost('the holder closed the connection');
      throw new GenseeError('E_STATE', `fd holder ${this.path} closed the connection`);
    }
    const nl = got.data.indexOf(0x0a);
    const text = (nl < 0 ? got.data : got.data.subarray(0, nl)).toString('utf8');
    if (text.startsWith('ERR ')) {
      if (got.fd >= 0) pauseAddon().closeFd(got.fd);
      throw new GenseeError('E_STATE', `fd holder: ${text.slice(4)}`);
    }
    return { text, body: nl < 0 ? Buffer.alloc(0) : got.data.subarray(nl + 1), fd: got.fd };
  }

  ping(): { pid: number; fds: number } {
    const r = this.request('PING');
    const m = /^PONG (\d+) (\d+)$/.exec(r);
    if (!m) throw new GenseeError('E_STATE', `fd holder: unexpected answer ${JSON.stringify(r)}`);
    return { pid: Number(m[1]), fds: Number(m[2]) };
  }

  /** Keep a duplicate of fd (still ours) under tag; throws if the holder did not take it. */
  keep(tag: string, fd: number, meta: KeepMeta): void {
    const r = this.request(`KEEP ${tag}`, [fd], Buffer.from(JSON.stringify(meta)));
    if (r !== `OK KEEP ${tag}`) throw new GenseeError('E_STATE', `fd holder: unexpected answer ${JSON.stringify(r)}`);
  }

  drop(tag: string): number {
    const m = /^OK DROP \S+ (\d+)$/.exec(this.request(`DROP ${tag}`));
    return m ? Number(m[1]) : 0;
  }

  /** every fd kept for op */
  dropOp(op: string): number {
    const m = /^OK DROPOP \S+ (\d+)$/.exec(this.request(`DROPOP ${op}`));
    return m ? Number(m[1]) : 0;
  }

  /** Duplicates of every kept fd (ours to close), and the refused peers since the last listing. */
  list(): HolderListing {
    const a = pauseAddon();
    if (this.lost) throw new GenseeError('E_STATE', `fd holder ${this.path} is gone: ${this.lost}`);
    a.sendFd(this.sock, [], Buffer.from('LIST'));
    const out: HolderListing = { fds: [], calls: [], callsLost: 0, refused: [], refusedLost: 0 };
    for (;;) {
      const m = this.readLine();
      let x: RegExpExecArray | null;
      if ((x = /^FD (\S+) (\d+)$/.exec(m.text))) {
        if (m.fd < 0) continue;
        let meta: KeepMeta;
        try {
          meta = JSON.parse(m.body.toString('utf8')) as KeepMeta;
        } catch {
          a.closeFd(m.fd);
          continue;
        }
        out.fds.push({ tag: x[1], fd: m.fd, meta, pendingSinceNs: BigInt(x[2]) });
      } else if ((x = /^CALL (\d+) (-?\d+) (\d+) (\S+)$/.exec(m.text))) {
        out.calls.push({ tid: Number(x[1]), nr: Number(x[2]), arrivedNs: BigInt(x[3]), tag: x[4] });
      } else if ((x = /^REFUSED (\d+) (-?\d+) (\d+) (.*)$/.exec(m.text))) {
        out.refused.push({ bootNs: x[1], pid: Number(x[2]), uid: Number(x[3]), why: x[4] });
      } else if ((x = /^END (\d+) (\d+) (\d+)(?: (\d+))?$/.exec(m.text))) {
        out.refusedLost = Number(x[3]);
        out.callsLost = Number(x[4] ?? 0);
        return out;
      } else {
        if (m.fd >= 0) a.closeFd(m.fd);
        throw new GenseeError('E_STATE', `fd holder: unexpected answer ${JSON.stringify(m.text)}`);
      }
    }
  }

  /** Tell cb (once) when the holder goes away. */
  onLost(cb: (why: string) => void): void {
    this.lostCb = cb;
    if (this.watcher) return;
    this.watcher = new (pauseAddon().FdWatcher)(this.sock, (err) => {
      // nothing arrives unasked: readable means closed (or an error)
      this.markLost(err ? err.message : 'the holder closed the connection');
    });
    this.watcher.unref();
  }

  private markLost(why: string): void {
    if (this.lost) return;
    this.lost = why;
    this.watcher?.stop();
    this.watcher = null;
    const cb = this.lostCb;
    this.lostCb = null;
    cb?.(why);
  }

  close(): void {
    this.watcher?.stop();
    this.watcher = null;
    if (this.sock >= 0) pauseAddon().closeFd(this.sock);
    this.sock = -1;
  }
}

/** an OCI operation's fds for a listener restart: 'kept' (its holder answers), 'lost' (a restart fails closed, ENOSYS); null: not kept */
export type FdHolderState = 'kept' | 'lost' | null;

/** fdkeep.json of an OCI operation's directory (src/oci/session.ts), checked against the holder itself */
export function fdHolderState(dir: string): FdHolderState {
  let rec: { holder?: string; path?: string };
  try {
    rec = JSON.parse(fs.readFileSync(path.join(dir, 'fdkeep.json'), 'utf8')) as typeof rec;
  } catch {
    return null;
  }
  if (rec.holder !== 'kept' || !rec.path) return 'lost';
  try {
    const k = FdKeep.connect(rec.path);
    if (!k) return 'lost';
    k.close();
    return 'kept';
  } catch {
    return 'lost';
  }
}
