// gensee hooks attach --op ID --cgroup PATH | gensee hooks detach --op ID
import { parse, requireOp, out } from './args';
import { resolveCgroupPath } from '../cgroup';
import { attachHooks, detachHooks } from '../dataplane';
import { GenseeError } from '../errors';

export const usage = `usage: gensee hooks attach --op ID --cgroup PATH [--no-events]
       gensee hooks detach --op ID`;

export function run(argv: string[]): number {
  const sub = argv[0];
  if (sub === 'attach') {
    const { values } = parse(argv.slice(1), { op: { type: 'string' }, cgroup: { type: 'string' }, 'no-events': { type: 'boolean' } }, false);
    const op = requireOp(values.op);
    if (!values.cgroup) throw new GenseeError('E_USAGE', '--cgroup PATH is required');
    const cg = resolveCgroupPath(values.cgroup);
    const pin = attachHooks(op, cg, { emitEvents: !values.flags.has('no-events') });
    out(`attached connect4 connect6 sendmsg4 sendmsg6 to ${cg}; pinned at ${pin}`);
    return 0;
  }
  if (sub === 'detach') {
    const { values } = parse(argv.slice(1), { op: { type: 'string' } }, false);
    const op = requireOp(values.op);
    if (!detachHooks(op)) throw new GenseeError('E_UNKNOWN_OP', `unknown operation "${op}": no hooks are pinned for it`);
    out(`detached and unpinned operation ${op}`);
    return 0;
  }
  throw new GenseeError('E_USAGE', usage);
}
