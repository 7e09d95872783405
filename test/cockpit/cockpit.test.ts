// The cockpit page (issue 30) in a real headless Chromium (Debian's
// chromium, driven by playwright-core): a real `gensee run` whose workload
// makes real connects on loopback when told to. The page, loaded with the
// operation token, shows the fault rows with their resolutions (a lease, a
// deny) and the counters within 2 s of the connects; a wrong token shows a
// clear refusal, recorded by gensee. A screenshot is saved
// (GENSEE_COCKPIT_SCREENSHOT=FILE keeps it there, e.g. docs/cockpit.png).
import t from 'tap';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as path from 'node:path';
import { chromium, type Browser } from 'playwright-core';
import type { PageFunction } from 'playwright-core/types/structs';
import { GENSEE_BIN, requireKernel, uniqueName, freePort, tcpServer, waitFor } from '../helpers/kernel';
import { Proc } from '../helpers/gensee';
import { shortStateDir } from '../helpers/supervisor';
import { startupDeadline } from '../helpers/trials';

const CHROMIUM = process.env.GENSEE_CHROMIUM ?? '/usr/bin/chromium';
/** the bound: a row or a counter shows within this of its event */
const SHOWS_WITHIN_MS = 2000;

type Line = Record<string, unknown>;

// the little of the DOM the page predicates use (this project compiles without lib "dom")
interface El {
  textContent: string | null;
  querySelector(s: string): El | null;
}
declare const document: { getElementById(id: string): El | null; querySelectorAll(s: string): Iterable<El> };
const lines = (file: string): Line[] =>
  fs.existsSync(file)
    ? fs
        .readFileSync(file, 'utf8')
        .split('\n')
        .filter((l) => l.endsWith('}'))
        .map((l) => JSON.parse(l) as Line)
    : [];

t.test('the cockpit shows a real fault, lease and deny live; a wrong token is refused', async (t) => {
  if (!requireKernel(t)) return;
  if (!fs.existsSync(CHROMIUM)) {
    t.fail(`no Chromium at ${CHROMIUM}: scripts/setup.sh installs Debian's chromium`);
    return;
  }
  const st = shortStateDir(t);
  fs.chmodSync(st, 0o755);
  const op = uniqueName('gs-cockpit');
  const dir = path.join(st, 'network-operations', op);
  const allowed = await tcpServer(t);
  const denied = await freePort();
  const held: net.Socket[] = [];
  const control = net.createServer((s) => held.push(s.on('error', () => undefined)));
  await new Promise<void>((r) => control.listen(0, '127.0.0.1', () => r()));
  const controlPort = (control.address() as net.AddressInfo).port;
  t.teardown(() => {
    for (const s of held) s.destroy();
    control.close();
  });
  const leases = [allowed.port, controlPort].map((p) => ({ network: { protocol: 'tcp', cidr: '127.0.0.1/32', ports: String(p) }, ttl_s: 120 }));
  const policy = path.join(st, 'policy.json');
  fs.writeFileSync(policy, JSON.stringify({ schema: 1, grants: [], leases, delegate: [] }));
  const listenPort = await freePort();
  // waits for "go", connects (a lease, then a deny), waits for "go" again
  const script = [
    `exec 6<>/dev/tcp/127.0.0.1/${controlPort}; read -u 6 x`,
    `exec 3<>/dev/tcp/127.0.0.1/${allowed.port}; exec 3<&-`,
    `(exec 4<>/dev/tcp/127.0.0.1/${denied}) 2>/dev/null`,
    `exec 3<>/dev/tcp/127.0.0.1/${allowed.port}; exec 3<&-`,
    'read -u 6 x; exit 0',
  ].join('; ');
  const run = new Proc(GENSEE_BIN, ['run', '--state-dir', st, '--op', op, '--no-dns', '--policy', policy, '--listen', `127.0.0.1:${listenPort}`, '--', '/bin/bash', '-c', script]);
  t.teardown(() => run.end());
  await waitFor(() => held.length > 0 || !run.running, startupDeadline(), 20);
  t.ok(run.running && held.length === 1, `the workload is up and waits (${run.stderr.slice(-300)})`);
  const token = fs.readFileSync(path.join(dir, 'token'), 'utf8').trim();
  const base = `http://127.0.0.1:${listenPort}`;

  const browser: Browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'], timeout: startupDeadline() });
  t.teardown(() => browser.close());
  const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  const pageErrors: string[] = [];
  page.on('pageerror', (e) => pageErrors.push(e.message));

  // a wrong token: a clear refusal on the page, and gensee records it
  await page.goto(`${base}/cockpit#token=${'A'.repeat(token.length)}`);
  await page.waitForSelector('#refusal:not([hidden])', { timeout: startupDeadline() });
  const refusal = await page.textContent('#refusal');
  t.match(refusal, /Refused: .*not the operation token \(HTTP 401\)/, `the page says it was refused: ${refusal}`);
  t.equal(await page.isVisible('#faults'), false, 'and shows no operation data');
  await waitFor(() => lines(path.join(dir, 'faults.jsonl')).some((l) => l.kind === 'refusal' && l.reason === 'unauthenticated_peer' && /cockpit|HTTP 401/.test(String(l.detail))), startupDeadline(), 50);
  t.pass('the wrong token is recorded as a refused peer in faults.jsonl');
  await page.goto('about:blank');
  await page.goto(`${base}/cockpit`);
  await page.waitForSelector('#refusal:not([hidden])', { timeout: startupDeadline() });
  t.match(await page.textContent('#refusal'), /No token/, 'no token at all: the page says how to give one');

  // the operation token: live
  await page.goto('about:blank');
  await page.goto(`${base}/cockpit#token=${token}`);
  // predicates run in the page as functions (a string would be eval, which the page's CSP forbids)
  const until = <A>(fn: PageFunction<A, unknown>, arg: A, timeout: number) => page.waitForFunction(fn, arg, { timeout });
  const rowWith = (parts: string[]) => [...document.querySelectorAll('#faults tbody tr')].some((r) => parts.every((x) => (r.textContent ?? '').includes(x)));
  await until((id) => document.getElementById(id)?.textContent === 'live', 'status', startupDeadline());
  t.equal(await page.textContent('#op'), op, 'the page names the operation');
  t.equal(await page.textContent('#mode'), 'enforce', 'and its mode');
  const verifiedFirst = String(await page.textContent('#verify'));
  t.match(verifiedFirst, /^live: ok \(faults\.jsonl \d+, .*lines\) · checked \d\d:\d\d:\d\d$/, `and verify, with when it ran: ${verifiedFirst}`);
  const faultLinesIn = (text: string) => Number(/faults\.jsonl (\d+)/.exec(text)?.[1]);
  // the control connect happened before the page loaded: replayed from the log
  await until(rowWith, [`127.0.0.1:${controlPort}`], SHOWS_WITHIN_MS);
  t.pass('the fault before the page opened is replayed');

  held[0].write('go\n');
  const t0 = Date.now();
  const rowShows = (port: number, verdict: string) => until(rowWith, [`127.0.0.1:${port}`, verdict], SHOWS_WITHIN_MS + 500);
  await rowShows(allowed.port, 'retry_after_lease (lease_installed)');
  const leaseMs = Date.now() - t0;
  await rowShows(denied, 'deny (policy_denied)');
  const denyMs = Date.now() - t0;
  t.ok(leaseMs <= SHOWS_WITHIN_MS, `the leased fault's row with its resolution showed ${leaseMs} ms after the connects began`);
  t.ok(denyMs <= SHOWS_WITHIN_MS, `the denied fault's row showed ${denyMs} ms after the connects began`);
  await until(() => document.getElementById('c-denied')?.textContent === '1' && document.getElementById('c-faults')?.textContent === '3', null, SHOWS_WITHIN_MS);
  t.ok(Date.now() - t0 <= SHOWS_WITHIN_MS + 200, `the fault and deny counters showed (${Date.now() - t0} ms)`);
  const leaseText = (dest: string) => [...document.querySelectorAll('#leases tbody tr')].find((r) => (r.textContent ?? '').includes(dest) && / s$/.test(r.querySelector('.left')?.textContent ?? ''))?.textContent ?? false;
  const leaseRow = await until(leaseText, `127.0.0.1:${allowed.port}`, SHOWS_WITHIN_MS);
  const first = String(await leaseRow.jsonValue());
  t.match(first, new RegExp(`^tcp 127\\.0\\.0\\.1:${allowed.port}\\d+(\\d+) s`), `the lease is listed with its expiry: ${first}`);
  const left = (x: string) => Number(/(\d+) s\S*$/.exec(x.replace(/unlimited$/, ''))?.[1]);
  await until(
    ([dest, was]) => [...document.querySelectorAll('#leases tbody tr')].some((r) => (r.textContent ?? '').includes(dest as string) && Number((r.querySelector('.left')?.textContent ?? '').split(' ')[0]) < (was as number)),
    [`127.0.0.1:${allowed.port}`, left(first)] as const,
    3000,
  );
  t.pass('and counting down');
  // the kernel's allow counts come with the sampler's reading (every 1 s): the counter and the chart
  const counted = lines(path.join(dir, 'counters.jsonl'));
  const sampleMs = Number((counted.find((l) => l.kind === 'sampler' && l.event === 'start') ?? {}).interval_ms ?? 1000);
  await until(() => Number(document.getElementById('c-allowed')?.textContent) >= 3, null, SHOWS_WITHIN_MS + sampleMs + 500);
  const chartMs = Date.now() - t0;
  t.ok(chartMs <= SHOWS_WITHIN_MS + sampleMs + 500, `the allowed counter (kernel counters) reached 3 ${chartMs} ms after the connects (the sampler reads every ${sampleMs} ms)`);
  await page.waitForSelector(`.dest[data-dest="tcp 127.0.0.1:${allowed.port}"]`, { timeout: SHOWS_WITHIN_MS });
  t.pass('the per-destination chart has the allowed destination');
  const leasesShown = await page.textContent('#c-leases');
  t.equal(leasesShown, '2', 'two live leases');
  const allowedShown = Number(await page.textContent('#c-allowed'));
  const fromFile = lines(path.join(dir, 'counters.jsonl')).reduce((n, l) => n + (l.kind === 'allow' && l.source !== 'nft' ? Number(l.delta) : 0), 0);
  t.equal(allowedShown, fromFile, `the allowed counter is counters.jsonl's (${fromFile})`);

  // verify follows the evidence: run again after the new lines, not once at load
  const grown = lines(path.join(dir, 'faults.jsonl')).length;
  await until(
    ([was, want]) => {
      const m = /^live: ok \(faults\.jsonl (\d+)/.exec(document.getElementById('verify')?.textContent ?? '');
      return m !== null && Number(m[1]) > (was as number) && Number(m[1]) >= (want as number);
    },
    [faultLinesIn(verifiedFirst), grown] as const,
    SHOWS_WITHIN_MS + 4000,
  );
  const verifiedNow = String(await page.textContent('#verify'));
  t.ok(faultLinesIn(verifiedNow) >= grown && faultLinesIn(verifiedNow) > faultLinesIn(verifiedFirst), `verify ran again as the evidence grew: ${verifiedFirst} → ${verifiedNow}`);

  const shot = process.env.GENSEE_COCKPIT_SCREENSHOT ?? path.join(st, 'cockpit.png');
  await page.screenshot({ path: shot, fullPage: true });
  t.ok(fs.statSync(shot).size > 10_000, `a screenshot saved: ${shot}`);
  t.strictSame(pageErrors, [], 'no script errors on the page');

  held[0].write('go\n');
  const exit = await run.exited;
  t.equal(exit.code, 0, 'the workload and gensee run end with 0');
});
