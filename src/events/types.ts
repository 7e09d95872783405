// Boundary events and the lines of events.jsonl (docs/design.md, "Boundary
// events"). An event records that a control refused something; it is
// reporting only and grants nothing.

/** the closed set of boundary event kinds */
export const BOUNDARY_KINDS = [
  'egress_denied',
  'fault_denied',
  'fault_delegated',
  'peer_refused',
  'frame_rejected',
  'write_denied',
  'dns_denied',
  'records_lost',
] as const;
export type BoundaryKind = (typeof BOUNDARY_KINDS)[number];

/** schema/boundary-event.schema.json */
export interface BoundaryEvent {
  kind: BoundaryKind;
  /** the control or rule that decided, e.g. ebpf/connect4, resolver/policy_denied, policy/delegate */
  control: string;
  /** one line, redacted, at most 300 characters */
  detail: string;
  /** host:port, [v6]:port or a path, when the control can name one */
  target?: string;
  /** RFC 3339 UTC, when the control decided */
  at: string;
}

/** the three watchdog signatures */
export type Signature = 'hint_loop' | 'stall' | 'control_defeat';

/** what clears attention */
export type ClearedBy = 'person_message' | 'operation_stopped';

/** the fields of one events.jsonl line, before the chain adds seq, at and prev */
export type EventFields =
  | { type: 'boundary'; event: BoundaryEvent; tool_id?: string; fault_id?: string }
  | { type: 'suppressed'; count: number; second: string; low_space?: true; evidence_failed?: true }
  | { type: 'attention'; signature: Signature; detail: string; evidence: number[] }
  | { type: 'attention_cleared'; by: ClearedBy };

/** the logs of an operation that the live stream carries */
export const STREAM_LOGS = ['faults', 'counters', 'events'] as const;
export type LogName = (typeof STREAM_LOGS)[number];
