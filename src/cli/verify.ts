// gensee verify --op ID [--json]: prove nothing was removed or edited in the
// evidence logs; every fault has its resolution. Non-zero exit on a problem.
import { parse, requireOp, out } from './args';
import { resolveStateDir, openOperation } from '../state/operation';
import { verifyOperation } from '../evidence/verify';

export const usage = 'usage: gensee verify --op ID [--json]';

export async function run(argv: string[]): Promise<number> {
  const { values } = parse(argv, { op: { type: 'string' }, json: { type: 'boolean' } }, false);
  const op = requireOp(values.op);
  const stateDir = resolveStateDir(values['state-dir']);
  await openOperation(stateDir, op); // unknown op → E_UNKNOWN_OP, exit 2
  const rep = await verifyOperation(stateDir, op);
  if (values.flags.has('json')) {
    out(JSON.stringify(rep));
    return rep.ok ? 0 : 1;
  }
  for (const l of rep.logs) {
    const errors = l.problems.filter((p) => p.severity === 'error').length;
    out(`${l.file}: ${l.lines} lines, ${errors === 0 ? 'ok' : `${errors} problem(s)`}; last hash ${l.last_hash.slice(0, 16)}…`);
    for (const p of l.problems) out(`  ${l.file}:${p.line}: ${p.severity} ${p.kind}: ${p.detail}`);
  }
  for (const m of rep.missing) out(`${m}: not written yet`);
  out(rep.ok ? `verify ${op}: ok` : `verify ${op}: FAILED`);
  return rep.ok ? 0 : 1;
}
