// gensee's plumbing with nothing on it: the resolver's path through the
// addon (the supervisor socket's I/O thread with its peer checks and
// framing, the group-commit syncer that writes and fdatasyncs the lines and
// sends each answer once its line is durable, the wake-ups into the event
// loop) serving bench/floor.c's clients (gs-floor --connect), with a
// JavaScript decision that does nothing: per frame a lease_intent-sized
// line, durable; then the two evidence-sized lines and the answer, sent by
// the syncer after their fdatasync. No decoding, policy, subject check, BPF
// map, MAC or hash chain.
//
// Not a floor in issue 15's sense (it runs gensee's own code): it splits
// gensee's distance from the C floor into what its architecture costs (this)
// and what its per-fault work costs (the rest).
//
//   node floor-plumbing.js SOCKET LOGFILE
// prints "ready" once it listens, serves until SIGTERM.
import * as fs from 'node:fs';
import { loadAddon } from '../src/addon';
import { openPrivateSocket } from '../src/privsock';
import { floorBytes } from './floor-lines';

async function main(): Promise<void> {
  const [sockPath, logPath] = process.argv.slice(2);
  if (!sockPath || !logPath) {
    process.stderr.write('usage: node floor-plumbing.js SOCKET LOGFILE\n');
    process.exit(2);
  }
  const addon = loadAddon();
  const fd = fs.openSync(logPath, fs.constants.O_WRONLY | fs.constants.O_CREAT | fs.constants.O_TRUNC | fs.constants.O_APPEND, 0o600);
  const { lines, iline, answer } = floorBytes();

  // intents waiting to be durable, in ticket order
  let waiting: { ticket: number; id: number }[] = [];
  const onDurable = () => {
    // as the fault log reads it after each wake-up (src/evidence/chain.ts onDurable); a failure ends the floor below
    const durable = log.progress();
    if (durable < 0) throw new Error(`floor log failed: errno ${-durable}`);
    let k = 0;
    while (k < waiting.length && waiting[k].ticket <= durable) {
      // the intent is durable: the two lines, and the answer once they are
      const { id } = waiting[k++];
      const ticket = log.write(lines, 2, false);
      server.answer(id, answer, log, ticket, true);
    }
    if (k) waiting = waiting.slice(k);
  };
  const log = new addon.SyncLog(fd, 0, onDurable, true);
  log.ref(); // a wake-up after every fdatasync
  const lfd = await openPrivateSocket(sockPath, { owner: 0 });
  const server = new addon.SupervisorServer(lfd, 0, '/gs-floor-plumbing-no-such-cgroup', () => {
    let wrote = false;
    for (const req of server.take()) {
      if (req.status !== 'frame') {
        server.drop(req.id);
        continue;
      }
      waiting.push({ ticket: log.write(iline, 1, false), id: req.id });
      wrote = true;
    }
    // one fdatasync asked for the turn's intents, as gensee asks
    if (wrote) log.request();
  });
  process.stdout.write('ready\n');
  process.on('SIGTERM', () => {
    server.stop();
    addon.closeFd(lfd);
    log.close();
    fs.closeSync(fd);
    fs.rmSync(sockPath, { force: true });
    process.exit(0);
  });
}

main().catch((e: unknown) => {
  process.stderr.write(`${(e as Error).message}\n`);
  process.exitCode = 1;
});
