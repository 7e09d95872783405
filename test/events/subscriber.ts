// A live-stream subscriber run as its own process by the stream tests, so
// that it can be killed with SIGKILL mid-stream: connects to SOCKET with
// TOKEN and since=events:SINCE, and writes each message's seq on its own
// line to stdout as it arrives (process.stdout: synchronous on a pipe on Linux).
//   node subscriber.js SOCKET TOKEN SINCE
import { EventClient } from '../../src/events/client';

async function main(): Promise<void> {
  const [socketPath, token, since] = process.argv.slice(2);
  const c = await EventClient.connect({ socketPath, token, logs: ['events'], since: { events: Number(since) } });
  process.stdout.write('connected\n');
  for await (const m of c) process.stdout.write(`${m.seq}\n`);
}

main().catch((e) => {
  process.stderr.write(`subscriber: ${(e as Error).message}\n`);
  process.exit(1);
});
