// The CLI as people's habits expect (issue 30): --version, `help CMD` and
// `CMD --help` from one table, that table held to what each command's parser
// takes, spelling suggestions, exit codes, NO_COLOR, bash completion.
import t from 'tap';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { spawnSync } from 'node:child_process';
import { gensee } from '../helpers/gensee';
import { GENSEE_BIN, requireKernel, uniqueName } from '../helpers/kernel';
import { PACKAGE_ROOT } from '../../src/addon';
import { buildIdentity, describeBuild } from '../../src/version';
import { COMMANDS, COMMON_OPTIONS, topLevel } from '../../src/cli/help-table';
import { colourOn, closest, helpFor } from '../../src/cli/help';
import * as args from '../../src/cli/args';
import * as hooks from '../../src/cli/hooks';
import * as lease from '../../src/cli/lease';
import * as counters from '../../src/cli/counters';
import * as policy from '../../src/cli/policy';
import * as supervise from '../../src/cli/supervise';
import * as runfault from '../../src/cli/runfault';
import * as runcmd from '../../src/cli/run';
import * as status from '../../src/cli/status';
import * as ls from '../../src/cli/ls';
import * as stop from '../../src/cli/stop';
import * as verify from '../../src/cli/verify';
import * as oci from '../../src/cli/oci';
import * as watch from '../../src/cli/watch';
import * as events from '../../src/cli/events';
import * as executor from '../../src/cli/executor';
import * as attention from '../../src/cli/attention';

const VERSION = (JSON.parse(fs.readFileSync(path.join(PACKAGE_ROOT, 'package.json'), 'utf8')) as { version: string }).version;

/** how to reach each command's parse() with an option it does not take */
const PROBES: Record<string, () => unknown> = {
  run: () => runcmd.run(['--zz-probe', '--', 'true']),
  'run fault': () => runfault.run(['--zz-probe']),
  supervise: () => supervise.run(['--zz-probe']),
  'oci-listener': () => oci.run(['--zz-probe']),
  status: () => status.run(['--zz-probe']),
  ls: () => ls.run(['--zz-probe']),
  stop: () => stop.run(['--zz-probe']),
  rm: async () => (await import('../../src/cli/rm')).run(['--zz-probe']),
  prune: async () => (await import('../../src/cli/prune')).run(['--zz-probe']),
  verify: () => verify.run(['--zz-probe']),
  counters: () => counters.run(['--zz-probe']),
  events: () => events.run(['--zz-probe']),
  watch: () => watch.run(['--zz-probe']),
  'attention clear': () => attention.run(['clear', '--zz-probe']),
  'policy apply': () => policy.run(['apply', '--zz-probe']),
  'policy check': () => policy.run(['check', '--zz-probe']),
  'policy suggest': () => policy.run(['suggest', '--zz-probe']),
  report: async () => (await import('../../src/cli/report')).run(['--zz-probe']),
  'lease add': () => lease.run(['add', '--zz-probe']),
  'lease rm': () => lease.run(['rm', '--zz-probe']),
  'lease ls': () => lease.run(['ls', '--zz-probe']),
  'hooks attach': () => hooks.run(['attach', '--zz-probe']),
  'hooks detach': () => hooks.run(['detach', '--zz-probe']),
  'executor call': () => executor.run(['call', '--zz-probe']),
  'executor recover': () => executor.run(['recover', '--zz-probe']),
  doctor: async () => (await import('../../src/cli/doctor')).run(['--zz-probe']),
  upgrade: async () => (await import('../../src/cli/upgrade')).run(['--zz-probe']),
  profile: async () => (await import('../../src/cli/profile')).run(['--zz-probe']),
};

t.test('the help table is what each parser takes', async (t) => {
  const common = COMMON_OPTIONS.map((o) => o.name);
  for (const c of COMMANDS) {
    if (c.name === 'completion' || c.name === 'help') continue;
    const probe = PROBES[c.name];
    t.ok(probe, `${c.name}: has a probe (add one for a new command)`);
    if (!probe) continue;
    args.lastParsedOptions.length = 0;
    let err: unknown = null;
    try {
      await probe();
    } catch (e) {
      err = e;
    }
    t.match(String((err as Error)?.message), /unknown option "--zz-probe"/, `${c.name}: an unknown option is refused by its parser`);
    const parsed = new Set(args.lastParsedOptions);
    const listed = [...c.options.map((o) => o.name), ...common];
    // every option the help names is one the parser takes
    t.strictSame(
      listed.filter((o) => !parsed.has(o)),
      [],
      `${c.name}: every option in its help is parsed`,
    );
    // the parser takes nothing its command's help does not name (a parser
    // shared by subcommands may take the union of theirs)
    const top = c.name.split(' ')[0];
    const family = new Set([...COMMANDS.filter((x) => x.name.split(' ')[0] === top).flatMap((x) => x.options.map((o) => o.name)), ...common]);
    t.strictSame(
      [...parsed].filter((o) => !family.has(o)),
      [],
      `${c.name}: every option its parser takes is in the help`,
    );
  }
});

t.test('every command has real help: options with defaults, an example, exit codes', async (t) => {
  for (const c of COMMANDS) {
    const text = helpFor(c.name.split(' '))!;
    t.ok(text, `help ${c.name}: exists`);
    for (const o of c.options) {
      t.match(text, `--${o.name}`, `help ${c.name}: names --${o.name}`);
      if (o.default !== undefined) t.match(text, `default: ${o.default}`, `help ${c.name}: --${o.name} with its default`);
    }
    t.match(text, /\nExamples:\n {2}\S/, `help ${c.name}: an example`);
    t.match(text, /\nExit status:\n {2}\S/, `help ${c.name}: its exit codes`);
  }
  // through the real CLI, for a command, a subcommand and a group
  for (const words of [['run'], ['lease', 'add'], ['run', 'fault'], ['verify']]) {
    const a = await gensee(['help', ...words]);
    t.equal(a.code, 0, `help ${words.join(' ')}: exit 0`);
    t.equal(a.stdout, helpFor(words) + '\n', `help ${words.join(' ')}: the table's text`);
    t.notMatch(a.stdout, /\x1b\[/, `help ${words.join(' ')}: no colour on a pipe`);
    const b = await gensee([...words, '--op', 'x', '--help']);
    t.equal(b.code, 0, `${words.join(' ')} --help: exit 0`);
    t.equal(b.stdout, a.stdout, `${words.join(' ')} --help is "help ${words.join(' ')}"`);
  }
  // a --help after "--" is CMD's: gensee parses its own options (and refuses the bad id)
  const inCmd = await gensee(['run', '--op', 'bad id', '--', 'sh', '--help']);
  t.equal(inCmd.code, 125, "a --help after -- is CMD's, not gensee's");
  t.equal(inCmd.stdout, '', 'no help printed for it');
  const group = await gensee(['lease', '--help']);
  for (const s of ['add', 'rm', 'ls']) t.match(group.stdout, `gensee lease ${s} `, `lease --help lists lease ${s}`);
  const top = await gensee(['--help']);
  t.equal(top.code, 0, '--help: exit 0');
  for (const name of topLevel().keys()) t.match(top.stdout, new RegExp(`\\n  ${name}\\b`), `--help lists ${name}`);
  const none = await gensee([]);
  t.equal(none.code, 2, 'no command: exit 2, the overview on stderr');
  t.match(none.stderr, /Commands:/);
});

t.test('--version', async (t) => {
  for (const flag of ['--version', '-V', 'version']) {
    const r = await gensee([flag]);
    t.equal(r.code, 0, `${flag}: exit 0`);
    t.equal(r.stdout, `gensee ${describeBuild(buildIdentity())}\n`, `${flag}: the version in package.json (and the build's commit)`);
    t.match(r.stdout, new RegExp(`^gensee ${VERSION.replace(/\./g, '\\.')}( \\(commit [0-9a-f]{12}\\))?\n$`), `${flag}: version first`);
  }
  const j = await gensee(['--version', '--json']);
  t.same(JSON.parse(j.stdout), { name: 'gensee', version: VERSION, commit: buildIdentity().commit, node: process.version }, '--version --json');
});

t.test('errors suggest the right spelling and name what is accepted', async (t) => {
  const cases: [string[], RegExp][] = [
    [['statsu', '--op', 'x'], /unknown command "statsu"; did you mean "status"\?/],
    [['lsit'], /unknown command "lsit"; did you mean "ls"\?/],
    [['oci-listner'], /did you mean "oci-listener"\?/],
    [['help', 'verfy'], /no command "verfy"; did you mean "verify"\?/],
    [['status', '--opp', 'x'], /unknown option "--opp"; did you mean "--op"\?/],
    [['verify', '--op', 'x', '--anchr', '1:ab'], /did you mean "--anchor"\?/],
    [['run', '--polcy', 'p.json', '--', 'true'], /unknown option "--polcy"; did you mean "--policy"\?/],
    [['lease', 'add', '--op', 'x', '--tll', '3s', 'tcp', '127.0.0.1:1'], /did you mean "--ttl"\?/],
    [['status', '--zzzzzzzz'], /unknown option "--zzzzzzzz"; this command takes --op --json --state-dir --help/],
    [['completion', 'zsh'], /only bash is generated/],
  ];
  for (const [argv, want] of cases) {
    const r = await gensee(argv);
    t.not(r.code, 0, `${argv.join(' ')}: refused`);
    t.match(r.stderr, want, `${argv.join(' ')}: ${r.stderr.trim()}`);
    t.equal(r.stdout, '', `${argv.join(' ')}: nothing on stdout`);
  }
  t.equal(closest('xyzzy', ['status', 'stop']), null, 'no suggestion for a word like none of them');
});

t.test('colour only on a TTY, never with NO_COLOR', async (t) => {
  const tty = { isTTY: true } as NodeJS.WriteStream;
  const pipe = { isTTY: false } as NodeJS.WriteStream;
  const saved = process.env.NO_COLOR;
  t.teardown(() => (saved === undefined ? delete process.env.NO_COLOR : (process.env.NO_COLOR = saved)));
  delete process.env.NO_COLOR;
  t.equal(colourOn(tty), true, 'a TTY: colour');
  t.equal(colourOn(pipe), false, 'a pipe: none');
  process.env.NO_COLOR = '1';
  t.equal(colourOn(tty), false, 'NO_COLOR=1 on a TTY: none');
  process.env.NO_COLOR = '';
  t.equal(colourOn(tty), true, 'NO_COLOR empty: ignored, as no-color.org says');
  // through a real pseudo-terminal (script(1)), when the machine has it
  const script = spawnSync('script', ['-qec', `${GENSEE_BIN} help status`, '/dev/null'], { encoding: 'utf8', env: { ...process.env, NO_COLOR: '' } });
  if (script.error) t.fail(`script(1) is needed for the TTY check: ${script.error.message}`);
  else {
    t.match(script.stdout, /\x1b\[1m/, 'on a real TTY the headings are bold');
    const nc = spawnSync('script', ['-qec', `${GENSEE_BIN} help status`, '/dev/null'], { encoding: 'utf8', env: { ...process.env, NO_COLOR: '1' } });
    t.notMatch(nc.stdout, /\x1b\[/, 'on a real TTY with NO_COLOR=1: no escape codes');
  }
});

t.test('bash completion comes from the same table and completes', async (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gs-compl-'));
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  const r = await gensee(['completion', 'bash']);
  t.equal(r.code, 0, 'completion bash: exit 0');
  const file = path.join(dir, 'gensee.bash');
  fs.writeFileSync(file, r.stdout);
  const complete = (words: string[]): string[] => {
    const sh = `source ${file}; COMP_WORDS=(${words.map((w) => `'${w}'`).join(' ')}); COMP_CWORD=${words.length - 1}; _gensee; printf '%s\\n' "\${COMPREPLY[@]}"`;
    const p = spawnSync('bash', ['-c', sh], { encoding: 'utf8' });
    t.equal(p.status, 0, `bash ran the completion for ${words.join(' ')}: ${p.stderr}`);
    return p.stdout.split('\n').filter(Boolean).sort();
  };
  t.strictSame(complete(['gensee', 'sta']), ['status'], 'gensee sta<TAB> → status');
  t.strictSame(complete(['gensee', 'lease', '']), ['add', 'ls', 'rm'], 'gensee lease <TAB> → its subcommands');
  t.strictSame(complete(['gensee', 'lease', 'add', '--t']), ['--ttl'], 'gensee lease add --t<TAB> → --ttl');
  t.strictSame(complete(['gensee', 'verify', '--']), ['--anchor', '--help', '--json', '--op', '--state-dir'], 'verify --<TAB> → exactly its options');
  t.strictSame(complete(['gensee', 'run', '--no']), ['--no-dns'], 'run --no<TAB> → --no-dns');
});

t.test('gensee run: its own failures are 125, CMD keeps its status (126, 127 as env does)', async (t) => {
  const bad = await gensee(['run', '--op', 'no good', '--', '/bin/true']);
  t.equal(bad.code, 125, `a bad --op: 125 (${bad.stderr.trim()})`);
  const missing = await gensee(['run', '--op', 'x']);
  t.equal(missing.code, 125, 'no "-- CMD": 125');
  if (!requireKernel(t)) return;
  const st = fs.mkdtempSync(path.join(os.tmpdir(), 'gs-exit-'));
  t.teardown(() => fs.rmSync(st, { recursive: true, force: true }));
  const run = (op: string, cmd: string[]) => gensee(['run', '--state-dir', st, '--op', op, '--no-dns', '--', ...cmd], 60_000);
  const seven = await run(uniqueName('gs-exit7'), ['/bin/sh', '-c', 'exit 7']);
  t.equal(seven.code, 7, `CMD's exit 7 is gensee run's (${seven.stderr.trim().slice(-200)})`);
  const nf = await run(uniqueName('gs-exit127'), ['/nonexistent/gensee-no-such-cmd']);
  t.equal(nf.code, 127, `CMD not found: 127 (${nf.stderr.trim().slice(-200)})`);
  // (the workload has a /tmp of its own: a file from the host's /etc)
  const ne = await run(uniqueName('gs-exit126'), ['/etc/passwd']);
  t.equal(ne.code, 126, `CMD not executable: 126 (${ne.stderr.trim().slice(-200)})`);
});
