// Loads the native addon (build/Release/gensee.node) and types its surface.
import * as path from 'node:path';
import * as fs from 'node:fs';
import { GenseeError } from './errors';

export interface AddonAbi {
  version: number;
  leaseKeySize: number;
  leaseValueSize: number;
  counterKeySize: number;
  faultEventSize: number;
  leaseValueUsesLeftOffset: number;
  counterKeyAddrOffset: number;
  faultEventAddrOffset: number;
}

export interface NativeDataPlane {
  leasePut(key: Buffer, value: Buffer, onlyNew?: boolean): void;
  leaseGet(key: Buffer): Buffer | null;
  leaseDel(key: Buffer): boolean;
  leaseList(): { count: number; keys: Buffer; values: Buffer };
  countersRead(): { count: number; keys: Buffer; sums: Buffer };
  statsRead(): { lostEvents: bigint; counterFull: bigint };
  /** delete counters (N packed gs_counter_key); returns how many existed */
  countersDelete(keys: Buffer): number;
  /** cb(err, buf) with buf = N packed gs_fault_event records; ref keeps the loop alive */
  startEvents(cb: (err: NodeJS.ErrnoException | null, buf?: Buffer) => void, ref?: boolean): void;
  stopEvents(): void;
  close(): void;
}

export interface Addon {
  abi: AddonAbi;
  attach(pinDir: string, cgroupPath: string, opts?: { emitEvents?: boolean; countAllows?: boolean }): void;
  detach(pinDir: string): void;
  linksPresent(pinDir: string): boolean;
  /** pin names of the links an attached operation holds under its pin dir (addon/dataplane.c) */
  linkNames: readonly string[];
  bootNs(): bigint;
  peerCred(fd: number): { pid: number; uid: number; gid: number };
  /** gensee's socket admission rule (addon/peercred.h): null when the peer shares our user and mount namespaces, else why not */
  peerRefusal(fd: number, pid: number): string | null;
  DataPlane: new (pinDir: string) => NativeDataPlane;
  [more: string]: unknown;
}

/** The package root (holds package.json), from dist/src or src. */
export const PACKAGE_ROOT = (() => {
  let d = __dirname;
  for (let i = 0; i < 4; i++) {
    if (fs.existsSync(path.join(d, 'package.json'))) return d;
    d = path.dirname(d);
  }
  return path.resolve(__dirname, '..', '..');
})();

let cached: Addon | null = null;

export function loadAddon(): Addon {
  if (cached) return cached;
  const tried: string[] = [];
  const candidates = [
    process.env.GENSEE_ADDON,
    path.join(PACKAGE_ROOT, 'build', 'Release', 'gensee.node'),
    path.join(PACKAGE_ROOT, 'build', 'Debug', 'gensee.node'),
  ].filter((x): x is string => !!x);
  for (const c of candidates) {
    tried.push(c);
    if (!fs.existsSync(c)) continue;
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    cached = require(c) as Addon;
    return cached;
  }
  throw new GenseeError(
    'E_ADDON_MISSING',
    `native addon not built; run 'make build'. Tried:\n  ${tried.join('\n  ')}`,
    1,
  );
}
