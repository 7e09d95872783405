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
export const SIGNATURES = ['hint_loop', 'stall', 'control_defeat'] as const;
export type Signature = (typeof SIGNATURES)[number];
export function isSignature(s: unknown): s is Signature {
  return (SIGNATURES as readonly unknown[]).includes(s);
}

/**
 * what clears attention: a person through the operator path (`gensee
 * attention clear`, over control.sock), or the operation ending for good
 */
export type ClearedBy = 'person' | 'operation_stopped';

/** who cleared attention, when a person did: the name they gave, why, and the authenticated peer */
export interface ClearedWho {
  /** the name given with --by (default: the peer's user name); a claim, the peer's uid is the fact */
  person: string;
  /** why, one line (redacted), may be empty */
  note: string;
  /** SO_PEERCRED of the control.sock client */
  peer: { pid: number; uid: number };
}

/** the fields of one events.jsonl line, before the chain adds seq, at and prev */
export type EventFields =
  | { type: 'boundary'; event: BoundaryEvent; tool_id?: string; fault_id?: string }
  | { type: 'suppressed'; count: number; second: string; tools?: Record<string, number>; low_space?: true; evidence_failed?: true }
  | { type: 'attention'; signature: Signature; detail: string; evidence: number[]; refs?: string[]; agent_events?: string }
  | ({ type: 'attention_cleared'; by: 'person'; attention: number[] } & ClearedWho)
  | { type: 'attention_cleared'; by: 'operation_stopped'; attention: number[] };

/** the logs of an operation that the live stream carries */
export const STREAM_LOGS = ['faults', 'counters', 'events'] as const;
export type LogName = (typeof STREAM_LOGS)[number];
