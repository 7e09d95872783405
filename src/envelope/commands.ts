// control.sock's commands that belong to the operation rather than its
// envelope: attention raised by `gensee watch` or cleared by a person, and
// the executor's records (a tool's cgroup, a denial). Each is checked here,
// recorded durably, then answered.
import { EXECUTOR_DENY_REASONS, GenseeError, type ExecutorDenyReason } from '../errors';
import type { ChainedLog } from '../evidence/chain';
import type { EventLog } from '../events/log';
import type { ToolCgroups } from '../events/reporter';
import { isSignature } from '../events/types';
import type { Fault } from '../protocol/types';
import type { Resolver } from '../resolver/resolver';
import { readStartTimeTicks } from '../resolver/subject';
import type { ControlPeer, ControlRequest, ControlRoutes, SupervisorCommand } from './control-types';

const EXECUTOR_REASONS: ReadonlySet<string> = new Set(EXECUTOR_DENY_REASONS);
let executorDenials = 0;

/** what the operation's own commands act on */
export interface OperationCommandTargets {
  events: EventLog;
  tools: ToolCgroups;
  resolver: Resolver;
  op: string;
  faults: ChainedLog;
}

/**
 * control.sock's commands that are not the envelope's: attention from
 * `gensee watch` (src/events/attention-client.ts), and the executor's
 * records (src/executor/report.ts). control.ts dispatches them here by
 * command name (ControlServer's routes); the envelope never sees them.
 */
export function operationCommands(s: OperationCommandTargets): ControlRoutes {
  const run = (req: SupervisorCommand, peer: ControlPeer) => Promise.resolve(operationCommand(s, req, peer));
  return { attention_raise: run, attention_clear: run, executor_tool: run, executor_denial: run };
}

function operationCommand(s: OperationCommandTargets, req: SupervisorCommand, peer: ControlPeer): Record<string, unknown> | Promise<Record<string, unknown>> {
  switch (req.command) {
    case 'attention_raise':
    case 'attention_clear':
      return attentionCommand(s.events, req, peer);
    case 'executor_tool': {
      if (!/^[1-9][0-9]{0,19}$/.test(req.cgroup_id)) throw new GenseeError('E_SCHEMA', `executor_tool: bad cgroup_id ${JSON.stringify(req.cgroup_id)}`);
      if (!req.tool_id || !req.call_id) throw new GenseeError('E_SCHEMA', 'executor_tool: tool_id and call_id are required');
      if (req.tool_id.length > 200 || req.call_id.length > 200) throw new GenseeError('E_SCHEMA', 'executor_tool: tool_id and call_id are at most 200 characters');
      s.tools.set(req.cgroup_id, { tool_id: req.tool_id, call_id: req.call_id });
      // durable before the tool starts: faults.jsonl alone maps the cgroup to the tool
      const ticket = s.faults.appendTicket({ kind: 'tool_cgroup', cgroup_id: req.cgroup_id, tool_id: req.tool_id, call_id: req.call_id, peer }, { sync: true });
      return s.faults.whenDurable(ticket).then(() => ({ registered: true }));
    }
    case 'executor_denial': {
      if (!EXECUTOR_REASONS.has(req.reason)) throw new GenseeError('E_SCHEMA', `executor_denial: unknown reason ${JSON.stringify(req.reason)}`);
      if (!req.tool_id || !req.call_id) throw new GenseeError('E_SCHEMA', 'executor_denial: tool_id and call_id are required');
      const start = req.pid ? readStartTimeTicks(req.pid) : null;
      const fault: Fault = {
        schema: 2,
        operation_id: s.op,
        fault_id: `ex-${req.call_id}-${process.pid}-${++executorDenials}`,
        subject: { process: { pid: req.pid, start_time_ticks: start ?? 0 } },
        effect: { application: { name: req.tool_id, action: 'write', target: req.target } },
        source: 'executor',
        observed_at_boot_ns: 0n,
        cgroup_id: 0n,
      };
      const reason = req.reason as ExecutorDenyReason;
      return s.resolver
        .recordDecided(fault, { fault_id: fault.fault_id, action: 'deny', reason }, { via: 'socket', socket: 'control.sock' })
        .then(() => ({ fault_id: fault.fault_id }));
    }
  }
}

/** a ref to gensee's own logs (LOG:SEQ), or to a line of the agent's stream (agent:LINE:SHA256 of the line) */
const REF_RE = /^(?:(?:faults|counters|events):[1-9][0-9]{0,14}|agent:[1-9][0-9]{0,14}:[0-9a-f]{64})$/;
/** a name or note from `gensee attention clear`: one line, printable */
const PRINTABLE_RE = /^[^\u0000-\u001f\u007f]*$/;

/**
 * control.sock's attention commands: `gensee watch` raising
 * (src/events/attention-client.ts), a person clearing (`gensee attention
 * clear`). Only an operator reaches control.sock: the peer admission
 * refuses any process of the operation's cgroup, so the workload can
 * neither raise nor clear.
 */
function attentionCommand(
  events: EventLog,
  req: Extract<ControlRequest, { command: 'attention_raise' | 'attention_clear' }>,
  peer: ControlPeer,
): Promise<Record<string, unknown>> {
  // acknowledged once the line is durable: a person's clearing is recorded before it is answered
  const durable = (r: Record<string, unknown>) => events.flushNow().then(() => r);
  if (req.command === 'attention_clear') {
    if (req.by !== 'person') throw new GenseeError('E_SCHEMA', `attention_clear: by must be person, not ${JSON.stringify(req.by)}`);
    if (!req.person || req.person.length > 100 || !PRINTABLE_RE.test(req.person)) throw new GenseeError('E_SCHEMA', 'attention_clear: person must be 1-100 printable characters');
    if (req.note.length > 300 || !PRINTABLE_RE.test(req.note)) throw new GenseeError('E_SCHEMA', 'attention_clear: note must be one line of at most 300 characters');
    const cleared = [...events.openAttentionSeqs];
    const seq = events.clearAttention('person', { person: req.person, note: req.note, peer: { pid: peer.pid, uid: peer.uid } });
    return durable({ seq, cleared });
  }
  if (!isSignature(req.signature)) {
    throw new GenseeError('E_SCHEMA', `attention_raise: unknown signature ${JSON.stringify(req.signature)}`);
  }
  if (!req.detail) throw new GenseeError('E_SCHEMA', 'attention_raise: detail is empty');
  if (req.evidence.length > 64 || req.refs.length > 64) throw new GenseeError('E_SCHEMA', 'attention_raise: at most 64 evidence entries and 64 refs');
  if (req.evidence.some((n) => !Number.isSafeInteger(n) || n < 1 || n > events.seq)) throw new GenseeError('E_SCHEMA', 'attention_raise: evidence must be seqs of lines in events.jsonl');
  if (req.refs.some((r) => !REF_RE.test(r))) throw new GenseeError('E_SCHEMA', 'attention_raise: refs must be LOG:SEQ (faults, counters, events) or agent:LINE:SHA256');
  const agentRefs = req.refs.some((r) => r.startsWith('agent:'));
  if (agentRefs && !req.agent_events) throw new GenseeError('E_SCHEMA', 'attention_raise: agent: refs need agent_events (the file they point into, or -)');
  if (req.agent_events.length > 1024 || !PRINTABLE_RE.test(req.agent_events)) throw new GenseeError('E_SCHEMA', 'attention_raise: agent_events must be a path of at most 1024 printable characters');
  return durable({ seq: events.raiseAttention(req.signature, req.detail, req.evidence, req.refs, req.agent_events || undefined) });
}
