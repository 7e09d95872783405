// The nftables mirror of the kernel lease map (backends/nft.ts): one element
// per live lease, so packets that bypassed the socket hooks are counted and
// dropped at packet level. Written by the envelope (envelope.ts) and by the
// resolver's installs (through installs.ts); read by the recorder. An
// element leaves only after the reading that harvested its final count.
import { Tuple } from '../addr';
import { NftBackend, NftCounters } from '../backends/nft';

export interface NftElement {
  tuple: Tuple;
  expiresBootNs: bigint;
}

export class NftMirror {
  nft: NftBackend | null = null;
  /** elements to delete after their final harvest, by lease key */
  private readonly retiring = new Map<string, Tuple>();
  private readonly onError: (e: Error) => void;

  constructor(onError: (e: Error) => void) {
    this.onError = onError;
  }

  /** Create (or replace) the operation's table; returns the counters of a table a killed run left. */
  async start(o: { op: string; cgroup: string; elements: NftElement[]; nowBootNs: bigint }): Promise<{ table: string; leftover: NftCounters | null }> {
    const { nft, leftover } = await NftBackend.create(o);
    this.nft = nft;
    return { table: nft.table, leftover };
  }

  put(elements: NftElement[], nowBootNs: bigint): Promise<void> {
    return this.nft ? this.nft.put(elements, nowBootNs) : Promise.resolve();
  }

  /** the lease is live again: its element stays */
  keep(key: string): void {
    this.retiring.delete(key);
  }

  /**
   * The lease left the kernel map: its element goes after the next nft
   * reading. Without a table nothing is kept: there is no element to
   * delete (a table created later holds only the record's live leases),
   * and no reading would ever clear the list — over a long run without
   * nft it held every lease that ever expired.
   */
  retire(key: string, t: Tuple): void {
    if (this.nft) this.retiring.set(key, t);
  }

  /** elements waiting for their final nft reading */
  get pending(): number {
    return this.retiring.size;
  }

  /** After an nft reading: delete the retiring elements no lease holds any more. */
  async removeHarvested(live: ReadonlyMap<string, unknown>): Promise<void> {
    const del = [...this.retiring.entries()].filter(([k]) => !live.has(k));
    this.retiring.clear();
    if (del.length && this.nft) await this.nft.remove(del.map(([, t]) => t)).catch((e: Error) => this.onError(e));
  }

  destroy(): Promise<void> {
    return this.nft ? this.nft.destroy() : Promise.resolve();
  }
}
