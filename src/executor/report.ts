// How the executor puts what it saw into the operation's records: the
// supervisor is the one writer of faults.jsonl and events.jsonl, so these
// go to it over control.sock (authenticated both ways, like `gensee lease add`).
import { controlRequestTo } from '../envelope/control';
import type { ExecutorDenyReason } from '../errors';

/**
 * A tool process for call `callId` runs in cgroup `cgroupId` (its own,
 * under the operation's): hook refusals from it name the tool.
 */
export async function registerToolCgroup(stateDir: string, op: string, t: { cgroupId: bigint; toolId: string; callId: string }): Promise<void> {
  await controlRequestTo(stateDir, op, { schema: 1, command: 'executor_tool', cgroup_id: String(t.cgroupId), tool_id: t.toolId, call_id: t.callId });
}

export type WriteDenialReason = ExecutorDenyReason;

/**
 * A write refused at call time: recorded as an application-effect fault
 * denied (faults.jsonl) and a write_denied event naming the tool
 * (events.jsonl). Resolves to the fault id.
 */
export async function reportWriteDenied(
  stateDir: string,
  op: string,
  d: { toolId: string; callId: string; reason: WriteDenialReason; target: string; detail: string; pid: number },
): Promise<string> {
  const r = await controlRequestTo(stateDir, op, {
    schema: 1,
    command: 'executor_denial',
    tool_id: d.toolId,
    call_id: d.callId,
    reason: d.reason,
    target: d.target,
    detail: d.detail,
    pid: d.pid,
  });
  return String(r.fault_id ?? '');
}
