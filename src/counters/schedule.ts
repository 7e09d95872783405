// When the envelope's readings run (envelope.ts): every interval, and
// earlier at a lease's expiry when it comes before the next periodic
// reading. A clock, like setTimeout: it runs the reading it was built with
// and calls nothing else.
import { bootNs } from '../dataplane';

export class ReadingSchedule {
  private readonly intervalMs: number;
  private readonly read: () => Promise<void>;
  private readonly onError: (e: Error) => void;
  private timer: NodeJS.Timeout | null = null;
  /** an extra reading at the next lease expiry, when it comes before the next periodic one */
  private expiryTimer: NodeJS.Timeout | null = null;
  private expiryAt = 0n;
  private nextTickAt = 0;
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
      this.read()
        .catch((e: Error) => this.onError(e))
        .finally(() => this.start());
    }, this.intervalMs);
    this.timer.unref();
  }

  /**
   * Expired leases are refused by the hook at the exact instant; removing and
   * recording them waits for a reading. When a lease expires before the next
   * periodic reading, read at its expiry instead, so removal never lags by a
   * whole period.
   */
  expiry(expiresBootNs: bigint): void {
    if (this.stopped || expiresBootNs === 0n) return;
    if (this.expiryTimer && this.expiryAt <= expiresBootNs) return;
    const ms = Number(expiresBootNs - bootNs()) / 1e6 + 1;
    if (Date.now() + ms >= this.nextTickAt - 20) return; // the periodic reading comes first
    if (this.expiryTimer) clearTimeout(this.expiryTimer);
    this.expiryAt = expiresBootNs;
    this.expiryTimer = setTimeout(() => {
      this.expiryTimer = null;
      this.expiryAt = 0n;
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
