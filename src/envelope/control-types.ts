// The control socket's request as it arrives (src/envelope/control.ts
// decodes it from proto/gensee/v2/control.proto), the command its handler
// gets once control.ts has parsed and checked its arguments, and who sent it.
import type { Tuple } from '../addr';
import type { Policy } from '../protocol/types';

export interface ControlPeer {
  pid: number;
  uid: number;
}

export type ControlRequest =
  | { schema: 1; command: 'policy_apply'; policy_text: string }
  | { schema: 1; command: 'lease_add'; protocol: string; address: string; port: number; ttl_ms: number; max_uses: number }
  | { schema: 1; command: 'lease_rm'; protocol: string; address: string; port: number }
  | { schema: 1; command: 'attention_raise'; signature: string; detail: string; evidence: number[]; refs: string[]; agent_events: string }
  | { schema: 1; command: 'attention_clear'; by: string; person: string; note: string }
  | { schema: 1; command: 'executor_tool'; cgroup_id: string; tool_id: string; call_id: string }
  | { schema: 1; command: 'executor_denial'; tool_id: string; call_id: string; reason: string; target: string; detail: string; pid: number };

/** the commands that are not the envelope's (events.jsonl, the executor's records): the supervisor's */
export type SupervisorCommand = Extract<ControlRequest, { command: 'attention_raise' | 'attention_clear' | 'executor_tool' | 'executor_denial' }>;

/** a change of the envelope, its arguments parsed and checked (control.ts parseCommand) */
export type EnvelopeCommand =
  | { command: 'policy_apply'; policy: Policy; hash: string }
  | { command: 'lease_add'; tuple: Tuple; ttlMs: number; maxUses: number }
  | { command: 'lease_rm'; tuple: Tuple };

/** Carries out one command; its result is the reply's fields. A GenseeError's code is the reply's error code. */
export type ControlHandler = (cmd: EnvelopeCommand | SupervisorCommand, peer: ControlPeer) => Promise<Record<string, unknown>>;

/** handlers by command name for the commands that are not the envelope's; ControlServer dispatches to them */
export type ControlRoutes = { [C in SupervisorCommand['command']]?: (cmd: Extract<SupervisorCommand, { command: C }>, peer: ControlPeer) => Promise<Record<string, unknown>> };
