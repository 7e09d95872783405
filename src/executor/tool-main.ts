// The tool process: started by the executor through gensee-exec, inside the
// operation's boundary (its own cgroup under the operation's, the state
// directory hidden, no lease of its own), as the operation's unprivileged
// identity. It is the only process that evaluates a tool module: the
// executor never loads one (a module's top-level code is the tool author's
// code like its run(), and runs under the same hooks).
//
//   tool-main register MODULE [TOOL]  the module's registration as data:
//                                      {"tools":[ToolRegistration…]}, and with
//                                      TOOL (queryable) and GENSEE_TOOL_ARGS,
//                                      "request_id": requestId(args)
//   tool-main call MODULE TOOL         a call (executor call): the registration
//                                      as a frame {"v":1,"register":…} on fd 3;
//                                      once the executor has journaled the
//                                      call, its frame {"v":1,"go":{"handle":…}}
//                                      gives the capability handle, and the
//                                      tool runs as in `run`
//   tool-main lookup MODULE TOOL       a Queryable tool's lookup of
//                                      GENSEE_REQUEST_ID (the call's recorded
//                                      arguments in GENSEE_TOOL_ARGS); its
//                                      GETs go over fd 3, performed by the
//                                      executor; result "found"|"not_found"
//   tool-main run MODULE TOOL          a retry (recover): arguments in GENSEE_TOOL_ARGS
//                                      (JSON), the capability handle in
//                                      GENSEE_HANDLE and on fd 3
//
// Each prints one JSON line on stdout, last: {"ok":true,"result":…} and
// exits 0, or {"ok":false,"error":…,"code"?:…,"denied"?:reason} and exits 1.
// The executor reads that line as data and checks it (checkRegistration).
import * as fs from 'node:fs';
import { GenseeError } from '../errors';
import { loadTools, registrationOf, validateArgs, type LookupIO, type ToolDef } from './tool';
import { HANDLE_FD, HandleClient, HandleDenied, MAX_FRAME, openHandle, REQUEST_ID_ENV, TOOL_ARGS_ENV, type HandleCredentials } from './handle';

type Tool = ToolDef<Record<string, unknown>>;

function emit(line: Record<string, unknown>, code: number): never {
  let text: string;
  try {
    text = JSON.stringify(line);
  } catch {
    text = JSON.stringify({ ok: false, error: 'the tool result is not JSON-serializable' });
    code = 1;
  }
  // a synchronous write: the line is out before the exit
  fs.writeSync(1, text + '\n');
  process.exit(code);
}

function argsOf(): unknown {
  try {
    return JSON.parse(process.env[TOOL_ARGS_ENV] ?? '');
  } catch {
    emit({ ok: false, error: `${TOOL_ARGS_ENV} is not JSON` }, 2);
  }
}

function toolIn(tools: Map<string, Tool>, toolId: string, modulePath: string): Tool {
  const tool = tools.get(toolId);
  if (!tool) emit({ ok: false, code: 'E_USAGE', error: `no tool "${toolId}" in ${modulePath} (it has: ${[...tools.keys()].join(', ') || 'none'})` }, 2);
  return tool;
}

/** the registration report of a loaded module (and a Queryable tool's request id for GENSEE_TOOL_ARGS) */
async function reportOf(tools: Map<string, Tool>, toolId: string | undefined): Promise<Record<string, unknown>> {
  const result: Record<string, unknown> = { tools: [...tools.values()].map(registrationOf) };
  const tool = toolId === undefined ? undefined : tools.get(toolId);
  if (tool?.effect.kind === 'queryable') {
    let valid: Record<string, unknown> | null = null;
    try {
      valid = validateArgs(tool, argsOf());
    } catch {
      // the executor refuses these arguments itself, naming each field
    }
    if (valid) {
      const id: unknown = await tool.effect.lookup.requestId(valid);
      if (typeof id !== 'string') emit({ ok: false, code: 'E_SCHEMA', error: `tool "${tool.id}": requestId() must give a string, not ${typeof id}` }, 1);
      result.request_id = id;
    }
  }
  return result;
}

async function register(modulePath: string, toolId: string | undefined): Promise<never> {
  emit({ ok: true, result: await reportOf(loadTools(modulePath), toolId) }, 0);
}

/** one line from fd (blocking), without reading past it: null at EOF */
function readLineSync(fd: number): string | null {
  const parts: Buffer[] = [];
  let size = 0;
  const b = Buffer.alloc(1);
  for (;;) {
    let n: number;
    try {
      n = fs.readSync(fd, b, 0, 1, null);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EAGAIN') throw e;
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 10);
      continue;
    }
    if (n === 0) return null;
    if (b[0] === 0x0a) return Buffer.concat(parts).toString('utf8');
    parts.push(Buffer.from(b));
    if (++size > MAX_FRAME) throw new Error('the executor sent an oversize frame');
  }
}

/**
 * A call: the registration to the executor on fd 3, then (once the executor
 * has checked it and journaled the call) the go frame with the capability
 * handle, then the tool runs. The module is evaluated once, here.
 */
async function call(modulePath: string, toolId: string): Promise<never> {
  const tools = loadTools(modulePath);
  const report = await reportOf(tools, toolId);
  fs.writeSync(HANDLE_FD, JSON.stringify({ v: 1, register: report }) + '\n');
  const line = readLineSync(HANDLE_FD);
  let creds: HandleCredentials | undefined;
  try {
    creds = line === null ? undefined : (JSON.parse(line) as { go?: { handle?: HandleCredentials } }).go?.handle;
  } catch {
    /* below */
  }
  if (!creds) emit({ ok: false, error: 'the executor did not start the call' }, 1);
  const tool = toolIn(tools, toolId, modulePath);
  const valid = validateArgs(tool, argsOf());
  const handle = new HandleClient(creds);
  const result = await tool.run(valid, handle);
  handle.close();
  emit({ ok: true, result: result === undefined ? null : result }, 0);
}

async function lookup(modulePath: string, toolId: string): Promise<never> {
  const tool = toolIn(loadTools(modulePath), toolId, modulePath);
  if (tool.effect.kind !== 'queryable') emit({ ok: false, code: 'E_USAGE', error: `tool "${toolId}" is ${tool.effect.kind}, not queryable: it has no lookup` }, 2);
  const requestId = process.env[REQUEST_ID_ENV] ?? '';
  const args = argsOf() as Record<string, unknown>;
  // the lookup's read path: each GET is a frame on fd 3, performed by the executor
  const client = new HandleClient({ call_id: '', key: null, token: '' });
  const io: LookupIO = {
    async get(url, headers) {
      const a = await client.send({ v: 1, get: { url, headers } });
      if ('error' in a) throw new Error(`lookup GET failed: ${a.error}`);
      if ('denied' in a) throw new Error(`lookup GET denied: ${a.denied}`);
      return { status: a.status, body: a.body };
    },
  };
  const found: unknown = await tool.effect.lookup.lookup(requestId, io, args);
  client.close();
  emit({ ok: true, result: found }, 0);
}

async function run(modulePath: string, toolId: string): Promise<never> {
  const tool = toolIn(loadTools(modulePath), toolId, modulePath);
  const valid = validateArgs(tool, argsOf());
  const handle = openHandle();
  const result = await tool.run(valid, handle);
  handle.close();
  emit({ ok: true, result: result === undefined ? null : result }, 0);
}

async function main(argv: string[]): Promise<void> {
  const [mode, modulePath, toolId] = argv;
  if (mode === 'register' && modulePath) await register(modulePath, toolId);
  if (mode === 'call' && modulePath && toolId) await call(modulePath, toolId);
  if (mode === 'lookup' && modulePath && toolId) await lookup(modulePath, toolId);
  if (mode === 'run' && modulePath && toolId) await run(modulePath, toolId);
  emit({ ok: false, error: 'usage: tool-main register MODULE [TOOL] | call MODULE TOOL | lookup MODULE TOOL | run MODULE TOOL' }, 2);
}

if (require.main === module) {
  main(process.argv.slice(2)).catch((e: unknown) => {
    if (e instanceof HandleDenied) emit({ ok: false, error: e.message, denied: e.reason }, 1);
    const code = e instanceof GenseeError ? e.code : undefined;
    emit({ ok: false, code, error: (e as Error)?.message ?? String(e) }, 1);
  });
}
