// The pause-mode half of the addon (typed in src/addon.ts): creating a
// Notifier, the lease pin it reads, and the errnos a paused call is refused
// with.
import * as os from 'node:os';
import * as path from 'node:path';
import { loadAddon, Addon } from '../addon';
import type { PausedCall, NotifierOptions, Notifier } from '../addon';

export type {
  NotifySyscall,
  PausedCall,
  NotifierStats,
  PauseVerdict,
  NotifierOptions,
  SupervisorAnswer,
  SupervisorClientOptions,
  Notifier,
  FdWatcher,
} from '../addon';

/** the addon, for its pause-mode half (addon/notify_glue.cc) */
export function pauseAddon(): Addon {
  return loadAddon();
}

const E = os.constants.errno;

/**
 * What a paused call sees when it is not let through. Distinct from the
 * eBPF hook's EPERM, so an application (and a person reading strace) can
 * tell "the resolver said no" from "no lease when the call ran".
 */
export const REFUSAL_ERRNO = {
  /** resolution `deny` */
  deny: E.EACCES,
  /** resolution `delegate`: another executor performs it; this path is closed */
  delegate: E.ECONNREFUSED,
  /** no authenticated answer within fault_deadline_ms */
  timeout: E.ETIMEDOUT,
  /** the notifier was closed with the call still paused */
  shutdown: E.EACCES,
} as const;

/** The kernel's own answer when the listener is gone with a call paused. */
export const LISTENER_GONE_ERRNO = E.ENOSYS;

export function leasesPinPath(pinDir: string): string {
  return path.join(pinDir, 'gs_leases_v1');
}

export function createNotifier(
  listenerFd: number,
  pinDir: string,
  onFault: (f: PausedCall) => void,
  opts: NotifierOptions = {},
): Notifier {
  const { Notifier } = pauseAddon();
  return new Notifier(listenerFd, leasesPinPath(pinDir), onFault, opts);
}
