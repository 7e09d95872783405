// When the envelope's readings run (envelope.ts): every interval, and
// earlier at a lease's expiry when it comes before the next periodic
// reading — but never sooner than EXPIRY_GAP of the interval after the
// previous reading: under a steady stream of leases one expires every few
// milliseconds, and a reading at each expiry ran them back to back (each
// O(live leases), ~30 a second in the soak, all on the event loop that
// answers faults). Spaced, the expiries of a quarter period share one
// reading (and one lease_expired generation), and removal still lags
// expiry by less than a period. A clock, like setTimeout: it runs the
// reading it was built with and calls nothing else.
import { bootNs } from '../dataplane';

/** an expiry reading waits at least this share of the interval after the previous reading began */
export const EXPIRY_GAP = 0.25;

export class ReadingSchedule {
  private readonly intervalMs: number;
  private readonly read: () => Promise<void>;
  private readonly onError: (e: Error) => void;
  private timer: NodeJS.Timeout | null = null;
  /** an extra reading at the next lease expiry, when it comes before the next periodic one */
  private expiryTimer: NodeJS.Timeout | null = null;
  private expiryAt = 0n;
  private nextTickAt = 0;
  /** when the last reading this schedule ran began (Date.now()) */
  private lastReadAt = 0;
  private stopped = false;

  constructor(intervalMs: number, read: () => Promise<void>, onError: (e: Error) => void) {
    this.intervalMs = intervalMs;
    this.read = read;
    this.onError = onError;
  }

  /** the periodic readings, from one interval from now */
  start(): void {
    if (this.stopped) return;
    this.nextTickAt = Date.now() + this.intervalMs;
    this.timer = setTimeout(() => {
      this.timer = null;
      this.nextTickAt = Date.now() + this.intervalMs;
      this.lastReadAt = Date.now();
      this.read()
        .catch((e: Error) => this.onError(e))
        .finally(() => this.start());
    }, this.intervalMs);
    this.timer.unref();
  }

  /**
   * Expired leases are refused by the hook at the exact instant; removing and
   * recording them waits for a reading. When a lease expires before the next
   * periodic reading, read at its expiry instead (or EXPIRY_GAP after the
   * previous reading, when that is later), so removal never lags by a whole
   * period.
   */
  expiry(expiresBootNs: bigint): void {
    if (this.stopped || expiresBootNs === 0n) return;
    if (this.expiryTimer && this.expiryAt <= expiresBootNs) return;
    const now = Date.now();
    const ms = Math.max(Number(expiresBootNs - bootNs()) / 1e6 + 1, this.lastReadAt + this.intervalMs * EXPIRY_GAP - now);
    if (now + ms >= this.nextTickAt - 20) return; // the periodic reading comes first
    if (this.expiryTimer) clearTimeout(this.expiryTimer);
    this.expiryAt = expiresBootNs;
    this.expiryTimer = setTimeout(() => {
      this.expiryTimer = null;
      this.expiryAt = 0n;
      this.lastReadAt = Date.now();
      this.read().catch((e: Error) => this.onError(e));
    }, Math.max(0, ms));
    this.expiryTimer.unref();
  }

  stop(): void {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    if (this.expiryTimer) clearTimeout(this.expiryTimer);
    this.timer = null;
    this.expiryTimer = null;
  }
}
