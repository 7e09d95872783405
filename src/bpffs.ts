// bpffs: pinned links and maps live under /sys/fs/bpf/gensee/<OP>/ so the
// boundary outlives the process that set it up.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { execFileSync } from 'node:child_process';
import { GenseeError } from './errors';

export const BPF_FS_MAGIC = 0xcafe4a11;

export function pinRoot(): string {
  return process.env.GENSEE_PIN_ROOT ?? '/sys/fs/bpf/gensee';
}

export function pinDirFor(op: string): string {
  return path.join(pinRoot(), op);
}

/** Make sure the pin root exists on a bpffs, mounting /sys/fs/bpf if needed. */
export function ensureBpffs(): void {
  const root = pinRoot();
  const base = path.dirname(root);
  const isBpf = (p: string) => {
    try {
      return fs.statfsSync(p).type === BPF_FS_MAGIC;
    } catch {
      return false;
    }
  };
  if (!isBpf(base)) {
    try {
      fs.mkdirSync(base, { recursive: true });
      execFileSync('mount', ['-t', 'bpf', 'bpf', base], { stdio: 'pipe' });
    } catch (e) {
      throw new GenseeError('E_NO_BPFFS', `${base} is not a bpf filesystem and mounting it failed: ${(e as Error).message.split('\n')[0]}`);
    }
  }
  fs.mkdirSync(root, { recursive: true, mode: 0o700 });
}
