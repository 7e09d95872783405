// gensee doctor [--json]: what this kernel and host give gensee, each
// feature tried (src/doctor.ts): present, a fallback (which), or missing
// (then `gensee run` refuses). Exit 0 when nothing required is missing, 1
// otherwise.
import { parse, out } from './args';
import { doctor, DoctorReport } from '../doctor';
import { GenseeError } from '../errors';

export const usage = 'usage: gensee doctor [--json]';

export function run(argv: string[]): number {
  const { values } = parse(argv, { json: { type: 'boolean' } }, false);
  const rep = doctor();
  if (values.flags.has('json')) {
    out(JSON.stringify(rep));
    return rep.failing.length ? 1 : 0;
  }
  out(`gensee doctor: Linux ${rep.kernel}`);
  const w = Math.max(...rep.findings.map((f) => f.name.length));
  for (const f of rep.findings) {
    const mark = f.status === 'present' ? 'ok      ' : f.status === 'fallback' ? 'fallback' : f.required ? 'MISSING ' : 'missing ';
    out(`  ${mark} ${f.name.padEnd(w)}  ${f.what} (Linux ${f.since}): ${f.observed}${f.note ? ` — ${f.note}` : ''}`);
  }
  out(rep.failing.length ? `gensee run cannot work here: ${rep.failing.join(', ')} missing` : 'gensee run can work here');
  return rep.failing.length ? 1 : 0;
}

/** for `gensee run`: refuse with doctor's finding when a required feature is missing */
export function requireKernelFeatures(rep: DoctorReport = doctor()): void {
  if (!rep.failing.length) return;
  const what = rep.findings
    .filter((f) => rep.failing.includes(f.name))
    .map((f) => `${f.name} (${f.what}, Linux ${f.since}: ${f.observed})`)
    .join('; ');
  throw new GenseeError('E_KERNEL', `this kernel lacks what gensee run needs: ${what}; see gensee doctor`);
}
