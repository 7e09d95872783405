// gensee policy apply --op ID FILE [--json]
// Hand a new policy to the running supervisor of an operation over its
// control socket (src/counters/control.ts). The supervisor makes it a new
// generation: counters harvested, leases the new policy still allows moved
// into it, the others revoked, all under traffic without losing or double
// counting a call. The file is checked here first (no symlinks, ≤ 64 KiB,
// schema) so a bad file never reaches the supervisor.
import * as path from 'node:path';
import { parse, requireOp, out } from './args';
import { GenseeError } from '../errors';
import { POLICY_MAX_BYTES } from '../supervisor';
import { readFileNoFollow } from '../state/fsutil';
import { parsePolicy } from '../protocol/json';
import { openOperation, opDir, readKey, resolveStateDir } from '../state/operation';
import { CONTROL_SOCKET, controlRequest } from '../counters/control';

export const usage = 'usage: gensee policy apply --op ID FILE [--json]';

export async function run(argv: string[]): Promise<number> {
  const sub = argv[0];
  const { values, positionals } = parse(argv.slice(1), { op: { type: 'string' }, json: { type: 'boolean' } });
  if (values.flags.has('help') || sub === '--help' || sub === '-h') {
    out(usage);
    return 0;
  }
  if (sub !== 'apply' || positionals.length !== 1) throw new GenseeError('E_USAGE', usage);
  const op = requireOp(values.op);
  const stateDir = resolveStateDir(values['state-dir']);
  const file = path.resolve(positionals[0]);
  const bytes = await readFileNoFollow(file, POLICY_MAX_BYTES);
  const text = bytes.toString('utf8');
  try {
    parsePolicy(JSON.parse(text));
  } catch (e) {
    if (e instanceof SyntaxError) throw new GenseeError('E_BAD_JSON', `policy ${positionals[0]}: not JSON: ${e.message}`);
    throw e;
  }
  const rec = await openOperation(stateDir, op);
  if (rec.state !== 'active') throw new GenseeError('E_STATE', `operation ${op} is ${rec.state}`, 1);
  const key = await readKey(stateDir, op);
  const r = await controlRequest({
    socketPath: path.join(opDir(stateDir, op), CONTROL_SOCKET),
    key,
    resolver: rec.resolver,
    request: { schema: 1, command: 'policy_apply', policy_text: text },
  });
  if (values.flags.has('json')) out(JSON.stringify(r));
  else out(`policy applied to ${op}: generation ${String(r.generation)} (${String(r.retagged)} leases moved to it, ${String(r.carried)} kept, ${String(r.revoked)} revoked)`);
  return 0;
}
