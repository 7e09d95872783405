// gensee oci-listener --socket PATH [--policy-dir DIR] [--policy FILE] [--json]
// Receive seccomp notify fds from runc/crun (`linux.seccomp.listenerPath`),
// attach the boundary to each container's cgroup and serve it, until
// SIGTERM/SIGINT. See README "Containers: runc and crun".
import { parse, out } from './args';
import { GenseeError } from '../errors';
import { resolveStateDir } from '../state/operation';
import { OciListener } from '../oci/listener';

export const usage = 'usage: gensee oci-listener --socket PATH [--policy-dir DIR] [--policy FILE] [--state-dir DIR] [--json]';

export async function run(argv: string[]): Promise<number> {
  const { values } = parse(argv, {
    socket: { type: 'string' },
    'policy-dir': { type: 'string' },
    policy: { type: 'string' },
    json: { type: 'boolean' },
  }, false);
  if (values.flags.has('help')) {
    out(usage);
    return 0;
  }
  if (!values.socket) throw new GenseeError('E_USAGE', `--socket PATH is required; ${usage}`);
  if (process.getuid && process.getuid() !== 0) throw new GenseeError('E_NOT_ROOT', 'gensee oci-listener needs root (cgroups, BPF, seccomp listener)');
  const json = values.flags.has('json');
  const stateDir = resolveStateDir(values['state-dir']);
  const listener = await OciListener.open({
    socketPath: values.socket,
    stateDir,
    policyDir: values['policy-dir'],
    policyFile: values.policy,
    json,
    say: out,
  });
  const policy = values.policy ?? 'deny-all';
  out(
    json
      ? JSON.stringify({ event: 'listening', socket: listener.socketPath, state_dir: stateDir, policy_dir: values['policy-dir'] ?? null, policy })
      : `gensee: oci-listener on ${listener.socketPath}; state ${stateDir}; policy ${values['policy-dir'] ? `${values['policy-dir']}/<op>.json, else ` : ''}${policy}`,
  );
  await new Promise<void>((resolve) => {
    const stop = () => resolve();
    process.once('SIGTERM', stop);
    process.once('SIGINT', stop);
  });
  await listener.close();
  const st = listener.stats;
  out(
    json
      ? JSON.stringify({ event: 'shutdown', connections: st.connections, attached: st.attached, refused: st.refused })
      : `gensee: oci-listener stopped: ${st.connections} connections, ${st.attached} attached, ${st.refused} refused`,
  );
  return 0;
}
