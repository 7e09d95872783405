// gensee prune --older-than DUR [--archive DIR | --delete-evidence]
// [--dry-run] [--json]: remove every ended operation (closed or stopped)
// that ended longer ago than DUR, as `gensee rm` would, one by one. Root
// prunes every owner's; anyone else only their own. Active operations are
// never candidates; an ended one still holding kernel state or processes
// is skipped with the reason. Exit 1 when a removal failed.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { parse, out } from './args';
import { durationMs, DURATION_FORMS } from '../duration';
import { GenseeError, isErrno } from '../errors';
import { OPERATIONS_DIR, isValidOpId, openOperation, resolveStateDir } from '../state/operation';
import { assertNoSymlinks } from '../state/fsutil';
import { endedAt, recordHousekeeping, removeOperation, Removed } from '../state/remove';
import { evidenceFate, hooksProbe } from './rm';

export const usage = 'usage: gensee prune --older-than DURATION [--archive DIR | --delete-evidence] [--dry-run] [--json]';

interface Skipped {
  op: string;
  code: string;
  message: string;
}

export async function run(argv: string[]): Promise<number> {
  const { values } = parse(argv, { 'older-than': { type: 'string' }, archive: { type: 'string' }, 'delete-evidence': { type: 'boolean' }, 'dry-run': { type: 'boolean' }, json: { type: 'boolean' } }, false);
  const olderThan = values['older-than'];
  if (olderThan === undefined) throw new GenseeError('E_USAGE', '--older-than DURATION is required (e.g. 7d): prune never removes everything by default');
  const ms = durationMs(olderThan);
  if (ms === null || !(ms > 0)) throw new GenseeError('E_BAD_DURATION', `bad --older-than "${olderThan}": expected ${DURATION_FORMS}, more than 0`);
  const fate = evidenceFate(values);
  const stateDir = resolveStateDir(values['state-dir']);
  const dryRun = values.flags.has('dry-run');
  const json = values.flags.has('json');
  const cutoff = Date.now() - ms;
  const me = process.geteuid ? process.geteuid() : 0;
  const dir = path.join(stateDir, OPERATIONS_DIR);
  let names: string[] = [];
  try {
    assertNoSymlinks(dir);
    names = fs.readdirSync(dir);
  } catch (e) {
    if (!(isErrno(e) && (e.code === 'ENOENT' || e.code === 'EACCES'))) throw e;
  }
  const probe = await hooksProbe();
  const removed: Removed[] = [];
  const skipped: Skipped[] = [];
  let failed = 0;
  for (const op of names.filter(isValidOpId).sort()) {
    let rec;
    try {
      rec = await openOperation(stateDir, op);
    } catch (e) {
      // not readable by us (another owner's) or damaged: not a candidate, said once
      const code = e instanceof GenseeError ? e.code : ((e as NodeJS.ErrnoException).code ?? 'error');
      if (code !== 'EACCES') skipped.push({ op, code, message: (e as Error).message });
      continue;
    }
    if (rec.state === 'active' || (me !== 0 && rec.owner_uid !== me)) continue;
    if (Date.parse(endedAt(rec)) > cutoff) continue;
    try {
      const r = await removeOperation(stateDir, op, { ...fate, dryRun, by: 'gensee prune', hooksAttached: probe });
      removed.push(r);
      recordHousekeeping(stateDir, { action: 'prune', op, outcome: dryRun ? 'dry_run' : 'removed', evidence: r.evidence, to: r.to });
    } catch (e) {
      const code = e instanceof GenseeError ? e.code : ((e as NodeJS.ErrnoException).code ?? 'error');
      if (code !== 'E_OP_LIVE') failed++;
      skipped.push({ op, code, message: (e as Error).message });
      recordHousekeeping(stateDir, { action: 'prune', op, outcome: 'refused', code, message: (e as Error).message });
    }
  }
  if (json) {
    out(JSON.stringify({ event: dryRun ? 'would_prune' : 'pruned', state_dir: stateDir, older_than: olderThan, removed, skipped }));
  } else {
    for (const r of removed) out(`${dryRun ? 'would remove' : 'removed'} ${r.op} (${r.state} at ${r.ended_at})${r.evidence === 'delete' ? ', evidence deleted' : `, evidence in ${r.to}`}`);
    for (const s of skipped) out(`skipped ${s.op}: ${s.code}: ${s.message}`);
    out(`${dryRun ? 'would remove' : 'removed'} ${removed.length} operation${removed.length === 1 ? '' : 's'} ended more than ${olderThan} ago${skipped.length ? `, skipped ${skipped.length}` : ''}`);
  }
  return failed ? 1 : 0;
}
