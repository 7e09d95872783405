// The tool process: started by the executor through gensee-exec, inside the
// operation's boundary (its own cgroup under the operation's, the state
// directory hidden, no lease of its own). argv: MODULE TOOL. The arguments
// come in GENSEE_TOOL_ARGS (JSON), the capability handle in GENSEE_HANDLE and
// on fd 3. Prints one JSON line on stdout: {"ok":true,"result":…} and exits
// 0, or {"ok":false,"error":…,"denied"?:reason} and exits 1.
import * as fs from 'node:fs';
import { loadTools, validateArgs } from './tool';
import { HandleDenied, openHandle, TOOL_ARGS_ENV } from './handle';

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

async function main(argv: string[]): Promise<void> {
  const [modulePath, toolId] = argv;
  if (!modulePath || !toolId) emit({ ok: false, error: 'usage: tool-main MODULE TOOL (arguments in GENSEE_TOOL_ARGS)' }, 2);
  const tool = loadTools(modulePath).get(toolId);
  if (!tool) emit({ ok: false, error: `no tool "${toolId}" in ${modulePath}` }, 2);
  let args: unknown;
  try {
    args = JSON.parse(process.env[TOOL_ARGS_ENV] ?? '');
  } catch {
    emit({ ok: false, error: `${TOOL_ARGS_ENV} is not JSON` }, 2);
  }
  const valid = validateArgs(tool, args);
  const handle = openHandle();
  const result = await tool.run(valid, handle);
  handle.close();
  emit({ ok: true, result: result === undefined ? null : result }, 0);
}

if (require.main === module) {
  main(process.argv.slice(2)).catch((e: unknown) => {
    if (e instanceof HandleDenied) emit({ ok: false, error: e.message, denied: e.reason }, 1);
    emit({ ok: false, error: (e as Error)?.message ?? String(e) }, 1);
  });
}
