// One line of a workload's own event stream (schema/agent-event.schema.json),
// as `gensee watch --agent-events FILE|-` reads it. The `at` a line carries is
// the workload's claim: it is checked for form, never used for timing (the
// watchdog times everything on gensee's receive clock).
import { validateAgentEvent } from '../gen/validators';
import { formatAjvError } from '../protocol/json';

export const AGENT_EVENT_TYPES = ['tool_result', 'message', 'question', 'turn_end', 'progress'] as const;
export type AgentEventType = (typeof AGENT_EVENT_TYPES)[number];

/** what a tool's error says was refused */
export interface Denial {
  /** the class of thing refused, e.g. network, file, write */
  class: string;
  /** what the refusal told the workload to do instead */
  hint: string;
  target?: string;
}

export type AgentEvent =
  | { type: 'tool_result'; tool_id: string; errored: boolean; denial?: Denial; target?: string; at: string }
  | { type: 'message'; from: 'person' | 'agent'; at: string }
  | { type: 'question'; at: string }
  | { type: 'turn_end'; at: string }
  | { type: 'progress'; at: string };

/** one line longer than this is refused before it is parsed */
export const MAX_AGENT_LINE = 64 * 1024;

/**
 * Parse and validate one line. Returns the event, or an error naming the
 * field (`/from: must be one of "person"|"agent"`). Never throws.
 */
export function parseAgentEvent(line: string): { event: AgentEvent } | { error: string } {
  if (line.length > MAX_AGENT_LINE) return { error: `line longer than ${MAX_AGENT_LINE} characters` };
  let v: unknown;
  try {
    v = JSON.parse(line);
  } catch (e) {
    return { error: `not JSON: ${(e as Error).message}` };
  }
  if (validateAgentEvent(v)) return { event: v as AgentEvent };
  const type = v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>).type : undefined;
  const idx = AGENT_EVENT_TYPES.indexOf(type as AgentEventType);
  if (idx < 0) {
    if (v === null || typeof v !== 'object' || Array.isArray(v)) return { error: '/: must be an object' };
    return { error: `/type: must be one of ${AGENT_EVENT_TYPES.map((t) => JSON.stringify(t)).join('|')}` };
  }
  // the validators stop at a branch's first failing keyword, so a failed
  // oneOf lists one error per branch, in the schema's order, then its own:
  // the branch named by `type` says what is wrong with this line
  const errs = validateAgentEvent.errors ?? [];
  const e = errs.length === AGENT_EVENT_TYPES.length + 1 ? errs[idx] : errs[errs.length - 1];
  return { error: e ? formatAjvError(e, v) : '/: invalid' };
}
