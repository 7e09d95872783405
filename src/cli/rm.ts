// gensee rm --op ID [--archive DIR | --delete-evidence] [--json]: free an
// ended operation's id (src/state/remove.ts). A live operation is refused
// (E_OP_LIVE, with the command that ends it); another user's is refused
// unless root (E_NOT_OWNER). The evidence is kept under
// <state>/archived-operations/ unless --archive DIR or --delete-evidence
// says otherwise. Every removal and refusal goes to housekeeping.jsonl.
import { parse, requireOp, out } from './args';
import { GenseeError } from '../errors';
import { resolveStateDir } from '../state/operation';
import { EvidenceFate, recordHousekeeping, removeOperation } from '../state/remove';

export const usage = 'usage: gensee rm --op ID [--archive DIR | --delete-evidence] [--dry-run] [--json]';

/** --archive / --delete-evidence, at most one */
export function evidenceFate(values: { [k: string]: string | undefined } & { flags: Set<string> }): { evidence: EvidenceFate; archiveTo?: string } {
  const del = values.flags.has('delete-evidence');
  const archive = values.archive;
  if (del && archive !== undefined) throw new GenseeError('E_USAGE', '--archive DIR and --delete-evidence exclude each other: the evidence is either moved or deleted');
  if (archive !== undefined) {
    if (archive === '') throw new GenseeError('E_USAGE', '--archive DIR must not be empty');
    return { evidence: 'archive', archiveTo: archive };
  }
  return { evidence: del ? 'delete' : 'keep' };
}

/** lazily: the addon is only needed to tell whether hooks are attached */
export async function hooksProbe(): Promise<(op: string) => boolean | null> {
  try {
    const { hooksAttached } = await import('../dataplane');
    return (op) => {
      try {
        return hooksAttached(op);
      } catch {
        return null; // cannot tell (not root, no bpffs)
      }
    };
  } catch {
    return () => null;
  }
}

export async function run(argv: string[]): Promise<number> {
  const { values } = parse(argv, { op: { type: 'string' }, archive: { type: 'string' }, 'delete-evidence': { type: 'boolean' }, 'dry-run': { type: 'boolean' }, json: { type: 'boolean' } }, false);
  const stateDir = resolveStateDir(values['state-dir']);
  const dryRun = values.flags.has('dry-run');
  let r;
  let op: string | null = values.op ?? null;
  try {
    op = requireOp(values.op);
    const fate = evidenceFate(values);
    r = await removeOperation(stateDir, op, { ...fate, dryRun, by: 'gensee rm', hooksAttached: await hooksProbe() });
  } catch (e) {
    // every refusal is recorded, a bad id as it was given (JSON-escaped)
    const code = e instanceof GenseeError ? e.code : ((e as NodeJS.ErrnoException).code ?? 'error');
    const why = recordHousekeeping(stateDir, { action: 'rm', op, outcome: 'refused', code, message: (e as Error).message });
    if (why && e instanceof GenseeError) throw new GenseeError(e.code, `${e.message} (the refusal could not be recorded: ${why})`);
    throw e;
  }
  const why = recordHousekeeping(stateDir, { action: 'rm', op, outcome: dryRun ? 'dry_run' : 'removed', evidence: r.evidence, to: r.to });
  if (values.flags.has('json')) {
    out(JSON.stringify({ event: dryRun ? 'would_remove' : 'removed', ...r, recorded: why === null }));
  } else {
    const where = r.evidence === 'delete' ? 'its evidence deleted' : `its evidence ${dryRun ? 'would be' : 'is'} in ${r.to}`;
    out(`${dryRun ? 'would remove' : 'removed'} operation ${op} (${r.state} at ${r.ended_at}): ${where}; the id ${op} ${dryRun ? 'would be' : 'is'} free`);
    if (why) out(`note: the removal could not be recorded in housekeeping.jsonl: ${why}`);
  }
  return 0;
}
