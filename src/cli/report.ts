// gensee report --op ID [--format text|markdown|json|junit] [--out FILE]
// The job's summary for a person and for CI (src/report/report.ts): mode,
// policy, destinations reached by name and address with counts, everything
// refused with its control, faults and leases, boundary events, attention,
// and whether the evidence passes verify. Read-only; exit 0 even when the
// report shows refusals (gensee run --fail-on-deny is the gate), 1 when the
// evidence fails verify.
import * as fs from 'node:fs';
import { parse, requireOp, out } from './args';
import { resolveStateDir } from '../state/operation';
import { buildReport, parseFormat, renderReport, REPORT_FORMATS } from '../report/report';

export const usage = `usage: gensee report --op ID [--format ${REPORT_FORMATS.join('|')}] [--out FILE]`;

export async function run(argv: string[]): Promise<number> {
  const { values } = parse(argv, { op: { type: 'string' }, format: { type: 'string' }, out: { type: 'string' } }, false);
  const op = requireOp(values.op);
  const format = parseFormat(values.format);
  const r = await buildReport(resolveStateDir(values['state-dir']), op);
  const text = renderReport(r, format);
  if (values.out !== undefined) fs.writeFileSync(values.out, text, { mode: 0o644 });
  else {
    out(text.replace(/\n$/, ''));
  }
  return r.evidence.ok ? 0 : 1;
}
