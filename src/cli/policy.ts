// gensee policy apply --op ID FILE [--json]
// gensee policy check FILE [--json]
//
// check: every problem with the file (schema and semantic: CIDR host bits,
// host names, a host rule's port cap), one per line as `<json pointer>:
// <message>` on stdout, exit 2 on any; "ok" and 0 when valid. Needs no
// operation, no state directory and no privilege.
//
// apply: hand a new policy to the running supervisor of an operation over its
// control socket (src/envelope/control.ts). The supervisor makes it a new
// generation: counters harvested, leases the new policy still allows moved
// into it, the others revoked, all under traffic without losing or double
// counting a call. The file is checked here first (no symlinks, ≤ 64 KiB,
// schema) so a bad file never reaches the supervisor.
import * as path from 'node:path';
import { parse, requireOp, out, parseCount } from './args';
import { GenseeError, isErrno } from '../errors';
import { POLICY_MAX_BYTES } from '../supervisor';
import { readFileNoFollow } from '../state/fsutil';
import { checkPolicy, parsePolicy, type Problem } from '../protocol/json';
import { openOperation, resolveStateDir } from '../state/operation';
import { controlRequestTo } from '../envelope/control';
import { suggestPolicy } from '../report/suggest';

export const usage =
  'usage: gensee policy apply --op ID FILE [--json]\n       gensee policy check FILE [--json]\n       gensee policy suggest --op ID [--from ID]... [--merge FILE] [--min-uses N]';

/** `gensee policy suggest`: the policy the operations' evidence needs, on stdout (src/report/suggest.ts) */
async function suggest(argv: string[]): Promise<number> {
  const { values } = parse(argv, { op: { type: 'string' }, from: { type: 'string', multiple: true }, merge: { type: 'string' }, 'min-uses': { type: 'string' } }, false);
  const ops = [requireOp(values.op), ...(values.lists.from ?? []).map((x) => requireOp(x))];
  const minUses = values['min-uses'] !== undefined ? parseCount(values['min-uses'], '--min-uses') : 1;
  let merge: { file: string; text: string } | undefined;
  if (values.merge !== undefined) {
    const text = await readPolicyFile(values.merge);
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch (e) {
      throw new GenseeError('E_BAD_JSON', `--merge ${values.merge}: not JSON: ${(e as Error).message}`);
    }
    const problems = await checkPolicy(parsed);
    if (problems.length) throw new GenseeError('E_SCHEMA', `--merge ${values.merge}: ${problems.map((p) => `${p.pointer}: ${p.message}`).join('; ')}`);
    merge = { file: values.merge, text };
  }
  const r = await suggestPolicy({ stateDir: resolveStateDir(values['state-dir']), ops: [...new Set(ops)], merge, minUses });
  out(JSON.stringify(r.policy, null, 2));
  process.stderr.write(`gensee: ${r.added} rule(s) suggested from ${ops.join(', ')}${r.left_out ? `; ${r.left_out} used fewer than ${minUses} time(s) left out` : ''}\n`);
  return 0;
}

/** The policy file's bytes as `apply` reads them: no symlinks, at most POLICY_MAX_BYTES. */
async function readPolicyFile(file: string): Promise<string> {
  return (await readFileNoFollow(path.resolve(file), POLICY_MAX_BYTES)).toString('utf8');
}

/** `gensee policy check FILE`: every problem, with its pointer; 2 on any. */
async function check(file: string, json: boolean): Promise<number> {
  let text: string;
  try {
    text = await readPolicyFile(file);
  } catch (e) {
    // a file that cannot be read is bad input too (2), said in one line
    if (isErrno(e) && !(e instanceof GenseeError)) throw new GenseeError('E_NOT_FILE', `policy ${file}: cannot read: ${e.code ?? 'error'}`);
    throw e;
  }
  let problems: Problem[];
  try {
    problems = await checkPolicy(JSON.parse(text));
  } catch (e) {
    if (!(e instanceof SyntaxError)) throw e;
    problems = [{ pointer: '/', message: `not JSON: ${e.message}` }];
  }
  if (json) out(JSON.stringify({ file, ok: problems.length === 0, errors: problems }));
  else if (problems.length === 0) out('ok');
  else {
    for (const p of problems) out(`${p.pointer}: ${p.message}`);
    process.stderr.write(`gensee: E_SCHEMA: policy ${file}: ${problems.length} error${problems.length === 1 ? '' : 's'}\n`);
  }
  return problems.length === 0 ? 0 : 2;
}

export async function run(argv: string[]): Promise<number> {
  const sub = argv[0];
  if (sub === 'suggest') return suggest(argv.slice(1));
  const { values, positionals } = parse(argv.slice(1), { op: { type: 'string' }, json: { type: 'boolean' } });
  if (values.flags.has('help') || sub === '--help' || sub === '-h') {
    out(usage);
    return 0;
  }
  if (sub === 'check') {
    if (positionals.length !== 1 || values.op !== undefined) throw new GenseeError('E_USAGE', 'usage: gensee policy check FILE [--json]');
    return check(positionals[0], values.flags.has('json'));
  }
  if (sub !== 'apply' || positionals.length !== 1) throw new GenseeError('E_USAGE', usage);
  const op = requireOp(values.op);
  const stateDir = resolveStateDir(values['state-dir']);
  const text = await readPolicyFile(positionals[0]);
  try {
    parsePolicy(JSON.parse(text));
  } catch (e) {
    if (e instanceof SyntaxError) throw new GenseeError('E_BAD_JSON', `policy ${positionals[0]}: not JSON: ${e.message}`);
    throw e;
  }
  const rec = await openOperation(stateDir, op);
  if (rec.state !== 'active') throw new GenseeError('E_STATE', `operation ${op} is ${rec.state}`);
  const r = await controlRequestTo(stateDir, op, { schema: 1, command: 'policy_apply', policy_text: text }, rec);
  if (values.flags.has('json')) out(JSON.stringify(r));
  else out(`policy applied to ${op}: generation ${String(r.generation)} (${String(r.retagged)} leases moved to it, ${String(r.carried)} kept, ${String(r.revoked)} revoked)`);
  return 0;
}
