// A policy file as the supervisor is given it: read without following a
// symlink, at most POLICY_MAX_BYTES, schema-checked, with its hash. Its own
// module (re-exported by supervisor.ts): `gensee run` reads the policy
// before it loads the supervisor's module graph (src/cli/run.ts).
import * as path from 'node:path';
import { GenseeError } from './errors';
import { parsePolicy, policyHash } from './protocol/json';
import type { Policy } from './protocol/types';
import { readFileNoFollow } from './state/fsutil';

export const POLICY_MAX_BYTES = 64 * 1024;

export interface LoadedPolicy {
  policy: Policy;
  hash: string;
}

/** Read and validate a policy file (no symlinks, ≤ 64 KiB, schema-checked). */
export async function loadPolicyFile(file: string): Promise<LoadedPolicy> {
  const bytes = await readFileNoFollow(path.resolve(file), POLICY_MAX_BYTES);
  let json: unknown;
  try {
    json = JSON.parse(bytes.toString('utf8'));
  } catch (e) {
    throw new GenseeError('E_BAD_JSON', `policy ${file}: not JSON: ${(e as Error).message}`);
  }
  return { policy: parsePolicy(json), hash: policyHash(bytes) };
}
