// The Node floor under the resolver rows: the smallest Node program that
// serves bench/floor.c's exchange (its clients run with --connect) with the
// same durable writes. It is what any resolver written for Node, as gensee's
// is, pays before it decodes, decides or checks anything: the event loop's
// wake-ups, the socket objects, and an fdatasync that must leave the event
// loop (here on libuv's thread pool) and come back.
//
// Per request: read the 4-byte length and the body; with --intent append a
// lease_intent-sized line, wait until it is durable, then append the two
// evidence lines, wait until they are durable, and answer. With --one-sync
// append the lease_intent-sized line and the two evidence lines together,
// wait until they are durable (one fdatasync), and answer: the durable work
// gensee does per granted fault since its intent line stopped waiting for a
// sync of its own (the lease enters the kernel after the resolution line,
// and so the intent, is durable). Group commit, as
// the C floor and gensee do: one fdatasync at a time, and every line written
// while one runs shares the next. It does less than the C floor (no BPF map
// look-up, put or read-back; no MAC, no hash chain, no decoding), so it is an
// upper bound on what a Node resolver can reach, not an estimate of it.
//
//   node floor-node.js SOCKET LOGFILE [--intent|--one-sync]
// prints "ready" once it listens, serves until SIGTERM.
import * as fs from 'node:fs';
import * as net from 'node:net';
import { floorBytes } from './floor-lines';

function main(): void {
  const [sockPath, logPath, flag] = process.argv.slice(2);
  if (!sockPath || !logPath || (flag !== undefined && flag !== '--intent' && flag !== '--one-sync')) {
    process.stderr.write('usage: node floor-node.js SOCKET LOGFILE [--intent|--one-sync]\n');
    process.exit(2);
  }
  const intent = flag === '--intent';
  const fd = fs.openSync(logPath, fs.constants.O_WRONLY | fs.constants.O_CREAT | fs.constants.O_TRUNC | fs.constants.O_APPEND, 0o600);
  const bytes = floorBytes();
  const { iline, answer } = bytes;
  const lines = flag === '--one-sync' ? Buffer.concat([bytes.iline, bytes.lines]) : bytes.lines;

  // group commit: writes are numbered; a waiter is released by the first
  // fdatasync that started after its write
  let written = 0;
  let durable = 0;
  let syncing = false;
  let waiters: { upTo: number; fn: () => void }[] = [];
  const onLoop = process.env.FLOOR_NODE_SYNC === 'loop';
  let scheduled = false;
  const syncOnLoop = (): void => {
    scheduled = false;
    const upTo = written;
    fs.fdatasyncSync(fd);
    durable = upTo;
    const ready = waiters;
    waiters = [];
    for (const w of ready) w.fn();
  };
  const sync = (): void => {
    if (onLoop) {
      if (!scheduled) {
        scheduled = true;
        setImmediate(syncOnLoop);
      }
      return;
    }
    if (syncing || waiters.length === 0) return;
    syncing = true;
    const upTo = written;
    fs.fdatasync(fd, (err) => {
      if (err) throw err;
      syncing = false;
      durable = upTo;
      const ready = waiters.filter((w) => w.upTo <= durable);
      waiters = waiters.filter((w) => w.upTo > durable);
      for (const w of ready) w.fn();
      sync();
    });
  };
  const append = (buf: Buffer, then: () => void): void => {
    fs.writeSync(fd, buf);
    waiters.push({ upTo: ++written, fn: then });
    sync();
  };

  // a connection carries one frame (bench/floor.c's clients) or a sequence
  // (bench/notify-floor.c --connect keeps one open): each is answered in turn
  const server = net.createServer({ allowHalfOpen: true }, (sock) => {
    let got = Buffer.alloc(0);
    let open = 0; // frames of this connection not answered yet
    let ended = false;
    sock.on('data', (chunk: Buffer) => {
      got = got.length ? Buffer.concat([got, chunk]) : chunk;
      while (got.length >= 4 && got.length >= 4 + got.readUInt32BE(0)) {
        got = got.subarray(4 + got.readUInt32BE(0));
        open++;
        const done = () => {
          sock.write(answer);
          if (--open === 0 && ended) sock.end();
        };
        if (intent) append(iline, () => append(lines, done));
        else append(lines, done);
      }
    });
    // the client is done: end once its answers are out
    sock.on('end', () => {
      ended = true;
      if (open === 0) sock.end();
    });
    sock.on('error', () => sock.destroy());
  });
  server.listen(sockPath, () => process.stdout.write('ready\n'));
  process.on('SIGTERM', () => {
    server.close();
    fs.closeSync(fd);
    process.exit(0);
  });
}

main();
