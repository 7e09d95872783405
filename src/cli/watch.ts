// gensee watch --op ID --agent-events FILE|- : the watchdog (DESIGN.md "The
// watchdog"). Follows the operation's own logs (events.jsonl, faults.jsonl,
// counters.jsonl) and the workload's event stream, feeds the pure signature
// module (src/watch/signatures.ts) on gensee's receive clock (monotonic), and
//   - prints nudges and flags as JSON lines on stdout, for the harness to inject;
//   - reports attention as an error line on stderr and, through the
//     supervisor (the one writer of events.jsonl, over control.sock), as an
//     `attention` line; a person's message clears it the same way.
// Ends when the agent input has ended (stdin closed; a FILE is followed until
// the operation ends) and the operation is no longer running (operation.json
// records no resolver), or on SIGINT/SIGTERM.
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as readline from 'node:readline';
import { performance } from 'node:perf_hooks';
import { parse, requireOp, parseDuration, out } from './args';
import { GenseeError, isErrno } from '../errors';
import { openOperation, opDir, resolveStateDir } from '../state/operation';
import { reportAttention, clearAttention } from '../events/attention-client';
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
Nudges and flags: JSON lines on stdout. Attention: stderr, and an attention line in events.jsonl.`;

const LOGS: readonly WatchedLog[] = ['faults', 'events', 'counters'];
/** how often the files are polled and time is ticked */
const POLL_MS = 200;
/** how often operation.json is read to see whether the operation still runs */
const STATE_EVERY_MS = 1000;
/** a gensee log line is at most this long (faults lines carry a fault: well under) */
const MAX_LOG_LINE = 1 << 20;
/** attempts to hand one attention to the supervisor, a second apart */
const REPORT_ATTEMPTS = 5;

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

/** Is the operation still served (operation.json names a resolver)? An unreadable record counts as ended. */
async function running(stateDir: string, op: string): Promise<boolean> {
  try {
    const rec = await openOperation(stateDir, op);
    return rec.resolver !== null && rec.state === 'active';
  } catch (e) {
    if (e instanceof GenseeError) return false;
    throw e;
  }
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

  // attention goes to the supervisor one at a time, in order
  let reports: Promise<void> = Promise.resolve();
  let opRunning = true;
  const toSupervisor = (what: string, f: () => Promise<number>) => {
    reports = reports.then(async () => {
      for (let i = 1; ; i++) {
        try {
          await f();
          return;
        } catch (e) {
          if (i >= REPORT_ATTEMPTS || !opRunning) {
            err(`could not record ${what} in events.jsonl: ${(e as Error).message}`);
            return;
          }
          await new Promise((r) => setTimeout(r, 1000));
        }
      }
    });
  };

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
          toSupervisor('attention', () => reportAttention(stateDir, op, { signature, detail, evidence, ...(refs ? { refs } : {}) }));
          break;
        }
        case 'attention_cleared':
          err(`attention cleared (${o.by})`);
          // the supervisor records attention_cleared {by: operation_stopped} itself when the operation ends
          if (o.by === 'person_message') toSupervisor('attention_cleared', () => clearAttention(stateDir, op, 'person_message'));
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
    emit(wd.agent(r.event, clock(), `agent:${n}`));
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

  const pollAll = () => {
    if (agentTail) {
      for (const l of agentTail.poll()) onAgentLine(l.text, l.n);
      for (const n of agentTail.takeSkipped()) err(`agent-events line ${n}: longer than ${MAX_AGENT_LINE} characters`);
    }
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
    emit(wd.tick(clock()));
  };

  let stopping = false;
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
        const was = opRunning;
        opRunning = await running(stateDir, op);
        if (!opRunning) {
          if (was) {
            pollAll(); // what the operation wrote before it ended
            emit(wd.operationStopped());
          }
          // a FILE is followed for as long as the operation runs; stdin until it closes
          if (agentTail || agentEnded) break;
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
