// The bytes the Node-side floors (bench/floor-node.ts, bench/floor-plumbing.ts)
// write and send per request: the sizes of bench/floor.c's, so every floor
// makes the same bytes durable and answers with as many.
const LINE = 462;
const INTENT_LINE = 300;
const ANSWER = 120;

export interface FloorBytes {
  /** the two evidence-sized lines of one request, newline-terminated */
  lines: Buffer;
  /** a lease_intent-sized line */
  iline: Buffer;
  /** the answer */
  answer: Buffer;
}

export function floorBytes(): FloorBytes {
  const lines = Buffer.alloc(2 * LINE, 'x');
  lines[LINE - 1] = lines[2 * LINE - 1] = 0x0a;
  const iline = Buffer.alloc(INTENT_LINE, 'i');
  iline[INTENT_LINE - 1] = 0x0a;
  return { lines, iline, answer: Buffer.alloc(ANSWER, 'r') };
}
