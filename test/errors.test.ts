// One exit status per error code: the code decides it, never the call site.
import t from 'tap';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { EXIT_STATUS, GenseeError, type ErrorCode } from '../src/errors';
import { formatError } from '../src/cli/main';
import { readFileNoFollow } from '../src/state/fsutil';
import { parseRecordJson } from '../src/state/record';

// the codes a user's input causes (nothing changed) and the ones a runtime failure causes
const INPUT: ErrorCode[] = [
  'E_USAGE', 'E_BAD_ADDRESS', 'E_BAD_PORT', 'E_BAD_PROTOCOL', 'E_BAD_DURATION', 'E_BAD_COUNT', 'E_BAD_ANCHOR',
  'E_BAD_OP_ID', 'E_UNKNOWN_OP', 'E_OP_EXISTS', 'E_NOT_CGROUP2', 'E_SYMLINK', 'E_BAD_JSON', 'E_SCHEMA',
  'E_TOO_LARGE', 'E_NOT_FILE', 'E_BAD_MODE', 'E_NO_EVIDENCE', 'E_HOST_RULES', 'E_OP_LIVE', 'E_NOT_OWNER',
];
const RUNTIME: ErrorCode[] = ['E_NO_CGROUP2', 'E_NO_BPFFS', 'E_NOT_ROOT', 'E_KERNEL', 'E_ADDON_MISSING', 'E_STATE', 'E_SOCKET_IN_USE', 'E_VERIFY', 'E_CONTAINER_GONE'];

t.test('every code has one exit status, and the error carries it', async (t) => {
  t.same(Object.keys(EXIT_STATUS).sort(), [...INPUT, ...RUNTIME].sort(), 'the table lists every code once');
  for (const c of INPUT) {
    t.equal(new GenseeError(c, 'x').exitCode, 2, `${c}: bad input, exit 2`);
    t.equal(formatError(new GenseeError(c, 'x')).code, 2, `${c}: the CLI exits 2`);
  }
  for (const c of RUNTIME) {
    t.equal(new GenseeError(c, 'x').exitCode, 1, `${c}: a runtime failure, exit 1`);
    t.equal(formatError(new GenseeError(c, 'x')).code, 1, `${c}: the CLI exits 1`);
  }
});

t.test('the same code from different places exits the same way', async (t) => {
  const dir = t.testdir({ rec: 'not json' });
  // E_NOT_FILE: a directory where a file was expected
  const notFile = await readFileNoFollow(dir, 1024).catch((e: unknown) => e);
  t.match(notFile, { code: 'E_NOT_FILE', exitCode: 2 });
  // E_BAD_JSON: a state record that is not JSON (this one once exited 1, the others 2)
  const badJson = (() => {
    try {
      parseRecordJson(fs.readFileSync(path.join(dir, 'rec')), 'rec');
    } catch (e) {
      return e;
    }
  })();
  t.match(badJson, { code: 'E_BAD_JSON', exitCode: 2 });
});
