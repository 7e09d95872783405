// Which gensee this is: the package version, and the git commit it was built
// from when the build knew it (`make build` writes dist/build-info.json; a
// package built outside a git checkout has none). One home for both, read
// once: `gensee --version`, operation.json's `gensee` field and status.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { PACKAGE_ROOT } from './addon';

export interface BuildIdentity {
  version: string;
  /** the full git commit hash, or null when the build did not know it */
  commit: string | null;
}

export const BUILD_INFO_FILE = path.join('dist', 'build-info.json');
const COMMIT_RE = /^[0-9a-f]{40}$/;

let cached: BuildIdentity | null = null;

function readJson(file: string): Record<string, unknown> | null {
  try {
    const v = JSON.parse(fs.readFileSync(file, 'utf8')) as unknown;
    return v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

export function buildIdentity(): BuildIdentity {
  if (cached) return cached;
  const pkg = readJson(path.join(PACKAGE_ROOT, 'package.json'));
  const info = readJson(path.join(PACKAGE_ROOT, BUILD_INFO_FILE));
  const version = typeof pkg?.version === 'string' ? pkg.version : 'unknown';
  const commit = typeof info?.commit === 'string' && COMMIT_RE.test(info.commit) ? info.commit : null;
  cached = { version, commit };
  return cached;
}

/** "0.1.0", or "0.1.0 (commit 1a2b3c4d5e6f)" */
export function describeBuild(b: BuildIdentity): string {
  return b.commit ? `${b.version} (commit ${b.commit.slice(0, 12)})` : b.version;
}
