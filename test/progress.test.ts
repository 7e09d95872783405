// Progress for long work (src/progress.ts, scripts/setup.sh): a status line
// on a terminal, redrawn with the time so far and cleared before any other
// output; plain lines, no escape codes, when not a terminal; NO_COLOR drops
// the bold. Checked on a real pseudo-terminal (util-linux `script`) as well.
import t from 'tap';
import * as path from 'node:path';
import { spawnSync } from 'node:child_process';
import { Progress, elapsed, type ProgressStream } from '../src/progress';
import { PACKAGE_ROOT } from '../src/addon';

const ESC = '\x1b';

function sink(tty: boolean): ProgressStream & { text: string } {
  const s = {
    isTTY: tty,
    text: '',
    write(x: string) {
      s.text += x;
      return true;
    },
  };
  return s;
}

t.test('elapsed', async (t) => {
  t.equal(elapsed(0), '0s');
  t.equal(elapsed(59_999), '59s');
  t.equal(elapsed(61_000), '1m01s');
});

t.test('not a terminal: one plain line per step, no escape codes', async (t) => {
  const err = sink(false);
  const out = sink(false);
  let now = 1000;
  const p = new Progress('bench', 3, err, [out, err], () => now);
  p.next('dataplane');
  out.write('a result line\n');
  now += 65_000;
  p.next('resolver');
  p.done('2 sections');
  t.equal(err.text, 'bench: [1/3] dataplane\nbench: [2/3] resolver\nbench: 2 sections in 1m05s\n');
  t.equal(out.text, 'a result line\n', 'the work\'s own output untouched');
  t.notOk(err.text.includes(ESC));
});

t.test('a terminal: a status line, cleared before other output, bold unless NO_COLOR', async (t) => {
  for (const noColor of [undefined, '1']) {
    const saved = process.env.NO_COLOR;
    if (noColor === undefined) delete process.env.NO_COLOR;
    else process.env.NO_COLOR = noColor;
    try {
      const err = sink(true);
      const out = sink(true);
      let now = 0;
      const p = new Progress('bench', 2, err, [out, err], () => now);
      now = 2_500;
      p.next('pause');
      t.match(err.text, new RegExp(`^\\r${ESC}\\[K${noColor ? '' : `${ESC}\\[1m`}[|/\\\\-] bench: \\[1/2\\] pause · 0s \\(2s in all\\)`), `drawn (NO_COLOR=${noColor})`);
      t.equal(err.text.includes(`${ESC}[1m`), !noColor, noColor ? 'NO_COLOR: no bold' : 'bold');
      out.write('result\n');
      t.equal(out.text, `\r${ESC}[Kresult\n`, 'the status line is cleared before the work writes');
      out.write('more\n');
      t.equal(out.text, `\r${ESC}[Kresult\nmore\n`, 'cleared once, not before every write');
      err.text = '';
      now = 4_000;
      p.done('1 section');
      t.equal(err.text, 'bench: 1 section in 4s\n', 'done: one plain line');
      out.write('after\n');
      t.equal(out.text.endsWith('more\nafter\n'), true, 'the streams are as they were after done');
    } finally {
      if (saved === undefined) delete process.env.NO_COLOR;
      else process.env.NO_COLOR = saved;
    }
  }
});

/** CMD under a real pseudo-terminal: what the terminal got */
function onPty(cmd: string, env: NodeJS.ProcessEnv = {}): string {
  const r = spawnSync('script', ['-qec', cmd, '/dev/null'], { encoding: 'utf8', env: { ...process.env, ...env }, timeout: 120_000 });
  if (r.error) throw r.error;
  return r.stdout;
}

t.test('on a real terminal and through a pipe', async (t) => {
  const demo = `${process.execPath} -e "const {Progress}=require('${path.join(PACKAGE_ROOT, 'dist', 'src', 'progress.js')}');const p=new Progress('demo',2);p.next('one');setTimeout(()=>{console.log('out');p.next('two');setTimeout(()=>p.done('ok'),700)},700)"`;
  const tty = onPty(demo, { NO_COLOR: '' });
  t.match(tty, new RegExp(`\\r${ESC}\\[K${ESC}\\[1m. demo: \\[1/2\\] one · 0s`), 'a pty: the status line, bold');
  t.match(tty, /\r\x1b\[Kout\r?\n/, 'cleared before the output');
  t.match(tty, /demo: ok in \d+s\r?\n/);
  const plain = spawnSync('sh', ['-c', `${demo} 2>&1 | cat`], { encoding: 'utf8' }).stdout;
  t.match(plain, /^demo: \[1\/2\] one\nout\ndemo: \[2\/2\] two\ndemo: ok in \d+s\n$/, 'a pipe: plain lines only');

  // scripts/setup.sh on a machine that has everything: its steps, bold on a terminal only
  const setup = path.join(PACKAGE_ROOT, 'scripts', 'setup.sh');
  const st = onPty(setup, { NO_COLOR: '' });
  t.match(st, new RegExp(`${ESC}\\[1msetup: \\[1/\\d\\] \\d+ Debian packages checked`), 'setup.sh on a terminal: numbered, bold');
  const nc = onPty(setup, { NO_COLOR: '1' });
  t.match(nc, /setup: \[1\/\d\] \d+ Debian packages checked/);
  t.notOk(nc.includes(`${ESC}[1m`), 'NO_COLOR: no bold');
  const piped = spawnSync('sh', ['-c', `${setup} 2>&1 | cat`], { encoding: 'utf8' }).stdout;
  t.match(piped, /^setup: \[1\/\d\] \d+ Debian packages checked: .*\n(.*\n)*setup: ok\n$/);
  t.notOk(piped.includes(ESC), 'a pipe: no escape codes');
});
