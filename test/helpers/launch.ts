// A command launched under the boundary (launchUnderBoundary) on a test
// operation, its output collected, the notifier closed and the command
// killed at teardown.
import { pinDirFor } from '../../src/bpffs';
import { launchUnderBoundary, Launched } from '../../src/pause/launch';
import type { PausedCall } from '../../src/pause/notifier';
import type { T } from './kernel';

export interface LaunchedOnOp {
  l: Launched;
  stdout(): string;
  stderr(): string;
  /** once the command has exited and its output is all read */
  done: Promise<{ code: number | null; stdout: string; stderr: string }>;
}

/** argv under op's boundary with piped output; onFault gets each paused call and the launch it belongs to. */
export async function launchOnOp(t: T, op: { op: string; cgroup: string }, argv: string[], onFault: (f: PausedCall, l: Launched) => void): Promise<LaunchedOnOp> {
  let stdout = '';
  let stderr = '';
  const l: Launched = await launchUnderBoundary({
    cgroupPath: op.cgroup,
    pinDir: pinDirFor(op.op),
    operationId: op.op,
    argv,
    stdio: ['ignore', 'pipe', 'pipe'],
    onFault: (f) => onFault(f, l),
  });
  t.teardown(() => {
    l.notifier?.close();
    l.child.kill('SIGKILL');
  });
  l.child.stdout!.on('data', (d: Buffer) => (stdout += d.toString()));
  l.child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  const done = Promise.all([l.exited, new Promise((r) => l.child.once('close', r))]).then(([e]) => ({ code: e.code, stdout, stderr }));
  return { l, stdout: () => stdout, stderr: () => stderr, done };
}
