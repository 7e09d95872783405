// gensee attention clear --op ID [--by NAME] [--note TEXT] [--json]: a person
// clears the watchdog's attention in force (DESIGN.md "The watchdog"). It
// goes to the running supervisor over control.sock, which admits only an
// operator (root or the operation's owner, outside the operation's cgroup),
// and is recorded as one attention_cleared line in events.jsonl with who
// (the name given, and the peer's uid and pid) and why (the note). This is
// the only way a person clears attention: a line in the workload's own
// event stream never is one.
import * as os from 'node:os';
import { parse, requireOp, out } from './args';
import { GenseeError } from '../errors';
import { resolveStateDir, openOperation } from '../state/operation';
import { clearAttention } from '../events/attention-client';

export const usage = `usage: gensee attention clear --op ID [--by NAME] [--note TEXT] [--json]
  --by NAME    who is clearing it (default: your user name); recorded with your uid
  --note TEXT  why, one line of at most 300 characters`;

const PRINTABLE = /^[^\u0000-\u001f\u007f]*$/;

function userName(): string {
  try {
    return os.userInfo().username || `uid ${process.getuid?.() ?? '?'}`;
  } catch {
    return `uid ${process.getuid?.() ?? '?'}`;
  }
}

export async function run(argv: string[]): Promise<number> {
  const sub = argv[0];
  if (sub !== 'clear') throw new GenseeError('E_USAGE', sub === undefined ? usage : `unknown subcommand "${sub}"; ${usage.split('\n')[0]}`);
  const { values } = parse(argv.slice(1), { op: { type: 'string' }, by: { type: 'string' }, note: { type: 'string' }, json: { type: 'boolean' } }, false);
  const op = requireOp(values.op);
  const person = values.by ?? userName();
  const note = values.note ?? '';
  if (person === '' || person.length > 100 || !PRINTABLE.test(person)) throw new GenseeError('E_USAGE', '--by: 1-100 printable characters');
  if (note.length > 300 || !PRINTABLE.test(note)) throw new GenseeError('E_USAGE', '--note: one line of at most 300 characters');
  const stateDir = resolveStateDir(values['state-dir']);
  const rec = await openOperation(stateDir, op);
  if (rec.state !== 'active') throw new GenseeError('E_STATE', `operation ${op} is ${rec.state}: its attention was cleared when it ended`);
  let r: Awaited<ReturnType<typeof clearAttention>>;
  try {
    r = await clearAttention(stateDir, op, { person, note });
  } catch (e) {
    // the one writer of events.jsonl is the supervisor: without one, nothing can be recorded
    if (e instanceof GenseeError && e.code === 'E_STATE' && !/refused/.test(e.message)) {
      throw new GenseeError('E_STATE', `${e.message}; attention is cleared through a running supervisor (gensee supervise --op ${op} …), or ends with the operation (gensee stop --op ${op})`);
    }
    throw e;
  }
  if (values.flags.has('json')) {
    out(JSON.stringify({ op, seq: r.seq, cleared: r.cleared, by: 'person', person, note }));
  } else if (r.seq === 0) {
    out(`gensee: operation ${op} has no attention in force; nothing cleared`);
  } else {
    out(`gensee: cleared attention ${r.cleared.map((s) => `events:${s}`).join(', ')} of operation ${op} (events:${r.seq}, by ${person}${note ? `: ${note}` : ''})`);
  }
  return 0;
}
