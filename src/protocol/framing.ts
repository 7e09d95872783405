// Frames on every gensee socket: a 4-byte big-endian body length, then the
// protobuf body. A connection carries request/reply pairs, one at a time;
// the servers' side is in C (addon/sup_server.c), and this module is the
// TypeScript side: encoding a frame, and reading the one reply a client
// waits for.
//
// Limits (DESIGN.md "Wire formats"), each an option:
//   maxBytes       body <= 64 KiB; a larger declared length is refused at
//                  once, before any of the body is read
//   timeoutMs      the whole frame within 2 s of its FIRST byte (a deadline,
//                  not an idle timer: a client trickling bytes is still cut)
//   idleTimeoutMs  the first byte within 5 s of readFrame() (a client
//                  waiting for its reply; the server's idle limit on a
//                  connection between requests is sup_server.h's 30 s)
// and no bytes after the frame. A zero-length frame is malformed.
//
// On rejection the socket is paused and left to the caller, who records the
// refusal and destroys it. Callers own the socket's 'error' listener. A
// server that wants to answer a client which half-closes after its request
// must be created with allowHalfOpen: true.
import type { Socket } from 'node:net';

export const FRAME_HEADER_BYTES = 4;
export const FRAME_MAX_BYTES = 65536;
export const FRAME_TIMEOUT_MS = 2000;
export const FRAME_IDLE_TIMEOUT_MS = 5000;

export const FRAME_ERROR_CODES = [
  'frame_oversize',
  'frame_truncated',
  'frame_timeout',
  'frame_trailing',
  'frame_empty',
] as const;
export type FrameErrorCode = (typeof FRAME_ERROR_CODES)[number];

export class FrameError extends Error {
  readonly code: FrameErrorCode;
  constructor(code: FrameErrorCode, message: string) {
    super(message);
    this.name = 'FrameError';
    this.code = code;
  }
}

export interface FrameOptions {
  /** largest accepted body, bytes (default 65536) */
  maxBytes?: number;
  /** whole frame within this many ms of its first byte (default 2000) */
  timeoutMs?: number;
  /** first byte within this many ms of the call (default 5000) */
  idleTimeoutMs?: number;
}

/** A received body; hasTrailing() reports bytes that arrived after the frame so far. */
export type Frame = Buffer & { hasTrailing(): boolean };

/**
 * Read one frame from `socket`. Call it as soon as the socket is connected
 * (before any other 'data' listener). Rejects with a FrameError whose code
 * is one of FRAME_ERROR_CODES; bytes after the frame in the same read reject
 * with frame_trailing, later ones show up in frame.hasTrailing().
 */
export function readFrame(socket: Socket, opts: FrameOptions = {}): Promise<Frame> {
  const maxBytes = opts.maxBytes ?? FRAME_MAX_BYTES;
  const timeoutMs = opts.timeoutMs ?? FRAME_TIMEOUT_MS;
  const idleTimeoutMs = opts.idleTimeoutMs ?? FRAME_IDLE_TIMEOUT_MS;

  return new Promise<Frame>((resolve, reject) => {
    const header = Buffer.alloc(FRAME_HEADER_BYTES);
    let headerBytes = 0;
    let body: Buffer | null = null;
    let bodyBytes = 0;
    let deadline: NodeJS.Timeout | undefined;
    let settled = false;

    const idle = setTimeout(
      () => fail('frame_timeout', `no frame within ${idleTimeoutMs} ms`),
      idleTimeoutMs,
    );
    idle.unref();

    const cleanup = () => {
      clearTimeout(idle);
      if (deadline) clearTimeout(deadline);
      socket.off('data', onData);
      socket.off('end', onEnd);
      socket.off('close', onEnd);
      socket.off('error', onError);
    };
    const fail = (code: FrameErrorCode, message: string) => {
      if (settled) return;
      settled = true;
      cleanup();
      socket.pause();
      reject(new FrameError(code, message));
    };
    const received = () => headerBytes + bodyBytes;

    function onData(chunk: Buffer) {
      if (settled) return;
      if (!deadline) {
        clearTimeout(idle);
        deadline = setTimeout(
          () => fail('frame_timeout', `frame not complete within ${timeoutMs} ms of its first byte (${received()} bytes)`),
          timeoutMs,
        );
        deadline.unref();
      }
      let off = 0;
      if (body === null) {
        const n = Math.min(FRAME_HEADER_BYTES - headerBytes, chunk.length);
        chunk.copy(header, headerBytes, 0, n);
        headerBytes += n;
        off = n;
        if (headerBytes < FRAME_HEADER_BYTES) return;
        const len = header.readUInt32BE(0);
        if (len === 0) return fail('frame_empty', 'zero-length frame');
        if (len > maxBytes) return fail('frame_oversize', `declared length ${len} exceeds ${maxBytes} bytes`);
        body = Buffer.alloc(len);
      }
      const n = Math.min(body.length - bodyBytes, chunk.length - off);
      chunk.copy(body, bodyBytes, off, off + n);
      bodyBytes += n;
      off += n;
      if (bodyBytes < body.length) return;
      if (off < chunk.length) return fail('frame_trailing', `${chunk.length - off} bytes after the frame`);

      settled = true;
      cleanup();
      let trailing = false;
      const onLate = () => {
        trailing = true;
        socket.off('data', onLate);
        socket.pause();
      };
      socket.on('data', onLate);
      resolve(Object.assign(body, { hasTrailing: () => trailing || socket.readableLength > 0 }));
    }
    function onEnd() {
      const want = body ? `${FRAME_HEADER_BYTES + body.length}` : 'a frame';
      fail('frame_truncated', `connection ended after ${received()} bytes of ${want}`);
    }
    function onError(err: NodeJS.ErrnoException) {
      fail('frame_truncated', `connection failed after ${received()} bytes: ${err.code ?? err.message}`);
    }

    socket.on('data', onData);
    socket.on('end', onEnd);
    socket.on('close', onEnd);
    socket.on('error', onError);
  });
}

/** Length prefix + body, as one buffer. Throws FrameError for an empty or oversize body. */
export function encodeFrame(body: Uint8Array, maxBytes = FRAME_MAX_BYTES): Buffer {
  if (body.length === 0) throw new FrameError('frame_empty', 'zero-length frame');
  if (body.length > maxBytes) throw new FrameError('frame_oversize', `body of ${body.length} bytes exceeds ${maxBytes}`);
  const frame = Buffer.alloc(FRAME_HEADER_BYTES + body.length);
  frame.writeUInt32BE(body.length, 0);
  frame.set(body, FRAME_HEADER_BYTES);
  return frame;
}

/** Write one frame in a single write; resolves once it is handed to the kernel. */
export function writeFrame(socket: Socket, body: Uint8Array, opts: Pick<FrameOptions, 'maxBytes'> = {}): Promise<void> {
  let frame: Buffer;
  try {
    frame = encodeFrame(body, opts.maxBytes);
  } catch (e) {
    return Promise.reject(e);
  }
  return new Promise((resolve, reject) => {
    socket.write(frame, (err) => (err ? reject(err) : resolve()));
  });
}
