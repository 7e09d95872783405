// The cockpit: one page on the --listen server that shows an operation live
// (faults and their resolutions, leases counting down, per-destination
// allow/deny per second, boundary events, the watchdog's attention, verify,
// the mode), fed by the live stream. No dependencies and no build step.
//
//   GET /cockpit          the page (static: it holds no operation data)
//   GET /cockpit/app.js   its script (src/cockpit/app-script.ts)
//   GET /cockpit/whoami   behind the token: the operation, its mode, verify
//   GET /cockpit/verify   behind the token: verify again; the page asks
//                         whenever the stream brought new lines (at most
//                         every 2 s), so the status follows the evidence
// Everything the page shows comes through /cockpit/whoami, /cockpit/verify
// and the stream,
// both behind the operation token; a wrong token is refused (401) and
// recorded by the stream like any other refused peer.
import * as fs from 'node:fs';
import * as path from 'node:path';
import type * as http from 'node:http';
import { verifyOperation } from '../evidence/verify';
import { openOperation, opDir } from '../state/operation';
import { APP_JS } from './app-script';

const CSP = "default-src 'none'; script-src 'self'; style-src 'unsafe-inline'; connect-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

export const PAGE_HTML = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<link rel="icon" href="data:,">
<title>gensee cockpit</title>
<style>
  body { font: 14px/1.4 system-ui, sans-serif; margin: 0; background: #f6f7f9; color: #1d232b; }
  header { display: flex; gap: 1.5em; align-items: baseline; padding: .7em 1.2em; background: #1d232b; color: #fff; }
  header h1 { font-size: 1.1em; margin: 0; }
  header .k { opacity: .7; }
  #status.ok { color: #6fdc8c; } #status.bad { color: #ff8389; }
  main { padding: 1em 1.2em; display: grid; grid-template-columns: 1fr 1fr; gap: 1em; }
  section { background: #fff; border: 1px solid #dde1e6; border-radius: 6px; padding: .6em .9em; overflow: auto; }
  section.wide { grid-column: 1 / 3; }
  h2 { font-size: 1em; margin: .2em 0 .5em; }
  .counters { display: flex; gap: 1.2em; flex-wrap: wrap; }
  .counter b { display: block; font-size: 1.6em; }
  table { border-collapse: collapse; width: 100%; font-size: .92em; }
  td, th { text-align: left; padding: .15em .5em; border-bottom: 1px solid #eef0f3; white-space: nowrap; }
  tr.deny td { color: #a2191f; } tr.allow td { color: #0e6027; } tr.open td { color: #8a6100; } tr.expired td { color: #8d8d8d; }
  #attention { background: #fff1c2; border: 1px solid #f1c21b; padding: .6em 1.2em; }
  #refusal { margin: 2em 1.2em; padding: 1em; background: #fff1f1; border: 1px solid #da1e28; color: #a2191f; font-weight: 600; }
  .dest { display: flex; gap: .8em; align-items: center; } .dname { width: 16em; } rect.allow { fill: #24a148; } rect.deny { fill: #da1e28; }
  .quiet { color: #6f6f6f; } .dcount { white-space: nowrap; }
  [hidden] { display: none !important; }
</style>
<script src="/cockpit/app.js" defer></script>
</head>
<body>
<header><h1>gensee cockpit</h1><span><span class="k">operation</span> <b id="op">?</b></span><span><span class="k">mode</span> <b id="mode">?</b></span><span><span class="k">verify</span> <b id="verify">?</b></span><span><span class="k">stream</span> <b id="status">connecting</b></span></header>
<div id="attention" hidden></div>
<div id="refusal" role="alert" hidden></div>
<main id="main">
  <section class="wide"><div class="counters">
    <div class="counter"><b id="c-faults">0</b>faults</div>
    <div class="counter"><b id="c-open">0</b>waiting</div>
    <div class="counter"><b id="c-allowed">0</b>allowed (kernel counters)</div>
    <div class="counter"><b id="c-denied">0</b>denied</div>
    <div class="counter"><b id="c-refused">0</b>refused</div>
    <div class="counter"><b id="c-leases">0</b>live leases</div>
    <div class="counter"><b id="c-events">0</b>boundary events</div>
  </div></section>
  <section class="wide"><h2>Faults and resolutions</h2><table id="faults"><thead><tr><th>at</th><th>fault</th><th>source</th><th>destination</th><th>resolution</th><th>took</th></tr></thead><tbody></tbody></table></section>
  <section><h2>Leases</h2><table id="leases"><thead><tr><th>destination</th><th>gen</th><th>expires in</th><th>uses</th></tr></thead><tbody></tbody></table></section>
  <section><h2>Allow / deny per second (last 60 s)</h2><div id="chart"><p class="quiet">no traffic counted yet</p></div></section>
  <section class="wide"><h2>Boundary events</h2><table id="events"><thead><tr><th>at</th><th>kind</th><th>control</th><th>detail</th></tr></thead><tbody></tbody></table></section>
</main>
</body>
</html>
`;

const pathOf = (req: http.IncomingMessage): string => new URL(req.url ?? '/', 'http://x').pathname;

function send(res: http.ServerResponse, status: number, type: string, body: string): void {
  res.writeHead(status, { 'Content-Type': type, 'Cache-Control': 'no-store', 'Content-Security-Policy': CSP, 'X-Content-Type-Options': 'nosniff', 'Referrer-Policy': 'no-referrer' });
  res.end(body);
}

export interface VerifyStatus {
  /** "ok (faults.jsonl 12, ... lines)", "N problems: gensee verify --op OP", or "not checked: WHY" */
  verify: string;
  ok: boolean;
  /** when this verify ran (ISO) */
  checked_at: string;
}

/**
 * verify, run again only when a log changed (size, mtime or inode of any
 * file in the operation directory) since the last run; callers at the same
 * time share one run.
 */
export function liveVerifier(stateDir: string, op: string): () => Promise<VerifyStatus> {
  let last: { key: string; status: VerifyStatus } | null = null;
  let running: Promise<VerifyStatus> | null = null;
  const stamp = (): string => {
    try {
      const dir = opDir(stateDir, op);
      return fs
        .readdirSync(dir)
        .filter((n) => n.endsWith('.jsonl'))
        .sort()
        .map((n) => {
          const st = fs.lstatSync(path.join(dir, n));
          return `${n}:${st.ino}:${st.size}:${st.mtimeMs}`;
        })
        .join('|');
    } catch (e) {
      return `unreadable:${(e as Error).message}`;
    }
  };
  const run = async (key: string): Promise<VerifyStatus> => {
    const checked_at = new Date().toISOString();
    let status: VerifyStatus;
    try {
      const v = await verifyOperation(stateDir, op);
      const problems = v.logs.reduce((n, l) => n + l.problems.length, 0);
      status = {
        ok: v.ok,
        verify: v.ok ? `ok (${v.logs.map((l) => `${l.file} ${l.lines}`).join(', ')} lines)` : `${problems} problem${problems === 1 ? '' : 's'}: gensee verify --op ${op}`,
        checked_at,
      };
    } catch (e) {
      status = { ok: false, verify: `not checked: ${(e as Error).message}`, checked_at };
    }
    last = { key, status };
    return status;
  };
  return () => {
    if (running) return running;
    const key = stamp();
    if (last && last.key === key) return Promise.resolve(last.status);
    running = run(key).finally(() => (running = null));
    return running;
  };
}

/** the cockpit's routes; /cockpit/whoami and /cockpit/verify without the token are left to the stream (401, recorded) */
export function cockpitRoute(o: { stateDir: string; op: string }): (req: http.IncomingMessage, res: http.ServerResponse, authorized: boolean) => boolean {
  const verify = liveVerifier(o.stateDir, o.op);
  return (req, res, authorized) => {
    const p = pathOf(req);
    if (req.method !== 'GET') return false;
    if (p === '/cockpit' || p === '/cockpit/') {
      send(res, 200, 'text/html; charset=utf-8', PAGE_HTML);
      return true;
    }
    if (p === '/cockpit/app.js') {
      send(res, 200, 'text/javascript; charset=utf-8', APP_JS);
      return true;
    }
    if (p === '/cockpit/whoami' && authorized) {
      // the mode is the operation's own (audit or enforce), read from its record
      Promise.all([openOperation(o.stateDir, o.op).then((r) => r.mode, () => 'unknown'), verify()]).then(
        ([mode, v]) => send(res, 200, 'application/json', JSON.stringify({ op: o.op, mode, verify: v.verify, checked_at: v.checked_at })),
        (e: Error) => send(res, 500, 'text/plain', `gensee: cockpit: ${e.message}\n`),
      );
      return true;
    }
    if (p === '/cockpit/verify' && authorized) {
      verify().then(
        (v) => send(res, 200, 'application/json', JSON.stringify(v)),
        (e: Error) => send(res, 500, 'text/plain', `gensee: cockpit: ${e.message}\n`),
      );
      return true;
    }
    return false;
  };
}
