// gensee watch --op ID --agent-events FILE|- : the watchdog (DESIGN.md "The
// watchdog"). Follows the operation's own logs (events.jsonl, faults.jsonl,
// counters.jsonl) and the workload's event stream, feeds the pure signature
// module (src/watch/signatures.ts) on gensee's receive clock (monotonic), and
//   - prints nudges and flags as JSON lines on stdout, for the harness to inject;
//   - reports attention as an error line on stderr and, through the
//     supervisor (the one writer of events.jsonl, over control.sock), as an
//     `attention` line. Its refs name the agent's own lines as
//     "agent:LINE:SHA256" (the line's number in the stream and the SHA-256 of
//     its text), with the stream named in the line's `agent_events`, so a
//     person finds the evidence on both sides. A supervisor that is not
//     serving (a restart) gets it once it serves again.
// Attention is open as events.jsonl says: read back at start (a watch
// restart keeps it), cleared only by an attention_cleared line (`gensee
// attention clear`, or the operation ending for good). Nothing in the agent
// stream clears it: that stream is the workload's.
// Ends when the operation has ended for good (operation.json: closed or
// stopped) once a FILE has been read, or when stdin has closed and no
// supervisor serves the operation; or on SIGINT/SIGTERM. A supervisor
// restart is not an end: the watch carries on.
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as readline from 'node:readline';
import { performance } from 'node:perf_hooks';
import { createHash } from 'node:crypto';
import { parse, requireOp, parseDuration, out } from './args';
import { GenseeError, isErrno } from '../errors';
import { openOperation, opDir, resolveStateDir } from '../state/operation';
import { reportAttention } from '../events/attention-client';
import { readOpenAttention, readSpentEvidence } from '../events/log';
import { Watchdog, Output, Attention, DEFAULT_MAX_NUDGES, DEFAULT_NUDGE_EVERY_MS, DEFAULT_STALL_AFTER_MS } from '../watch/signatures';
import { parseAgentEvent, MAX_AGENT_LINE } from '../watch/agent-event';
import { LineTail } from '../watch/tail';
import { LogFeed, LogLine, WatchedLog, appendOrder } from '../watch/feed';

export const usage = `usage: gensee watch --op ID --agent-events FILE|- [--stall-after DUR] [--max-nudges N]
                    [--nudge-every DUR] [--from-start]
  --agent-events FILE|-  the workload's own events (JSONL, schema/agent-event.schema.json);
                         FILE is read from its start and followed as it grows, - is stdin
  --stall-after DUR      no events at all for DUR: a stall nudge, then the stalled flag (default ${DEFAULT_STALL_AFTER_MS / 1000}s)
  --max-nudges N         hint-loop nudges before nudges_exhausted (default ${DEFAULT_MAX_NUDGES})
  --nudge-every DUR      the hint-loop nudge period, counted from the progress before the loop (default ${DEFAULT_NUDGE_EVERY_MS / 1000}s)
  --from-start           read the operation's logs from their first line (default: from their end)
Nudges and flags: JSON lines on stdout. Attention: stderr, and an attention line in events.jsonl,
open until a person runs \`gensee attention clear --op ID\` or the operation ends for good.`;

const LOGS: readonly WatchedLog[] = ['faults', 'events', 'counters'];
/** how often the files are polled and time is ticked */
const POLL_MS = 200;
/** how often operation.json is read to see whether the operation still runs */
const STATE_EVERY_MS = 1000;
/** a gensee log line is at most this long (faults lines carry a fault: well under) */
const MAX_LOG_LINE = 1 << 20;
/** how long between attempts to hand attention to a supervisor that does not answer (a restart) */
const REPORT_RETRY_MS = 1000;

function parseMaxNudges(s: string): number {
  if (!/^[0-9]{1,4}$/.test(s)) throw new GenseeError('E_BAD_COUNT', `bad --max-nudges "${s}": expected an integer 0-9999`);
  return Number(s);
}

function err(line: string): void {
  process.stderr.write(`gensee: watch: ${line}\n`);
}

function attentionLine(a: Attention): string {
  const ev = a.evidence.length ? `; evidence events ${a.evidence.join(', ')}` : '';
  const refs = a.refs?.length ? `; refs ${a.refs.join(' ')}` : '';
  return `gensee: E_ATTENTION: ${a.signature}: ${a.detail}${ev}${refs}`;
}

/**
 * The operation as operation.json has it: ended for good (closed, stopped,
 * or a record that cannot be read), served (a resolver is recorded), or
 * neither (a supervisor restarting, or none yet: the watch waits).
 */
async function condition(stateDir: string, op: string): Promise<'ended' | 'served' | 'unserved'> {
  try {
    const rec = await openOperation(stateDir, op);
    if (rec.state !== 'active') return 'ended';
    return rec.resolver !== null ? 'served' : 'unserved';
  } catch (e) {
    if (e instanceof GenseeError) return 'ended';
    throw e;
  }
}

/** "agent:LINE:SHA256": a line of the agent's stream, found again by its number and its text */
export function agentRef(line: number, text: string): string {
  return `agent:${line}:${createHash('sha256').update(text, 'utf8').digest('hex')}`;
}

export async function run(argv: string[]): Promise<number> {
  const { values } = parse(
    argv,
    {
      op: { type: 'string' },
      'agent-events': { type: 'string' },
      'stall-after': { type: 'string' },
      'max-nudges': { type: 'string' },
      'nudge-every': { type: 'string' },
      'from-start': { type: 'boolean' },
    },
    false,
  );
  const op = requireOp(values.op);
  const agentSrc = values['agent-events'];
  if (agentSrc === undefined || agentSrc === '') throw new GenseeError('E_USAGE', '--agent-events FILE|- is required');
  const stateDir = resolveStateDir(values['state-dir']);
  const opts = {
    stallAfterMs: values['stall-after'] !== undefined ? parseDuration(values['stall-after']) : DEFAULT_STALL_AFTER_MS,
    maxNudges: values['max-nudges'] !== undefined ? parseMaxNudges(values['max-nudges']) : DEFAULT_MAX_NUDGES,
    nudgeEveryMs: values['nudge-every'] !== undefined ? parseDuration(values['nudge-every']) : DEFAULT_NUDGE_EVERY_MS,
  };
  await openOperation(stateDir, op); // unknown operation, loose modes: refused here, before anything is read
  const dir = opDir(stateDir, op);
  const fromStart = values.flags.has('from-start');

  // gensee's receive clock: monotonic, never the time a line claims
  const clock = () => performance.now();
  const wd = new Watchdog(clock(), opts);
  const feed = new LogFeed(wd);
  const tails = LOGS.map((log) => ({ log, tail: new LineTail(path.join(dir, `${log}.jsonl`), { fromStart, maxLine: MAX_LOG_LINE }) }));

  // evidence already spent by attention in the file: read again from the start, it does not flag twice
  if (fromStart) wd.spend(await readSpentEvidence(path.join(dir, 'events.jsonl')));
  // what attention is open already (a watch restart): the file says, nothing else
  for (const a of await readOpenAttention(path.join(dir, 'events.jsonl'))) {
    wd.attentionLogged(a.seq, a.signature);
    err(`attention in force since events:${a.seq} (${a.signature}): ${a.detail}; gensee attention clear --op ${op} clears it`);
  }

  // attention goes to the supervisor one at a time, in order; while no
  // supervisor serves (a restart) it waits, until the operation ends
  let reports: Promise<void> = Promise.resolve();
  let opState: 'ended' | 'served' | 'unserved' = 'served';
  let stopping = false;
  const toSupervisor = (what: string, f: () => Promise<number>, onLost: () => void) => {
    reports = reports.then(async () => {
      for (;;) {
        try {
          await f();
          return;
        } catch (e) {
          const unserved = e instanceof GenseeError && e.code === 'E_STATE';
          if (!unserved || opState === 'ended' || stopping) {
            err(`could not record ${what} in events.jsonl: ${(e as Error).message}`);
            onLost();
            return;
          }
          await new Promise((r) => setTimeout(r, REPORT_RETRY_MS));
        }
      }
    });
  };
  const agentEvents = agentSrc === '-' ? '-' : path.resolve(agentSrc);

  const emit = (outs: Output[]) => {
    for (const o of outs) {
      switch (o.type) {
        case 'nudge':
        case 'flag':
          out(JSON.stringify(o));
          break;
        case 'attention': {
          process.stderr.write(attentionLine(o) + '\n');
          const { signature, detail, evidence, refs } = o;
          const agent = refs?.some((r) => r.startsWith('agent:')) ? { agent_events: agentEvents } : {};
          // not in the record, it holds nothing back: nobody could clear it
          toSupervisor('attention', () => reportAttention(stateDir, op, { signature, detail, evidence, ...(refs ? { refs } : {}), ...agent }), () => wd.notRecorded(o));
          break;
        }
        case 'attention_cleared':
          // as events.jsonl records it: the watch itself never clears
          err(`attention cleared (${o.by}${o.person !== undefined ? ` ${o.person}` : ''}${o.note ? `: ${o.note}` : ''})`);
          break;
      }
    }
  };

  // the workload's stream
  let agentEnded = false;
  let agentLine = 0;
  const onAgentLine = (text: string, n: number) => {
    if (text.trim() === '') return;
    const r = parseAgentEvent(text);
    if ('error' in r) {
      err(`agent-events line ${n}: ${r.error}`);
      return;
    }
    emit(wd.agent(r.event, clock(), agentRef(n, text)));
  };
  let agentTail: LineTail | null = null;
  let rl: readline.Interface | null = null;
  if (agentSrc === '-') {
    rl = readline.createInterface({ input: process.stdin, crlfDelay: Infinity });
    rl.on('line', (text) => {
      agentLine++;
      if (text.length > MAX_AGENT_LINE) err(`agent-events line ${agentLine}: longer than ${MAX_AGENT_LINE} characters`);
      else onAgentLine(text, agentLine);
    });
    rl.on('close', () => {
      agentEnded = true;
    });
  } else {
    let st: fs.Stats;
    try {
      st = fs.lstatSync(agentSrc);
    } catch (e) {
      if (isErrno(e) && e.code === 'ENOENT') throw new GenseeError('E_USAGE', `--agent-events: no such file: ${agentSrc}`);
      throw e;
    }
    if (st.isSymbolicLink()) throw new GenseeError('E_SYMLINK', `refusing symlink at ${agentSrc}`);
    if (!st.isFile()) throw new GenseeError('E_NOT_FILE', `--agent-events: not a regular file: ${agentSrc} (use - for a pipe)`);
    agentTail = new LineTail(agentSrc, { fromStart: true, maxLine: MAX_AGENT_LINE });
  }

  // One poll: gensee's logs first, then the agent's lines. Which came first
  // among lines read in one poll cannot be known; taking a refusal as before
  // the agent's report of a success is the side a workload cannot exploit
  // (writing its success right after the refusal would otherwise hide it).
  const pollAll = () => {
    const batch: LogLine[] = [];
    for (const { log, tail } of tails) {
      for (const l of tail.poll()) {
        try {
          const v = JSON.parse(l.text) as unknown;
          if (v && typeof v === 'object' && !Array.isArray(v)) batch.push({ log, v: v as Record<string, unknown> });
        } catch {
          err(`${log}.jsonl line ${l.n}: not JSON (gensee verify --op ${op} says more)`);
        }
      }
      for (const n of tail.takeSkipped()) err(`${log}.jsonl line ${n}: longer than ${MAX_LOG_LINE} bytes, skipped`);
    }
    const now = clock();
    for (const l of appendOrder(batch)) emit(feed.line(l, now));
    if (agentTail) {
      for (const l of agentTail.poll()) onAgentLine(l.text, l.n);
      for (const n of agentTail.takeSkipped()) err(`agent-events line ${n}: longer than ${MAX_AGENT_LINE} characters`);
    }
    emit(wd.tick(clock()));
  };

  let wake: (() => void) | null = null;
  const onSignal = () => {
    stopping = true;
    wake?.();
  };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  try {
    let nextState = 0;
    while (!stopping) {
      pollAll();
      if (clock() >= nextState) {
        nextState = clock() + STATE_EVERY_MS;
        const was = opState;
        opState = await condition(stateDir, op);
        if (opState === 'ended') {
          if (was !== 'ended') {
            pollAll(); // what the operation wrote before it ended (its attention_cleared among it)
            emit(wd.operationStopped());
          }
          // a FILE is followed for as long as the operation lives; stdin until it closes
          if (agentTail || agentEnded) break;
        } else if (opState === 'unserved' && agentEnded) {
          break; // stdin has closed and nobody serves the operation: nothing more will come
        }
      }
      await new Promise<void>((r) => {
        wake = r;
        setTimeout(r, POLL_MS);
      });
      wake = null;
    }
  } finally {
    process.removeListener('SIGINT', onSignal);
    process.removeListener('SIGTERM', onSignal);
    if (rl) {
      rl.close();
      process.stdin.destroy();
    }
    agentTail?.close();
    for (const { tail } of tails) tail.close();
    await reports;
  }
  return 0;
}
