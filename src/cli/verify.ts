// gensee verify --op ID [--anchor [FILE:]LINE:HASH]... [--json]: prove
// nothing was removed or edited in the evidence logs; every fault has its
// resolution. Non-zero exit on a problem. The chain cannot show lines cut off
// the end of a log: an anchor (a line and its hash, as an earlier verify
// printed them, kept elsewhere) can.
import { parse, requireOp, out } from './args';
import { resolveStateDir, openOperation } from '../state/operation';
import { Anchor, LogFile, parseAnchor, verifyOperation } from '../evidence/verify';
import { GenseeError } from '../errors';

export const usage = 'usage: gensee verify --op ID [--anchor [FILE:]LINE:HASH]... [--json]';

export async function run(argv: string[]): Promise<number> {
  const { values } = parse(argv, { op: { type: 'string' }, json: { type: 'boolean' }, anchor: { type: 'string', multiple: true } }, false);
  const op = requireOp(values.op);
  const anchors: Partial<Record<LogFile, Anchor>> = {};
  for (const spec of values.lists.anchor ?? []) {
    const { file, anchor } = parseAnchor(spec);
    if (anchors[file]) throw new GenseeError('E_BAD_ANCHOR', `two anchors for ${file}: one per log`);
    anchors[file] = anchor;
  }
  const stateDir = resolveStateDir(values['state-dir']);
  const rec = await openOperation(stateDir, op); // unknown op → E_UNKNOWN_OP, exit 2
  const rep = await verifyOperation(stateDir, op, anchors);
  if (values.flags.has('json')) {
    out(JSON.stringify({ ...rep, mode: rec.mode }));
    return rep.ok ? 0 : 1;
  }
  for (const l of rep.logs) {
    const errors = l.problems.filter((p) => p.severity === 'error').length;
    // the last line and its hash, in the form --anchor takes back later
    const last = l.lines ? `; last line ${l.file}:${l.lines}:${l.last_hash}` : '';
    const abandoned = l.abandoned ? `, ${l.abandoned} fault(s) abandoned by a resolver that died` : '';
    out(`${l.file}: ${l.lines} lines, ${errors === 0 ? 'ok' : `${errors} problem(s)`}${abandoned}${last}`);
    if (l.anchor) out(`  anchor line ${l.anchor.line} ${l.anchor.ok ? 'holds' : 'FAILS'}`);
    for (const p of l.problems) out(`  ${l.file}:${p.line}: ${p.severity} ${p.kind}: ${p.detail}`);
  }
  for (const m of rep.missing) out(`${m}: not written yet`);
  // audit evidence must never be read as enforcement: said on the last line
  const mode = rec.mode === 'audit' ? ' (audit mode: faults.jsonl records audit_allowed for what enforcing would deny)' : '';
  out(rep.ok ? `verify ${op}: ok${mode}` : `verify ${op}: FAILED${mode}`);
  return rep.ok ? 0 : 1;
}
