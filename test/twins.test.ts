// Rules that live in C and in TypeScript: each pair must give the same
// answers. A change to one twin that the other does not follow fails here.
import t from 'tap';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { loadAddon } from '../src/addon';
import { cgroupWithin, findCgroup2Mount } from '../src/cgroup';
import { FRAME_MAX_BYTES, FRAME_TIMEOUT_MS } from '../src/protocol/framing';
import { verdictFor } from '../src/pause/adapter';
import { REFUSAL_ERRNO } from '../src/pause/notifier';
import { ACTION } from '../src/protocol/enums';
import type { Resolution } from '../src/protocol/types';

t.test('action -> errno: the C fast path (notify_glue.cc) and verdictFor (pause/adapter.ts)', async (t) => {
  const addon = loadAddon();
  t.ok(ACTION.byName.size >= 4, 'every proto action is checked');
  for (const [name, num] of ACTION.byName) {
    const ts = verdictFor({ fault_id: 'f', action: name } as Resolution);
    const c = addon.verdictForAction(num, REFUSAL_ERRNO);
    t.equal(c, ts === 'continue' ? 0 : ts, `${name} (${num}): C ${c}, TypeScript ${ts}`);
  }
  for (const unknown of [0, 99, -1]) t.equal(addon.verdictForAction(unknown, REFUSAL_ERRNO), REFUSAL_ERRNO.deny, `an action the proto does not define (${unknown}) is denied`);
  // the table is the caller's: a different errno comes back as given
  t.equal(addon.verdictForAction(ACTION.byName.get('delegate')!, { deny: 1, delegate: 2, timeout: 3 }), 2, 'delegate takes the delegate errno handed in');
});

t.test('frame limits: sup_server.h and framing.ts', async (t) => {
  const abi = loadAddon().abi;
  t.equal(abi.frameMaxBytes, FRAME_MAX_BYTES, 'largest frame body');
  t.equal(abi.frameTimeoutMs, FRAME_TIMEOUT_MS, 'a whole frame within this of its first byte');
});

t.test('cgroup within: subject.c gs_cgroup_within and cgroup.ts cgroupWithin', async (t) => {
  const addon = loadAddon();
  const cases: Array<[string, string, boolean]> = [
    ['/gensee/op', '/gensee/op', true],
    ['/gensee/op/tool', '/gensee/op', true],
    ['/gensee/op/a/b/c', '/gensee/op', true],
    ['/gensee/op2', '/gensee/op', false],
    ['/gensee/o', '/gensee/op', false],
    ['/gensee', '/gensee/op', false],
    ['/', '/gensee/op', false],
    ['/anything', '/', true],
    ['/', '/', true],
    ['', '/gensee/op', false],
    ['/gensee/op/', '/gensee/op', true],
    ['/gensee/opx/y', '/gensee/op', false],
  ];
  for (const [have, want, expect] of cases) {
    t.equal(cgroupWithin(have, want), expect, `TypeScript: ${JSON.stringify(have)} within ${JSON.stringify(want)}`);
    t.equal(addon.cgroupWithin(have, want), expect, `C: ${JSON.stringify(have)} within ${JSON.stringify(want)}`);
  }
});

/** a mountinfo line: id parent major:minor root mountpoint options optional... - fstype source superoptions */
const mi = (root: string, mnt: string, fstype: string) => `40 23 0:40 ${root} ${mnt} rw,relatime shared:9 - ${fstype} ${fstype} rw`;

t.test('the cgroup2 mount: one parser (proc.c), escapes undone, the hierarchy root only', async (t) => {
  const d = t.testdir({});
  const at = (name: string, lines: string[]) => {
    const f = path.join(d, name);
    fs.writeFileSync(f, lines.join('\n') + '\n');
    return f;
  };
  const addon = loadAddon();
  const cases: Array<[string, string[], string | null]> = [
    ['plain', [mi('/', '/sys/fs/cgroup', 'tmpfs'), mi('/', '/sys/fs/cgroup/unified', 'cgroup2')], '/sys/fs/cgroup/unified'],
    // mountinfo writes a space as \040, a tab \011, a backslash \134
    ['escaped', [mi('/', '/mnt/my\\040cg\\011x\\134y', 'cgroup2')], '/mnt/my cg\tx\\y'],
    // a subtree of the hierarchy mounted on its own comes first: /proc/PID/cgroup paths do not join onto it
    ['subtree first', [mi('/gensee/op', '/run/op-cg', 'cgroup2'), mi('/', '/sys/fs/cgroup', 'cgroup2')], '/sys/fs/cgroup'],
    ['only a subtree', [mi('/gensee/op', '/run/op-cg', 'cgroup2')], null],
    ['a v1 cgroup only', [mi('/', '/sys/fs/cgroup/pids', 'cgroup')], null],
    ['a path naming cgroup2', [mi('/', '/cgroup2', 'tmpfs')], null],
    ['optional fields', ['36 25 0:31 / /sys/fs/cgroup rw,nosuid,nodev,noexec,relatime shared:9 master:3 - cgroup2 cgroup2 rw,nsdelegate'], '/sys/fs/cgroup'],
  ];
  for (const [name, lines, want] of cases) {
    const f = at(name.replace(/ /g, '-'), lines);
    t.equal(addon.findCgroup2Mount(f), want, `${name}: the addon`);
    if (want === null) t.throws(() => findCgroup2Mount(f), { code: 'E_NO_CGROUP2' }, `${name}: refused`);
    else t.equal(findCgroup2Mount(f), want, `${name}: src/cgroup.ts`);
  }
  t.equal(addon.findCgroup2Mount(path.join(d, 'missing')), null, 'no mountinfo file: none');
});
