// The executor (DESIGN.md "Delegated executor and keyed capabilities"): runs
// one tool call on the operation's behalf, and recovers the calls a crashed
// executor left `started`.
//
// The executor never evaluates a tool module: its top-level code, like its
// tools' code, is the tool author's, and runs only in a tool process
// (src/executor/tool-main.ts) in its own cgroup under the operation's (the
// hooks on the operation's cgroup apply to it), registered with the
// supervisor so a hook refusal names it, started through gensee-exec in
// reject mode, as the operation's unprivileged identity, the state directory
// hidden, gensee's code read-only. The executor holds only data: the
// module's registration (ids, effect classes, key fields, argument schemas),
// which it checks (checkRegistration) and derives keys from.
//
// A call: one tool process (tool-main call, in cgroup exec-<call id>)
// evaluates the module and reports its registration on fd 3 (and a Queryable
// tool's request id for these arguments); the executor checks it and the
// arguments against it, derives the key (Idempotent), journals the call,
// durably, in calls.jsonl, and only then sends the capability handle; the
// tool runs; the executor serves the handle (src/executor/server.ts: it
// performs the writes, from outside the boundary, with the key set),
// journals the outcome, kills the tool's cgroup and removes it. Recovery
// registers the module in a process of its own (tool-main register), then
// looks calls up (tool-main lookup) or retries them (tool-main run).
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Duplex } from 'node:stream';
import { randomBytes } from 'node:crypto';
import { request } from 'undici';
import { GenseeError } from '../errors';
import { PACKAGE_ROOT } from '../addon';
import { cgroupId, isCgroup2Dir, killCgroupAndWait, removeEmptyCgroup } from '../cgroup';
import { limitCgroupsToJoin } from '../resources';
import { openOperation, opDir, readKey, OperationRecord } from '../state/operation';
import { identityAlive, readStartTimeTicks } from '../resolver/subject';
import { spawnInBoundary, workloadIdFor } from '../pause/launch';
import { checkRegistration, validateArgs, ToolRegistration, LookupIO } from './tool';
import { deriveKey } from './key';
import { CallJournal, CallEntry, CallClass, CallState, CALL_ID_RE } from './journal';
import { registerToolCgroup } from './report';
import { HANDLE_ENV, handleToken, MAX_FRAME, MAX_RESPONSE_BODY, REQUEST_ID_ENV, TOOL_ARGS_ENV } from './handle';
import { HandleServer, LookupServer, ServedWrite, targetOf } from './server';
import type { Fault } from '../protocol/types';
import { encodeFault } from '../protocol/codec';
import { submitFault } from '../resolver/client';

/** the recorded arguments of a call are at most this long (JSON): they travel in the tool's environment */
export const MAX_ARGS_BYTES = 64 << 10;
/** a tool's stdout (its result line) and stderr are kept up to this */
const MAX_TOOL_OUTPUT = 1 << 20;
/** a tool call may run this long by default */
export const DEFAULT_TOOL_TIMEOUT_MS = 300_000;
/** once the tool is gone, its handle socket has this long to deliver what is in flight */
const HANDLE_DRAIN_MS = 2000;

const TOOL_MAIN = path.join(__dirname, 'tool-main.js');
/** a module's registration (its top-level code included) may run this long */
const REGISTER_TIMEOUT_MS = 60_000;

export interface ToolRun {
  /** completed: the tool exited 0 with {"ok":true}; failed otherwise */
  state: 'completed' | 'failed';
  result: unknown;
  error: string | null;
  exit: { code: number | null; signal: NodeJS.Signals | null };
  writes: ServedWrite[];
  stderr: string;
}

export interface CallOutcome extends ToolRun {
  op: string;
  call_id: string;
  tool_id: string;
  class: CallClass;
  key: string | null;
  request_id: string | null;
}

export interface CallOptions {
  stateDir: string;
  op: string;
  toolsModule: string;
  toolId: string;
  args: unknown;
  callId?: string;
  timeoutMs?: number;
  /** told once the call's `started` line is durable, before the tool starts */
  onStarted?: (entry: CallEntry) => void;
}

interface OpContext {
  stateDir: string;
  op: string;
  rec: OperationRecord;
  opKey: Buffer;
  modulePath: string;
  timeoutMs: number;
}

/** The operation, which a running supervisor must serve (it records what the executor refuses and names the tool in hook refusals). */
async function servedOperation(stateDir: string, op: string): Promise<OperationRecord> {
  const rec = await openOperation(stateDir, op);
  if (rec.state !== 'active') throw new GenseeError('E_STATE', `operation ${op} is ${rec.state}: a tool call needs a running supervisor`);
  if (!rec.resolver || !identityAlive(rec.resolver)) {
    throw new GenseeError('E_STATE', `operation ${op} has no running supervisor (start one with gensee supervise or gensee run): the executor reports refused writes to it`);
  }
  if (!isCgroup2Dir(rec.cgroup)) throw new GenseeError('E_STATE', `operation ${op}'s cgroup ${rec.cgroup} is not a cgroup v2 directory`);
  return rec;
}

function modulePathOf(m: string): string {
  if (!m) throw new GenseeError('E_USAGE', '--tools MODULE is required');
  const abs = path.resolve(m);
  if (!fs.existsSync(abs)) throw new GenseeError('E_USAGE', `tools module ${abs} does not exist`);
  return abs;
}

function toolOf(tools: Map<string, ToolRegistration>, id: string, modulePath: string): ToolRegistration {
  const t = tools.get(id);
  if (!t) throw new GenseeError('E_USAGE', `no tool "${id}" in ${modulePath} (it has: ${[...tools.keys()].join(', ') || 'none'})`);
  return t;
}

/**
 * Ask the supervisor whether this tool may write to url (a delegate rule
 * naming it: src/backends/executor.ts), as an application-effect fault it
 * records. Resolves to null when allowed, else the deny reason.
 */
async function authorizeWrite(ctx: OpContext, toolId: string, callId: string, n: number, pid: number, url: URL): Promise<string | null> {
  const rec = await openOperation(ctx.stateDir, ctx.op);
  const faultId = `ew-${callId}-${n}`;
  const fault: Fault = {
    schema: 2,
    operation_id: ctx.op,
    fault_id: faultId,
    subject: { process: { pid, start_time_ticks: readStartTimeTicks(pid) ?? 0 } },
    effect: { application: { name: toolId, action: 'write', target: targetOf(url.href) } },
    source: 'executor',
    observed_at_boot_ns: 0n,
    cgroup_id: 0n,
  };
  const r = await submitFault({ socketPath: path.join(opDir(ctx.stateDir, ctx.op), 'supervisor.sock'), body: encodeFault(fault), faultId, key: ctx.opKey, resolver: rec.resolver });
  if (!r.authenticated) return `unauthenticated answer: ${r.detail ?? ''}`;
  return r.resolution.action === 'continue_already_authorized' ? null : r.resolution.reason;
}

export function newCallId(): string {
  return `c${Date.now().toString(36)}-${randomBytes(5).toString('hex')}`;
}

/** the tool's own cgroup: a child of the operation's, so the operation's hooks apply */
export function toolCgroupPath(rec: OperationRecord, callId: string): string {
  return path.join(rec.cgroup, `exec-${callId}`);
}

/** Kill whatever runs in a tool's cgroup and remove it (a crashed executor's tool, or ours when done). */
async function disposeToolCgroup(cg: string): Promise<void> {
  await killCgroupAndWait(cg);
  removeEmptyCgroup(cg);
}

function childrenOf(pid: number): number[] {
  try {
    return fs.readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number);
  } catch {
    return [];
  }
}

/** gensee-exec → its init → the tool: the tool's host pid, or 0 */
function toolPidOf(launcher: number): number {
  const [init] = childrenOf(launcher);
  if (!init) return 0;
  const [cmd] = childrenOf(init);
  return cmd ?? 0;
}

function capped(): { add(b: Buffer): void; text(): string } {
  const parts: Buffer[] = [];
  let size = 0;
  return {
    add(b: Buffer) {
      if (size >= MAX_TOOL_OUTPUT) return;
      const take = b.subarray(0, MAX_TOOL_OUTPUT - size);
      parts.push(take);
      size += take.length;
    },
    text: () => Buffer.concat(parts).toString('utf8'),
  };
}

type ResultLine = { ok?: unknown; result?: unknown; error?: unknown; code?: unknown };

/** the tool process's result line (the last JSON line on its stdout) */
function resultLine(stdout: string): ResultLine | null {
  const lines = stdout.split('\n').filter((l) => l.trim().startsWith('{'));
  for (let i = lines.length - 1; i >= 0; i--) {
    try {
      const v = JSON.parse(lines[i]) as unknown;
      if (v !== null && typeof v === 'object' && !Array.isArray(v)) return v as ResultLine;
    } catch {
      /* not the result */
    }
  }
  return null;
}

interface BoundaryRun<S> {
  exit: { code: number | null; signal: NodeJS.Signals | null };
  /** the process's result line (the last JSON line on its stdout) */
  line: ResultLine | null;
  stderr: string;
  timedOut: boolean;
  /** what served its fd 3 */
  server: S | null;
}

interface BoundarySpec<S> {
  /** its own cgroup: a child of the operation's, so the operation's hooks apply */
  cg: string;
  /** what hook refusals from that cgroup name */
  toolId: string;
  callId: string;
  /** tool-main's arguments (a mode, the module, a tool) */
  argv: string[];
  /** its whole environment besides PATH and HOME */
  env: Record<string, string>;
  timeoutMs: number;
  /** serves its fd 3 (a unix stream socketpair); none: it has no fd 3 */
  serve?: (sock: Duplex, toolPid: () => number) => S;
}

/**
 * Run tool-main inside the boundary (see the top of this file): the only way
 * any code of a tool module runs. Its stdout and stderr are the executor's to
 * read, never passed on to the executor's own stdout.
 */
async function inBoundary<S extends { drain(ms: number): Promise<void> }>(ctx: OpContext, spec: BoundarySpec<S>): Promise<BoundaryRun<S>> {
  const cg = spec.cg;
  // a crashed executor's process for this cgroup may still be there
  await disposeToolCgroup(cg);
  fs.mkdirSync(cg);
  try {
    // before it starts: a hook refusal from its cgroup names the tool
    await registerToolCgroup(ctx.stateDir, ctx.op, { cgroupId: cgroupId(cg), toolId: spec.toolId, callId: spec.callId });
    const env: NodeJS.ProcessEnv = { PATH: process.env.PATH ?? '/usr/local/bin:/usr/bin:/bin', HOME: '/', ...spec.env };
    // reject mode (no pause: the hooks deny what has no lease), the
    // operation's own unprivileged identity, fd 3 (when served) a unix
    // stream socketpair whose other end is child.stdio[3]
    const child = spawnInBoundary({
      cgroup: cg,
      // the operation's pids and memory limits bound its tools too (cgroup2: cg is inside the operation's cgroup)
      joinCgroups: limitCgroupsToJoin(ctx.rec.resources),
      argv: [process.execPath, TOOL_MAIN, ...spec.argv],
      handleFd: spec.serve ? 'pipe' : undefined,
      identity: { kind: 'userns', ...workloadIdFor(ctx.op) },
      // the evidence, the key and the sockets have no name in the tool's view
      hide: [ctx.stateDir],
      // gensee's own code is not the tool's to change
      ro: ['dist', 'bin', 'obj', 'build', 'node_modules'].map((d) => path.join(PACKAGE_ROOT, d)).filter((d) => fs.existsSync(d)),
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
      cwd: '/',
    });
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
    const spawned = await new Promise<Error | null>((resolve) => {
      child.once('spawn', () => resolve(null));
      child.once('error', (e) => resolve(e));
    });
    if (spawned) throw new GenseeError('E_STATE', `cannot start gensee-exec: ${spawned.message}`);
    const out = capped();
    const err = capped();
    child.stdout!.on('data', (b: Buffer) => out.add(b));
    child.stderr!.on('data', (b: Buffer) => err.add(b));
    let toolPid = 0;
    const pidOfTool = () => toolPid || (toolPid = toolPidOf(child.pid!));
    const server = spec.serve ? spec.serve(child.stdio[3] as Duplex, pidOfTool) : null;
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      void killCgroupAndWait(cg).catch(() => undefined);
      child.kill('SIGKILL');
    }, spec.timeoutMs);
    const exit = await exited;
    clearTimeout(timer);
    // its children die with it; then fd 3 has nothing more to say
    await killCgroupAndWait(cg);
    await server?.drain(HANDLE_DRAIN_MS);
    return { exit, line: resultLine(out.text()), stderr: err.text(), timedOut, server };
  } finally {
    await disposeToolCgroup(cg);
  }
}

/** why a tool process failed, for a person: its error, else its exit and the tail of its stderr (one line, bounded) */
function failureOf(r: BoundaryRun<unknown>, timeoutMs: number): string {
  if (r.timedOut) return `the tool ran longer than ${timeoutMs} ms and was killed`;
  if (r.line && typeof r.line.error === 'string') return oneLine(r.line.error, 500);
  const tail = r.stderr.trim().split('\n').slice(-3).join(' | ');
  return `the tool exited ${r.exit.code ?? r.exit.signal} without a result${tail ? `: ${oneLine(tail, 500)}` : ''}`;
}

function oneLine(s: string, max: number): string {
  const t = s.replace(/[\x00-\x1f\x7f]+/g, ' ');
  return t.length > max ? t.slice(0, max - 1) + '…' : t;
}

function succeeded(r: BoundaryRun<unknown>): boolean {
  return r.exit.code === 0 && r.line?.ok === true && !r.timedOut;
}

/** a tool process's failure, as the refusal of a call or registration it was to report for */
function registrationFailure(ctx: OpContext, r: BoundaryRun<unknown>, timeoutMs: number): GenseeError {
  const why = failureOf(r, timeoutMs);
  return new GenseeError(r.line?.code === 'E_USAGE' ? 'E_USAGE' : 'E_SCHEMA', why.includes(ctx.modulePath) ? why : `tools module ${ctx.modulePath}: ${why}`);
}

/**
 * The module's registration (recover), from a tool process of its own inside
 * the boundary, its hook refusals naming `module:<file>` (the executor never
 * evaluates the module): its tools as data, checked here (checkRegistration).
 */
async function registerTools(ctx: OpContext): Promise<Map<string, ToolRegistration>> {
  const where = `tools module ${ctx.modulePath}`;
  const regId = `r${randomBytes(6).toString('hex')}`;
  const timeoutMs = Math.min(ctx.timeoutMs, REGISTER_TIMEOUT_MS);
  const r = await inBoundary(ctx, {
    cg: path.join(ctx.rec.cgroup, `exec-${regId}`),
    toolId: `module:${path.basename(ctx.modulePath)}`.slice(0, 200),
    callId: regId,
    argv: ['register', ctx.modulePath],
    env: {},
    timeoutMs,
  });
  if (!succeeded(r)) throw registrationFailure(ctx, r, timeoutMs);
  return checkRegistration(r.line?.result, where).tools;
}

/** Run one call's tool in its own cgroup inside the boundary and serve its handle. */
async function runTool(ctx: OpContext, tool: ToolRegistration, entry: CallEntry): Promise<ToolRun> {
  let writeSeq = 0;
  const r = await inBoundary(ctx, {
    cg: toolCgroupPath(ctx.rec, entry.call_id),
    toolId: tool.id,
    callId: entry.call_id,
    argv: ['run', ctx.modulePath, tool.id],
    env: {
      [HANDLE_ENV]: JSON.stringify({ call_id: entry.call_id, key: entry.key, token: handleToken(ctx.opKey, entry.call_id, entry.key) }),
      [TOOL_ARGS_ENV]: JSON.stringify(entry.args),
    },
    timeoutMs: ctx.timeoutMs,
    serve: (sock, pidOfTool) =>
      new HandleServer(sock, {
        stateDir: ctx.stateDir,
        op: ctx.op,
        opKey: ctx.opKey,
        call: { callId: entry.call_id, toolId: tool.id, cls: entry.class, key: entry.key, requestId: entry.request_id },
        pid: pidOfTool,
        authorize: (url) => authorizeWrite(ctx, tool.id, entry.call_id, ++writeSeq, pidOfTool(), url),
      }),
  });
  const ok = succeeded(r);
  return {
    state: ok ? 'completed' : 'failed',
    result: ok ? (r.line?.result ?? null) : null,
    error: ok ? null : failureOf(r, ctx.timeoutMs),
    exit: r.exit,
    writes: r.server?.writes ?? [],
    stderr: r.stderr,
  };
}

/** A Queryable tool's lookup of a journaled call, run inside the boundary; its GETs are performed here. */
async function lookupInBoundary(ctx: OpContext, tool: ToolRegistration, entry: CallEntry, lookupTimeoutMs?: number): Promise<unknown> {
  const r = await inBoundary(ctx, {
    cg: toolCgroupPath(ctx.rec, entry.call_id),
    toolId: tool.id,
    callId: entry.call_id,
    argv: ['lookup', ctx.modulePath, tool.id],
    env: { [TOOL_ARGS_ENV]: JSON.stringify(entry.args), [REQUEST_ID_ENV]: entry.request_id ?? '' },
    timeoutMs: ctx.timeoutMs,
    serve: (sock) => new LookupServer(sock, httpLookupIO(lookupTimeoutMs)),
  });
  if (!succeeded(r)) throw new Error(`the lookup failed: ${failureOf(r, ctx.timeoutMs)}`);
  return r.line?.result;
}

async function context(stateDir: string, op: string, toolsModule: string, timeoutMs?: number): Promise<OpContext> {
  const rec = await servedOperation(stateDir, op);
  return { stateDir, op, rec, opKey: await readKey(stateDir, op), modulePath: modulePathOf(toolsModule), timeoutMs: timeoutMs ?? DEFAULT_TOOL_TIMEOUT_MS };
}

function argsObject(args: unknown): Record<string, unknown> {
  if (args === null || typeof args !== 'object' || Array.isArray(args)) throw new GenseeError('E_USAGE', 'the arguments must be a JSON object');
  const text = JSON.stringify(args);
  if (Buffer.byteLength(text) > MAX_ARGS_BYTES) throw new GenseeError('E_TOO_LARGE', `the arguments are over ${MAX_ARGS_BYTES} bytes of JSON`);
  // what is recorded is what the tool gets: a JSON round trip
  return JSON.parse(text) as Record<string, unknown>;
}

/**
 * The executor's side of a call's tool process (tool-main call), on its fd 3:
 * first the process's registration report (one line, nothing after it), then
 * `decide` (check it, journal the call), then the go frame carrying the
 * capability handle and, from then on, the handle served by `server`. A
 * refusal closes the socket: the process, which holds no handle yet, exits.
 */
class CallSession {
  server: HandleServer | null = null;
  refusal: unknown = null;
  private readonly decided: Promise<void>;

  constructor(
    private readonly sock: Duplex,
    decide: (report: unknown) => Promise<{ go: unknown; server: (sock: Duplex) => HandleServer }>,
  ) {
    this.decided = new Promise<void>((resolve) => {
      const parts: Buffer[] = [];
      let size = 0;
      let done = false;
      const finish = () => {
        done = true;
        sock.off('data', onData);
        resolve();
      };
      const refuse = (why: unknown) => {
        this.refusal = why;
        sock.destroy();
        finish();
      };
      const onData = (b: Buffer) => {
        if (done) return;
        const i = b.indexOf(0x0a);
        if (i < 0) {
          parts.push(b);
          size += b.length;
          if (size > MAX_FRAME) refuse(new GenseeError('E_SCHEMA', `the tool process sent a registration over ${MAX_FRAME} bytes`));
          return;
        }
        parts.push(b.subarray(0, i));
        // the handle is served once the call is journaled: nothing may come before
        sock.pause();
        done = true;
        sock.off('data', onData);
        if (i + 1 < b.length) return refuse(new GenseeError('E_SCHEMA', 'the tool process sent more than its registration before the call started'));
        let frame: unknown;
        try {
          frame = JSON.parse(Buffer.concat(parts).toString('utf8'));
        } catch {
          return refuse(new GenseeError('E_SCHEMA', 'the tool process sent a registration that is not JSON'));
        }
        const report = frame !== null && typeof frame === 'object' && (frame as { v?: unknown }).v === 1 ? (frame as { register?: unknown }).register : undefined;
        decide(report).then(
          (d) => {
            this.server = d.server(sock);
            sock.write(JSON.stringify(d.go) + '\n');
            sock.resume();
            resolve();
          },
          (e: unknown) => refuse(e),
        );
      };
      sock.on('data', onData);
      sock.once('close', finish);
      sock.once('end', finish);
      sock.on('error', () => undefined);
    });
  }

  async drain(ms: number): Promise<void> {
    await this.decided;
    if (this.server) await this.server.drain(ms);
    else this.sock.destroy();
  }
}

interface Decided {
  tool: ToolRegistration;
  args: Record<string, unknown>;
  key: string | null;
  requestId: string | null;
  entry: CallEntry;
}

/**
 * Run one tool call (see the top of this file). One tool process evaluates
 * the module, reports its registration, and once the call is journaled runs
 * it. Refused before the journal: GenseeError; the tool failing: state 'failed'.
 */
export async function executorCall(o: CallOptions): Promise<CallOutcome> {
  const ctx = await context(o.stateDir, o.op, o.toolsModule, o.timeoutMs);
  const callId = o.callId ?? newCallId();
  if (!CALL_ID_RE.test(callId)) throw new GenseeError('E_USAGE', `bad call id ${JSON.stringify(callId)}: use 1-48 of [A-Za-z0-9._-], starting alphanumeric`);
  const given = argsObject(o.args);
  const where = `tools module ${ctx.modulePath}`;
  // held for the whole call: waits for a live executor's call to end
  const journal = await CallJournal.open(o.stateDir, o.op);
  let decided: Decided | null = null;
  try {
    // the data the module's process reports: checked, then the call journaled, durably, before the tool runs
    const decide = async (report: unknown) => {
      const reg = checkRegistration(report, where);
      const tool = toolOf(reg.tools, o.toolId, ctx.modulePath);
      const args = argsObject(validateArgs(tool, given));
      const effect = tool.effect;
      const key = effect.kind === 'idempotent' ? deriveKey(tool.id, effect.key.fields, args) : null;
      let requestId: string | null = null;
      if (effect.kind === 'queryable') {
        const id = reg.requestId;
        if (typeof id !== 'string' || !/^[\x21-\x7e]{1,200}$/.test(id)) throw new GenseeError('E_SCHEMA', `tool "${tool.id}": requestId() must give 1-200 printable ASCII characters, not ${JSON.stringify(id ?? null)}`);
        requestId = id;
      }
      const entry = await journal.started({ call_id: callId, tool_id: tool.id, class: effect.kind, args, key, request_id: requestId });
      decided = { tool, args, key, requestId, entry };
      o.onStarted?.(entry);
      return {
        go: { v: 1, go: { handle: { call_id: callId, key, token: handleToken(ctx.opKey, callId, key) } } },
        server: (sock: Duplex) => {
          let writeSeq = 0;
          return new HandleServer(sock, {
            stateDir: ctx.stateDir,
            op: ctx.op,
            opKey: ctx.opKey,
            call: { callId, toolId: tool.id, cls: effect.kind, key, requestId },
            pid: () => pidOf(),
            authorize: (url) => authorizeWrite(ctx, tool.id, callId, ++writeSeq, pidOf(), url),
          });
        },
      };
    };
    let pidOf: () => number = () => 0;
    let r: BoundaryRun<CallSession>;
    try {
      r = await inBoundary(ctx, {
        cg: toolCgroupPath(ctx.rec, callId),
        toolId: o.toolId.slice(0, 200) || '?',
        callId,
        argv: ['call', ctx.modulePath, o.toolId],
        env: { [TOOL_ARGS_ENV]: JSON.stringify(given) },
        timeoutMs: ctx.timeoutMs,
        serve: (sock, toolPid) => {
          pidOf = toolPid;
          return new CallSession(sock, decide);
        },
      });
    } catch (e) {
      const d = decided as Decided | null;
      if (d) await journal.setState(callId, 'failed', `the executor could not run the tool: ${(e as Error).message}`.slice(0, 500));
      throw e;
    }
    const d = decided as Decided | null;
    if (!d) {
      // refused before the journal: the executor's own refusal, or the process's
      if (r.server?.refusal) throw r.server.refusal;
      throw registrationFailure(ctx, r, ctx.timeoutMs);
    }
    const ok = succeeded(r);
    const run: ToolRun = {
      state: ok ? 'completed' : 'failed',
      result: ok ? (r.line?.result ?? null) : null,
      error: ok ? null : failureOf(r, ctx.timeoutMs),
      exit: r.exit,
      writes: r.server?.server?.writes ?? [],
      stderr: r.stderr,
    };
    if (run.state === 'completed') await journal.setState(callId, 'completed');
    else await journal.setState(callId, 'failed', (run.error ?? 'failed').slice(0, 500));
    return { op: o.op, call_id: callId, tool_id: d.tool.id, class: d.tool.effect.kind, key: d.key, request_id: d.requestId, ...run };
  } finally {
    await journal.close();
  }
}

/** The read path a Queryable tool's lookup uses: an HTTP GET by the executor, bounded. */
export function httpLookupIO(timeoutMs = 30_000): LookupIO {
  return {
    async get(url: string, headers?: Record<string, string>) {
      const u = new URL(url);
      if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new GenseeError('E_USAGE', `a lookup reads http: or https: URLs, not ${u.protocol}`);
      const res = await request(u, { method: 'GET', headers, headersTimeout: timeoutMs, bodyTimeout: timeoutMs });
      const chunks: Buffer[] = [];
      let size = 0;
      for await (const c of res.body) {
        const b = c as Buffer;
        if (size + b.length > MAX_RESPONSE_BODY) {
          chunks.push(b.subarray(0, MAX_RESPONSE_BODY - size));
          res.body.destroy();
          break;
        }
        chunks.push(b);
        size += b.length;
      }
      return { status: res.statusCode, body: Buffer.concat(chunks).toString('utf8') };
    },
  };
}

export interface RecoveredCall {
  call_id: string;
  tool_id: string;
  class: CallClass;
  key: string | null;
  request_id: string | null;
  /** the state journaled now; 'started' when nothing could be decided (see detail) */
  state: CallState;
  detail: string | null;
  /** Idempotent: the retry's writes */
  writes?: ServedWrite[];
  result?: unknown;
}

export interface RecoverReport {
  op: string;
  /** calls found `started` */
  calls: RecoveredCall[];
  /** every started call reached a state (recovered, not_found or indeterminate) */
  ok: boolean;
}

const UNSAFE_DETAIL = 'an Unsafe call was interrupted: whether its write happened is unknown; a person must check the target (never retried)';

/**
 * Recover the calls a crashed executor left `started` (DESIGN.md: after a
 * crash). Idempotent: re-derive the key from the journaled arguments, check it
 * equals the journaled key, retry the same call id through the handle (the
 * target dedupes by key), then `recovered`. Queryable: look the request id up;
 * `recovered` or `not_found`, never retried. Unsafe: `indeterminate`.
 */
export async function executorRecover(o: { stateDir: string; op: string; toolsModule: string; timeoutMs?: number; lookupTimeoutMs?: number }): Promise<RecoverReport> {
  const modulePath = modulePathOf(o.toolsModule);
  const rec = await openOperation(o.stateDir, o.op);
  // waits for a live executor's call to end; takes over a dead one's lock
  const journal = await CallJournal.open(o.stateDir, o.op);
  const report: RecoverReport = { op: o.op, calls: [], ok: true };
  try {
    const started = [...journal.calls.values()].filter((c) => c.state === 'started').map((c) => c.entry);
    // a dead executor's tools are killed before anything is decided
    for (const e of started) await disposeToolCgroup(toolCgroupPath(rec, e.call_id));
    // the boundary and the module's registration, once, when a call needs them
    // (an Unsafe call needs neither: it is indeterminate whatever the module says)
    let ctxP: Promise<OpContext> | null = null;
    const boundary = () => (ctxP ??= context(o.stateDir, o.op, modulePath, o.timeoutMs));
    let toolsP: Promise<Map<string, ToolRegistration>> | null = null;
    const registered = () => (toolsP ??= boundary().then(registerTools));
    for (const e of started) {
      const r: RecoveredCall = { call_id: e.call_id, tool_id: e.tool_id, class: e.class, key: e.key, request_id: e.request_id, state: 'started', detail: null };
      report.calls.push(r);
      const settle = async (state: Exclude<CallState, 'started'>, detail?: string) => {
        await journal.setState(e.call_id, state, detail);
        r.state = state;
        r.detail = detail ?? null;
      };
      try {
        if (e.class === 'unsafe') {
          await settle('indeterminate', UNSAFE_DETAIL);
          continue;
        }
        const tool = (await registered()).get(e.tool_id);
        if (!tool) {
          r.detail = `no tool "${e.tool_id}" in ${modulePath}: left started`;
          continue;
        }
        if (tool.effect.kind !== e.class) {
          await settle('indeterminate', `tool "${e.tool_id}" is ${tool.effect.kind} now but the call was journaled ${e.class}: not retried`);
          continue;
        }
        if (tool.effect.kind === 'queryable') {
          if (e.request_id === null) {
            await settle('indeterminate', 'a Queryable call journaled without a request id');
            continue;
          }
          const found = await lookupInBoundary(await boundary(), tool, e, o.lookupTimeoutMs);
          if (found === 'found') await settle('recovered', `request ${e.request_id} found by lookup (not retried)`);
          else if (found === 'not_found') await settle('not_found', `request ${e.request_id} not found by lookup (not retried)`);
          else r.detail = `lookup answered ${JSON.stringify(found)}, neither found nor not_found: left started`;
          continue;
        }
        if (tool.effect.kind !== 'idempotent') continue;
        // the same key from the same journal entry, or no retry at all
        let again: string;
        try {
          validateArgs(tool, e.args);
          again = deriveKey(tool.id, tool.effect.key.fields, e.args);
        } catch (err) {
          await settle('indeterminate', `the journaled arguments no longer derive a key (${(err as Error).message}): not retried`.slice(0, 500));
          continue;
        }
        if (again !== e.key) {
          await settle('indeterminate', `the key re-derived from the journaled arguments (${again.slice(0, 16)}…) is not the journaled key (${String(e.key).slice(0, 16)}…): the tool's key derivation changed; not retried`);
          continue;
        }
        const run = await runTool(await boundary(), tool, e);
        r.writes = run.writes;
        if (run.state === 'completed') {
          r.result = run.result;
          await settle('recovered', `retried under key ${again.slice(0, 16)}…`);
        } else {
          r.detail = `the retry failed: ${run.error ?? 'failed'} (left started; run recover again)`.slice(0, 500);
        }
      } catch (err) {
        r.detail = `${(err as Error).message} (left started)`.slice(0, 500);
      }
    }
  } finally {
    await journal.close();
  }
  report.ok = report.calls.every((c) => c.state !== 'started');
  return report;
}
