// The control socket's request as its handler sees it (src/counters/control.ts
// decodes it from proto/gensee/v2/control.proto), and who sent it.

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

/** Carries out one request; its result is the reply's fields. A GenseeError's code is the reply's error code. */
export type ControlHandler = (req: ControlRequest, peer: ControlPeer) => Promise<Record<string, unknown>>;
