// Stable error codes: every CLI refusal and every deny reason is a code a
// user can grep for. Add new codes here, never inline strings elsewhere.

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
  // the executor refused a tool's write at call time (src/executor): no
  // gensee-supplied key, a key that is not the call's, a handle of another call
  'write_key_missing',
  'write_key_mismatch',
  'handle_forged',
  // a fault the resolver died with, closed by whoever took over (src/evidence/abandon.ts); never sent
  'abandoned',
] as const;
export type DenyReason = (typeof DENY_REASONS)[number];

/** CLI / library error codes. */
export type ErrorCode =
  | 'E_USAGE'
  | 'E_BAD_ADDRESS'
  | 'E_BAD_PORT'
  | 'E_BAD_PROTOCOL'
  | 'E_BAD_DURATION'
  | 'E_BAD_COUNT'
  | 'E_BAD_ANCHOR'
  | 'E_BAD_OP_ID'
  | 'E_UNKNOWN_OP'
  | 'E_OP_EXISTS'
  | 'E_NOT_CGROUP2'
  | 'E_NO_CGROUP2'
  | 'E_NO_BPFFS'
  | 'E_NOT_ROOT'
  | 'E_SYMLINK'
  | 'E_BAD_JSON'
  | 'E_SCHEMA'
  | 'E_KERNEL'
  | 'E_ADDON_MISSING'
  | 'E_STATE'
  | 'E_TOO_LARGE'
  | 'E_NOT_FILE'
  | 'E_BAD_MODE'
  | 'E_NO_EVIDENCE'
  | 'E_VERIFY';

export class GenseeError extends Error {
  readonly code: ErrorCode;
  /** exit status for the CLI: 2 = bad usage or input (nothing changed), 1 = runtime failure */
  readonly exitCode: number;
  constructor(code: ErrorCode, message: string, exitCode = 2) {
    super(message);
    this.name = 'GenseeError';
    this.code = code;
    this.exitCode = exitCode;
  }
}

export function isErrno(e: unknown): e is NodeJS.ErrnoException {
  return e instanceof Error && typeof (e as NodeJS.ErrnoException).code === 'string';
}
