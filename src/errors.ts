// Stable error codes: every CLI refusal and every deny reason is a code a
// user can grep for. Add new codes here, never inline strings elsewhere.

/**
 * The executor refused a tool's write at call time (src/executor): no
 * gensee-supplied key, a key that is not the call's, a handle of another call.
 */
export const EXECUTOR_DENY_REASONS = ['write_key_missing', 'write_key_mismatch', 'handle_forged'] as const;
export type ExecutorDenyReason = (typeof EXECUTOR_DENY_REASONS)[number];

/** Deny reasons (closed enum, snake_case) — DESIGN.md "Actions". */
export const DENY_REASONS = [
  'invalid_subject',
  'subject_not_in_operation',
  'operation_not_active',
  'unknown_operation',
  'policy_denied',
  'capability_fault_backend_unavailable',
  'backend_error',
  'malformed_fault',
  'unauthenticated_peer',
  'timeout',
  ...EXECUTOR_DENY_REASONS,
  // a fault the resolver died with, closed by whoever took over (src/evidence/abandon.ts); never sent
  'abandoned',
  // a call that waited past fault_deadline_ms while no resolver ran, drained after a restart (src/resolver/takeover.ts)
  'resolver_restarted',
] as const;
export type DenyReason = (typeof DENY_REASONS)[number];

/**
 * CLI / library error codes, each with the one exit status the CLI gives it:
 * 2 = bad usage or input (nothing changed), 1 = a runtime failure. The status
 * belongs to the code, never to the call site that throws it.
 */
export const EXIT_STATUS = {
  E_USAGE: 2,
  E_BAD_ADDRESS: 2,
  E_BAD_PORT: 2,
  E_BAD_PROTOCOL: 2,
  E_BAD_DURATION: 2,
  E_BAD_COUNT: 2,
  E_BAD_ANCHOR: 2,
  E_BAD_OP_ID: 2,
  E_UNKNOWN_OP: 2,
  E_OP_EXISTS: 2,
  E_NOT_CGROUP2: 2,
  E_SYMLINK: 2,
  E_BAD_JSON: 2,
  E_SCHEMA: 2,
  E_TOO_LARGE: 2,
  E_NOT_FILE: 2,
  E_BAD_MODE: 2,
  /** `gensee rm`/`prune` of an operation that has not ended (served, failing closed, hooks attached, processes in its cgroup) */
  E_OP_LIVE: 2,
  /** an operation of another owner, and the caller is not root */
  E_NOT_OWNER: 2,
  E_NO_CGROUP2: 1,
  E_NO_BPFFS: 1,
  E_NOT_ROOT: 1,
  E_KERNEL: 1,
  E_ADDON_MISSING: 1,
  E_STATE: 1,
  E_SOCKET_IN_USE: 1,
  /** `gensee policy suggest` on an operation that has no evidence to suggest from */
  E_NO_EVIDENCE: 2,
  /** evidence that fails `gensee verify`: nothing is derived from it */
  E_VERIFY: 1,
  /** a policy with host rules where no DNS stub serves them (the OCI listener) */
  E_HOST_RULES: 2,
  /** a container that exited before the listener finished taking it over */
  E_CONTAINER_GONE: 1,
} as const satisfies Record<string, 1 | 2>;
export type ErrorCode = keyof typeof EXIT_STATUS;

export class GenseeError extends Error {
  readonly code: ErrorCode;
  /** exit status for the CLI, from EXIT_STATUS */
  readonly exitCode: 1 | 2;
  constructor(code: ErrorCode, message: string) {
    super(message);
    this.name = 'GenseeError';
    this.code = code;
    this.exitCode = EXIT_STATUS[code];
  }
}

export function isErrno(e: unknown): e is NodeJS.ErrnoException {
  return e instanceof Error && typeof (e as NodeJS.ErrnoException).code === 'string';
}
