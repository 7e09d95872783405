// gensee oci-listener --socket PATH [--policy-dir DIR] [--policy FILE] [--json]
//                     [--fdkeep PATH | --no-fdkeep]
// Receive seccomp notify fds from runc/crun (`linux.seccomp.listenerPath`),
// attach the boundary to each container's cgroup and serve it, until
// SIGTERM/SIGINT. See README "Containers: runc and crun".
//
// Restarts: every fd is handed to the fd holder (obj/gensee-fdkeep serving
// on --fdkeep PATH, by default <socket>.keep/fdkeep.sock, started on demand;
// not by default under systemd, whose fd store does it; --no-fdkeep: none) and, under systemd,
// to the service's fd store (NOTIFY_SOCKET + FDSTORE=1). SIGTERM then leaves them there and
// the next listener serves them: the containers' calls wait, they never
// fail. SIGHUP (or `gensee upgrade`) starts a successor from the same
// command line; it takes the fds, then tells this one to leave.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { spawn } from 'node:child_process';
import { parse, out } from './args';
import { GenseeError } from '../errors';
import { resolveStateDir } from '../state/operation';
import { OciListener } from '../oci/listener';
import { inheritedFds, FdStore } from '../oci/fdstore';
import { defaultHolderPath } from '../oci/fdkeep';
import { PACKAGE_ROOT } from '../addon';

export const usage =
  'usage: gensee oci-listener --socket PATH [--policy-dir DIR] [--policy FILE] [--state-dir DIR] [--fdkeep PATH | --no-fdkeep] [--json]';

export function packageVersion(): string {
  try {
    return (JSON.parse(fs.readFileSync(path.join(PACKAGE_ROOT, 'package.json'), 'utf8')) as { version: string }).version;
  } catch {
    return 'unknown';
  }
}

/** where a listener writes its pid, for `gensee upgrade` */
export function listenerPidFile(socketPath: string): string {
  return `${socketPath}.pid`;
}

export async function run(argv: string[]): Promise<number> {
  const { values } = parse(argv, {
    socket: { type: 'string' },
    'policy-dir': { type: 'string' },
    policy: { type: 'string' },
    json: { type: 'boolean' },
    fdkeep: { type: 'string' },
    'no-fdkeep': { type: 'boolean' },
    'takeover-from': { type: 'string' },
  }, false);
  if (values.flags.has('help')) {
    out(usage);
    return 0;
  }
  if (!values.socket) throw new GenseeError('E_USAGE', `--socket PATH is required; ${usage}`);
  if (process.getuid && process.getuid() !== 0) throw new GenseeError('E_NOT_ROOT', 'gensee oci-listener needs root (cgroups, BPF, seccomp listener)');
  const takeoverFrom = values['takeover-from'] !== undefined ? Number(values['takeover-from']) : undefined;
  if (takeoverFrom !== undefined && !(Number.isInteger(takeoverFrom) && takeoverFrom > 1)) throw new GenseeError('E_USAGE', `--takeover-from takes a pid, got ${values['takeover-from']}`);
  const json = values.flags.has('json');
  const stateDir = resolveStateDir(values['state-dir']);
  const socket = path.resolve(values.socket);
  const inherited = inheritedFds(stateDir);
  if (values.fdkeep !== undefined && values.flags.has('no-fdkeep')) throw new GenseeError('E_USAGE', `--fdkeep PATH and --no-fdkeep contradict each other; ${usage}`);
  if (values.fdkeep === '') throw new GenseeError('E_USAGE', '--fdkeep must not be empty');
  // on by default: a restart or upgrade must not break a running container;
  // under systemd its fd store keeps the fds (a holder started here would be
  // in the service's cgroup and go with it)
  const fdkeep =
    values.fdkeep !== undefined ? path.resolve(values.fdkeep) : values.flags.has('no-fdkeep') || process.env.NOTIFY_SOCKET ? null : defaultHolderPath(socket);
  const keeps = fdkeep !== null || !!process.env.NOTIFY_SOCKET;
  const version = packageVersion();
  let previousPid: number | null = null;
  try {
    previousPid = Number(fs.readFileSync(listenerPidFile(socket), 'utf8').trim()) || null;
  } catch {
    previousPid = null;
  }
  const listener = await OciListener.open({
    socketPath: socket,
    stateDir,
    policyDir: values['policy-dir'],
    policyFile: values.policy,
    json,
    say: out,
    fdkeep,
    inherited,
    takeoverFrom,
    previousPid,
    version,
  });
  // systemd (Type=notify): serving now
  if (process.env.NOTIFY_SOCKET) {
    try {
      FdStore.open(stateDir)?.ready();
    } catch {
      /* no notify socket after all */
    }
  }
  const pidFile = listenerPidFile(socket);
  fs.writeFileSync(pidFile, `${process.pid}\n`, { mode: 0o600 });
  const policy = values.policy ?? 'deny-all';
  out(
    json
      ? JSON.stringify({ event: 'listening', socket: listener.socketPath, state_dir: stateDir, policy_dir: values['policy-dir'] ?? null, policy, fdkeep, pid: process.pid, version, resumed: listener.stats.resumed })
      : `gensee: oci-listener on ${listener.socketPath} (pid ${process.pid}, ${version}); state ${stateDir}; policy ${values['policy-dir'] ? `${values['policy-dir']}/<op>.json, else ` : ''}${policy}; fd holder ${fdkeep ?? 'none'}`,
  );
  const why = await new Promise<'stop' | 'leave' | 'upgrade'>((resolve) => {
    process.once('SIGINT', () => resolve('stop'));
    process.once('SIGTERM', () => resolve(keeps ? 'leave' : 'stop'));
    process.once('SIGHUP', () => resolve(keeps ? 'upgrade' : 'stop'));
  });
  if (why === 'upgrade') {
    // the successor takes the fds from the holder, then sends us SIGTERM
    const argv2 = process.argv.slice(1).filter((a, i, all) => a !== '--takeover-from' && all[i - 1] !== '--takeover-from');
    const child = spawn(process.execPath, [...argv2, '--takeover-from', String(process.pid)], { detached: true, stdio: 'inherit' });
    child.unref();
    out(json ? JSON.stringify({ event: 'upgrade', successor: child.pid }) : `gensee: SIGHUP: successor pid ${child.pid} takes over`);
    await new Promise<void>((resolve) => process.once('SIGTERM', () => resolve()));
  }
  const st = listener.stats;
  if (why === 'stop') await listener.close();
  else await listener.leave();
  try {
    if (fs.readFileSync(pidFile, 'utf8').trim() === String(process.pid)) fs.unlinkSync(pidFile);
  } catch {
    /* a successor's */
  }
  out(
    json
      ? JSON.stringify({ event: 'shutdown', how: why === 'stop' ? 'stopped' : 'left', connections: st.connections, attached: st.attached, refused: st.refused, gone: st.gone })
      : why === 'stop'
        ? `gensee: oci-listener stopped: ${st.connections} connections, ${st.attached} attached, ${st.refused} refused${st.gone ? `, ${st.gone} gone before their hand-off` : ''}`
        : `gensee: oci-listener left its fds to ${fdkeep}: the containers' calls wait for the next listener (${st.connections} connections, ${st.attached} attached)`,
  );
  // a leaving listener answers nothing more: the notifier threads must not outlive the records
  if (why !== 'stop') process.exit(0);
  return 0;
}
