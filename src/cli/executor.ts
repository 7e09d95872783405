// gensee executor call --op ID --tools MODULE TOOL --args JSON [--call-id ID] [--json]
// gensee executor recover --op ID --tools MODULE [--json]
// One tool call through the executor (journaled, run inside the operation's
// boundary, its writes performed with the gensee-supplied key), or the
// recovery of calls a crashed executor left started. Exit 0: the call
// completed / every started call reached a state; 1: the call failed or was
// refused, or a call is still started; 2: bad usage.
import { parse, requireOp, out } from './args';
import { GenseeError } from '../errors';
import { resolveStateDir } from '../state/operation';
import { executorCall, executorRecover, CallOutcome, RecoverReport } from '../executor/executor';
import { parseDuration } from './args';

export const usage = `usage: gensee executor call --op ID --tools MODULE TOOL --args JSON [--call-id ID] [--timeout DURATION] [--json]
       gensee executor recover --op ID --tools MODULE [--json]`;

function parseArgsJson(s: string | undefined): unknown {
  if (s === undefined) throw new GenseeError('E_USAGE', `--args JSON is required: ${usage.split('\n')[0]}`);
  try {
    return JSON.parse(s);
  } catch (e) {
    throw new GenseeError('E_BAD_JSON', `--args is not JSON: ${(e as Error).message}`);
  }
}

function callText(o: CallOutcome): string {
  const lines = [`call ${o.call_id}: ${o.tool_id} (${o.class}) ${o.state}`];
  if (o.key) lines.push(`  key ${o.key}`);
  if (o.request_id) lines.push(`  request id ${o.request_id}`);
  for (const w of o.writes) {
    if (w.outcome === 'performed') lines.push(`  write ${w.method} ${w.target} → ${w.status}`);
    else if (w.outcome === 'denied') lines.push(`  write to ${w.target || '?'} DENIED ${w.reason}: ${w.detail}${w.fault_id ? ` (fault ${w.fault_id})` : ''}`);
    else lines.push(`  write to ${w.target || '?'} failed: ${w.detail}`);
  }
  if (o.state === 'completed') lines.push(`  result ${JSON.stringify(o.result)}`);
  else lines.push(`  error ${o.error}`);
  return lines.join('\n');
}

function recoverText(r: RecoverReport): string {
  if (r.calls.length === 0) return `operation ${r.op}: no call left started`;
  const lines = [`operation ${r.op}: ${r.calls.length} call(s) left started`];
  for (const c of r.calls) lines.push(`  ${c.call_id} ${c.tool_id} (${c.class}): ${c.state}${c.detail ? ` — ${c.detail}` : ''}`);
  return lines.join('\n');
}

export async function run(argv: string[]): Promise<number> {
  const [sub, ...rest] = argv;
  if (sub !== 'call' && sub !== 'recover') throw new GenseeError('E_USAGE', usage);
  const { values, positionals } = parse(rest, {
    op: { type: 'string' },
    tools: { type: 'string' },
    json: { type: 'boolean' },
    ...(sub === 'call' ? { args: { type: 'string' }, 'call-id': { type: 'string' }, timeout: { type: 'string' } } : {}),
  });
  const op = requireOp(values.op);
  if (!values.tools) throw new GenseeError('E_USAGE', `--tools MODULE is required: ${usage}`);
  const stateDir = resolveStateDir(values['state-dir']);
  const json = values.flags.has('json');
  if (process.getuid && process.getuid() !== 0) throw new GenseeError('E_NOT_ROOT', 'gensee executor needs root (the tool runs in its own cgroup through gensee-exec)');
  if (sub === 'call') {
    if (positionals.length !== 1) throw new GenseeError('E_USAGE', `name exactly one TOOL: ${usage.split('\n')[0]}`);
    const args = parseArgsJson(values.args);
    const o = await executorCall({
      stateDir,
      op,
      toolsModule: values.tools,
      toolId: positionals[0],
      args,
      callId: values['call-id'],
      timeoutMs: values.timeout !== undefined ? parseDuration(values.timeout) : undefined,
    });
    out(json ? JSON.stringify({ ...o, stderr: undefined }) : callText(o));
    if (o.stderr.trim() && !json) process.stderr.write(o.stderr.endsWith('\n') ? o.stderr : o.stderr + '\n');
    return o.state === 'completed' ? 0 : 1;
  }
  if (positionals.length > 0) throw new GenseeError('E_USAGE', `recover takes no TOOL: ${usage.split('\n')[1].trim()}`);
  const r = await executorRecover({ stateDir, op, toolsModule: values.tools });
  out(json ? JSON.stringify(r) : recoverText(r));
  return r.ok ? 0 : 1;
}
