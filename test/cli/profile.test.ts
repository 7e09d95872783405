// gensee profile: the seccomp profile that hands a container to the OCI
// listener. The base's other rules stay (the runtime's default filter is not
// lost); the four network calls go to the listener and nowhere else, even
// when the base allowed them under conditions; bad input is refused with
// the field that is wrong, and nothing is printed.
import t from 'tap';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { gensee } from '../helpers/gensee';
import { buildProfile, NOTIFY_SYSCALLS, DEFAULT_BASE } from '../../src/cli/profile';

const SOCK = '/run/gensee/oci.sock';

type Rule = { names?: string[]; name?: string; action: string; args?: unknown[] };

t.test('the base keeps its rules; the network calls go only to the listener', async (t) => {
  const base = {
    defaultAction: 'SCMP_ACT_ERRNO',
    defaultErrnoRet: 38,
    archMap: [{ architecture: 'SCMP_ARCH_X86_64', subArchitectures: ['SCMP_ARCH_X86'] }],
    syscalls: [
      { names: ['read', 'connect', 'write', 'sendto'], action: 'SCMP_ACT_ALLOW' },
      // a conditional allow of sendmsg would let some calls past the listener
      { names: ['sendmsg'], action: 'SCMP_ACT_ALLOW', args: [{ index: 2, value: 0, op: 'SCMP_CMP_EQ' }] },
      { name: 'sendmmsg', action: 'SCMP_ACT_ALLOW' },
      { name: 'socket', action: 'SCMP_ACT_ALLOW' },
      { names: ['bpf'], action: 'SCMP_ACT_ERRNO', errnoRet: 1, excludes: { caps: ['CAP_SYS_ADMIN'] } },
    ],
  };
  const p = buildProfile(base, 'b.json', SOCK, 'op=x');
  t.match(p, { defaultAction: 'SCMP_ACT_ERRNO', defaultErrnoRet: 38, listenerPath: SOCK, listenerMetadata: 'op=x', archMap: base.archMap }, 'the base, with the listener');
  const rules = p.syscalls as Rule[];
  const named = (n: string) => rules.filter((r) => r.names?.includes(n) || r.name === n);
  for (const n of NOTIFY_SYSCALLS) t.same(named(n).map((r) => r.action), ['SCMP_ACT_NOTIFY'], `${n}: only the notify rule`);
  t.same(named('read')[0].names, ['read', 'write'], 'the other names of a rule stay');
  t.same(named('socket'), [{ name: 'socket', action: 'SCMP_ACT_ALLOW' }], 'a single-name rule stays');
  t.match(named('bpf')[0], { action: 'SCMP_ACT_ERRNO', errnoRet: 1, excludes: { caps: ['CAP_SYS_ADMIN'] } }, 'conditions stay');
  t.equal(rules.length, 4, 'the rule left with no name is gone');
  t.same(base.syscalls[0].names, ['read', 'connect', 'write', 'sendto'], 'the base itself is not changed');
  t.same(buildProfile(null, 'none', SOCK, 'policy=web'), { defaultAction: 'SCMP_ACT_ALLOW', listenerPath: SOCK, listenerMetadata: 'policy=web', syscalls: [{ names: NOTIFY_SYSCALLS, action: 'SCMP_ACT_NOTIFY' }] }, '--base none');

  const refused: [object, RegExp][] = [
    [{ syscalls: [] }, /\/defaultAction: must be a string/],
    [{ defaultAction: 'SCMP_ACT_NOTIFY' }, /\/defaultAction: SCMP_ACT_NOTIFY/],
    [{ defaultAction: 'SCMP_ACT_ALLOW', listenerPath: '/x' }, /\/listenerPath: is already set/],
    [{ defaultAction: 'SCMP_ACT_ALLOW', syscalls: {} }, /\/syscalls: must be an array/],
    [{ defaultAction: 'SCMP_ACT_ALLOW', syscalls: [{ names: ['ioctl'], action: 'SCMP_ACT_NOTIFY' }] }, /\/syscalls\/0\/action: SCMP_ACT_NOTIFY/],
    [{ defaultAction: 'SCMP_ACT_ALLOW', syscalls: [{ names: 'connect', action: 'SCMP_ACT_ALLOW' }] }, /\/syscalls\/0\/names: must be an array/],
    [{ defaultAction: 'SCMP_ACT_ALLOW', syscalls: [{ names: ['x'] }] }, /\/syscalls\/0\/action: must be a string/],
  ];
  for (const [b, why] of refused) t.throws(() => buildProfile(b as Record<string, unknown>, 'b.json', SOCK, 'op=x'), { code: 'E_SCHEMA', message: why }, String(why));
});

t.test('the CLI: a profile on the runtime default, and bad input refused with nothing printed', async (t) => {
  const dir = t.testdir({
    pol: { 'web.json': JSON.stringify({ schema: 1, grants: [], leases: [], delegate: [] }) },
    'bad.json': '{"defaultAction": ',
  });
  if (fs.existsSync(DEFAULT_BASE)) {
    const r = await gensee(['profile', '--socket', SOCK, '--policy', 'web', '--policy-dir', path.join(dir, 'pol')]);
    t.equal(r.code, 0, `exit 0 (${r.stderr})`);
    const p = JSON.parse(r.stdout) as { defaultAction: string; listenerPath: string; listenerMetadata: string; syscalls: Rule[] };
    const base = JSON.parse(fs.readFileSync(DEFAULT_BASE, 'utf8')) as { defaultAction: string; syscalls: unknown[] };
    t.match(p, { defaultAction: base.defaultAction, listenerPath: SOCK, listenerMetadata: 'policy=web' }, `on ${DEFAULT_BASE}`);
    t.ok(p.syscalls.length >= base.syscalls.length - 1, 'its rules kept');
    t.equal(p.syscalls.filter((r) => r.names?.includes('connect')).length, 1, 'connect in one rule only');
  } else {
    const r = await gensee(['profile', '--socket', SOCK, '--op', 'x']);
    t.equal(r.code, 2, `no containers-common: a clear refusal (${r.stderr.trim()})`);
    t.match(r.stderr, /--base FILE/);
  }
  const none = await gensee(['profile', '--socket', SOCK, '--op', 'build-42', '--base', 'none']);
  t.equal(none.code, 0);
  t.match(none.stderr, /--base none: every call but the network ones is allowed/, '--base none says what it gives up');
  t.equal((JSON.parse(none.stdout) as { listenerMetadata: string }).listenerMetadata, 'op=build-42');

  const bad: [string[], RegExp][] = [
    [['--op', 'x'], /--socket PATH is required/],
    [['--socket', 'oci.sock', '--op', 'x'], /must be an absolute path/],
    [['--socket', `/${'s'.repeat(120)}`, '--op', 'x'], /at most 107/],
    [['--socket', SOCK], /exactly one of --op ID .* or --policy NAME/],
    [['--socket', SOCK, '--op', 'x', '--policy', 'y'], /exactly one of/],
    [['--socket', SOCK, '--op', '../x'], /E_BAD_OP_ID: --op "\.\.\/x"/],
    [['--socket', SOCK, '--policy', 'a/b'], /--policy "a\/b": expected/],
    [['--socket', SOCK, '--policy', 'nope', '--policy-dir', path.join(dir, 'pol')], /E_NOT_FILE: --policy nope: .*nope\.json does not exist/],
    [['--socket', SOCK, '--op', 'x', '--base', path.join(dir, 'bad.json')], /E_BAD_JSON: --base .*bad\.json: not JSON/],
    [['--socket', SOCK, '--op', 'x', '--base', path.join(dir, 'missing.json')], /E_NOT_FILE: --base .*missing\.json: no such file/],
  ];
  for (const [argv, why] of bad) {
    const r = await gensee(['profile', ...argv]);
    t.equal(r.code, 2, `${argv.join(' ')}: exit 2`);
    t.match(r.stderr, why, `${argv.join(' ')}: ${r.stderr.trim()}`);
    t.equal(r.stdout, '', 'nothing printed');
  }
});
