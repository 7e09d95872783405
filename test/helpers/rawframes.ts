// A raw client of a gensee socket for tests that send bytes the real
// clients never would: frames are read back one at a time, decoded by the
// caller's function (a null result is skipped), and the server's close seen.
import * as net from 'node:net';
import { waitFor } from './kernel';

export { encodeFrame as frame } from '../../src/protocol/framing';

export interface RawFrameClient<T> {
  send(b: Buffer): void;
  /** every decoded frame so far, in order */
  readonly got: T[];
  ended(): boolean;
  /** the k-th decoded frame (from 1), waited for up to 5 s */
  next(k: number): Promise<T>;
  destroy(): void;
}

export async function rawFrameClient<T>(sockPath: string, decode: (body: Buffer) => T | null): Promise<RawFrameClient<T>> {
  const s = net.createConnection(sockPath);
  s.on('error', () => undefined);
  await new Promise<void>((r) => s.once('connect', () => r()));
  let buf = Buffer.alloc(0);
  const got: T[] = [];
  let ended = false;
  s.on('data', (d: Buffer) => {
    buf = Buffer.concat([buf, d]);
    while (buf.length >= 4 && buf.length >= 4 + buf.readUInt32BE(0)) {
      const n = buf.readUInt32BE(0);
      const v = decode(buf.subarray(4, 4 + n));
      if (v !== null) got.push(v);
      buf = buf.subarray(4 + n);
    }
  });
  s.on('close', () => (ended = true));
  return {
    send: (b) => void s.write(b),
    got,
    ended: () => ended,
    next: (k) => waitFor(() => got.length >= k && got[k - 1], 5000) as Promise<T>,
    destroy: () => void s.destroy(),
  };
}
