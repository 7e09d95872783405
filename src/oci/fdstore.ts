// systemd's file descriptor store, beside (or instead of) gensee-fdkeep:
// every kept fd is also sent to $NOTIFY_SOCKET with FDSTORE=1 and
// FDNAME=<name>; on the service's restart systemd hands them back as
// LISTEN_FDS/LISTEN_FDNAMES (fds from 3). The name carries no metadata, so
// what the listener needs to serve an fd again (operation, cgroup,
// container) is kept in <state-dir>/oci-fds/<name>.json.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { pauseAddon } from '../pause/notifier';
import type { KeepMeta, KeptFd } from './fdkeep';

const SD_LISTEN_FDS_START = 3;

function metaDir(stateDir: string): string {
  return path.join(stateDir, 'oci-fds');
}

/** an FDNAME: at most 255 printable characters, no ':' */
export function fdName(tag: string): string {
  return tag.replace(/[^A-Za-z0-9._-]/g, '_').slice(0, 200);
}

/** The fds systemd passed this process (LISTEN_PID is ours), with their metadata; each is ours to close. */
export function inheritedFds(stateDir: string, env: NodeJS.ProcessEnv = process.env): KeptFd[] {
  if (!env.LISTEN_FDS || Number(env.LISTEN_PID) !== process.pid) return [];
  const n = Number(env.LISTEN_FDS);
  const names = (env.LISTEN_FDNAMES ?? '').split(':');
  delete env.LISTEN_FDS;
  delete env.LISTEN_PID;
  delete env.LISTEN_FDNAMES;
  const out: KeptFd[] = [];
  for (let i = 0; i < n && i < 4096; i++) {
    const fd = SD_LISTEN_FDS_START + i;
    const name = names[i] ?? '';
    let meta: KeepMeta | null = null;
    try {
      meta = JSON.parse(fs.readFileSync(path.join(metaDir(stateDir), `${fdName(name)}.json`), 'utf8')) as KeepMeta;
    } catch {
      meta = null;
    }
    if (!meta) {
      // not ours to serve without knowing whose it is: closed (that container fails closed)
      try {
        pauseAddon().closeFd(fd);
      } catch {
        /* not open */
      }
      continue;
    }
    out.push({ tag: name, fd, meta, pendingSinceNs: 0n });
  }
  return out;
}

/** systemd's notify socket, when the service has one */
export class FdStore {
  private readonly sock: number;
  private readonly stateDir: string;

  private constructor(sock: number, stateDir: string) {
    this.sock = sock;
    this.stateDir = stateDir;
  }

  static open(stateDir: string, env: NodeJS.ProcessEnv = process.env): FdStore | null {
    const p = env.NOTIFY_SOCKET;
    if (!p) return null;
    return new FdStore(pauseAddon().unixConnect(p, 'dgram'), stateDir);
  }

  private notify(text: string, fds: number[] = []): void {
    pauseAddon().sendFd(this.sock, fds, Buffer.from(text));
  }

  keep(tag: string, fd: number, meta: KeepMeta): void {
    const name = fdName(tag);
    fs.mkdirSync(metaDir(this.stateDir), { recursive: true, mode: 0o700 });
    fs.writeFileSync(path.join(metaDir(this.stateDir), `${name}.json`), JSON.stringify(meta), { mode: 0o600 });
    this.notify(`FDSTORE=1\nFDNAME=${name}`, [fd]);
  }

  drop(tag: string): void {
    const name = fdName(tag);
    this.notify(`FDSTOREREMOVE=1\nFDNAME=${name}`);
    fs.rmSync(path.join(metaDir(this.stateDir), `${name}.json`), { force: true });
  }

  ready(): void {
    this.notify('READY=1');
  }
}
