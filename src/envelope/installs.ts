// What the resolver's lease installs (backends/network.ts) leave for the
// envelope: the generation a new kernel entry is tagged with, the
// `generation` line of a new one, the nft element of an installed lease
// (before the answer), and the leases an install replaced (recorded at the
// next reading). The supervisor hands it to the network backend; it calls
// neither the network backend nor the envelope, which reads it
// (takeReplaced) — data flows one way: envelope → network → ledger.
// The one indirect path back is the reading schedule's timer: an install
// may move the next reading earlier (a lease expiring before it).
import { bootNs } from '../dataplane';
import { LogFields } from '../evidence/chain';
import type { InstallSink } from '../backends/network';
import { LeaseRecord, leaseKey } from '../state/network';
import { LeaseScan } from './lease-scan';
import { NftMirror } from './nft-mirror';
import { CounterRecorder, Ended, tupleOf } from '../counters/recorder';
import { ReadingSchedule } from './schedule';

export class InstallLedger implements InstallSink {
  /** false once the envelope stopped: the network backend then tags with its newest generation */
  open = true;
  /** the policy's generation: a grant's kernel entry is tagged with it (set by the envelope's handover) */
  policyGeneration: number;
  private replaced: Ended[] = [];
  private readonly recorder: CounterRecorder;
  private readonly mirror: NftMirror;
  private readonly scan: LeaseScan;
  private readonly schedule: ReadingSchedule;

  constructor(o: { recorder: CounterRecorder; mirror: NftMirror; scan: LeaseScan; schedule: ReadingSchedule; policyGeneration: number }) {
    this.recorder = o.recorder;
    this.mirror = o.mirror;
    this.scan = o.scan;
    this.schedule = o.schedule;
    this.policyGeneration = o.policyGeneration;
  }

  /** The `generation` line of generation g, just added to the record. Its counters do not exist yet: baseline 0. */
  generationStarted(generation: number, reason: string, extra: LogFields, at: string): void {
    this.recorder.append([{ kind: 'generation', generation, reason, policy_generation: this.policyGeneration, ...extra, baseline_allow: 0 }], at);
  }

  /** A lease was installed and recorded (replacing `replaced`); mirror it into nft before the answer. */
  installed(l: LeaseRecord, replaced: LeaseRecord | undefined): Promise<void> {
    this.scan.recordChanged();
    // its kernel form now (a few us), not for thousands at once in the next reading
    this.schedule.expiry(this.scan.expiryOf(l));
    if (replaced && replaced.generation !== l.generation) {
      this.replaced.push({ lease: replaced, kind: 'lease_replaced', extra: { by_generation: l.generation } });
    }
    if (!this.mirror.nft) return Promise.resolve();
    this.mirror.keep(leaseKey(l));
    return this.mirror.put([{ tuple: tupleOf(l), expiresBootNs: BigInt(l.expires_at_boot_ns) }], bootNs());
  }

  get mirrorsNft(): boolean {
    return this.mirror.nft !== null;
  }

  /** leases whose kernel entry an install replaced since the last call */
  takeReplaced(): Ended[] {
    return this.replaced.splice(0);
  }

  close(): void {
    this.open = false;
  }
}
