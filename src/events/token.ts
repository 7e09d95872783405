// The live-stream token (DESIGN.md "Live stream"): <OP>/token, 0600, 32
// random bytes as 64 hex characters, created once and never overwritten.
// A client presents it as `Authorization: Bearer <token>` on the WebSocket
// upgrade. Readers refuse a symlink, a file owned by an untrusted uid, a
// mode with group/other bits, or content that is not a token.
import * as path from 'node:path';
import { randomBytes } from 'node:crypto';
import { GenseeError, isErrno } from '../errors';
import { assertNoSymlinks, assertPrivate, createFileExclusive, readFileNoFollowStat } from '../state/fsutil';

export const TOKEN_FILE = 'token';
export const TOKEN_BYTES = 32;
const TOKEN_RE = /^[0-9a-f]{64}$/;

/** true for a well-formed token (64 lowercase hex characters) */
export function isToken(s: unknown): s is string {
  return typeof s === 'string' && TOKEN_RE.test(s);
}

async function readTokenAt(file: string): Promise<string> {
  assertNoSymlinks(file);
  const { data, stat } = await readFileNoFollowStat(file, 4096);
  assertPrivate(stat, file);
  // a trailing newline (someone wrote it with echo) is tolerated, nothing else
  const s = data.toString('latin1').replace(/\n$/, '');
  if (!isToken(s)) throw new GenseeError('E_STATE', `${file} does not hold a token (expected ${TOKEN_BYTES * 2} hex characters)`);
  return s;
}

/**
 * The operation's token: created (0600, exclusively: temp file opened
 * O_EXCL|O_NOFOLLOW, then link(2), so nobody ever sees a partial token and
 * an existing file is never replaced) when missing, else read and checked.
 * `dir` is the operation directory (opDir()).
 */
export async function ensureToken(dir: string): Promise<string> {
  const file = path.join(path.resolve(dir), TOKEN_FILE);
  assertNoSymlinks(file);
  const fresh = randomBytes(TOKEN_BYTES).toString('hex');
  if (await createFileExclusive(file, fresh, 0o600)) return fresh;
  return readTokenAt(file);
}

/** Read and check the operation's token. Missing → E_STATE ("no live stream token"). */
export async function readToken(dir: string): Promise<string> {
  const file = path.join(path.resolve(dir), TOKEN_FILE);
  try {
    return await readTokenAt(file);
  } catch (e) {
    if (isErrno(e) && e.code === 'ENOENT') throw new GenseeError('E_STATE', `no live stream token at ${file}: no supervisor has served this operation`);
    throw e;
  }
}
