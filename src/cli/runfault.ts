// gensee run fault --socket PATH --fault FILE
// The manual test adapter: reads a fault in its JSON form (O_NOFOLLOW: a
// symlink is refused), submits it over the authenticated socket, verifies the
// resolver's identity and MAC, prints the resolution JSON.
// Exit: 0 continue/retry, 3 delegate, 1 deny, 2 bad usage or input,
// 4 no answer (the resolver could not be reached: no socket, refused,
// reset or closed before answering, timed out), with one line on stderr.
import * as path from 'node:path';
import { parse, out } from './args';
import { GenseeError } from '../errors';
import { readFileNoFollow } from '../state/fsutil';
import { faultFromJson, resolutionToJson } from '../protocol/json';
import { encodeFault } from '../protocol/codec';
import { openOperation, readKey } from '../state/operation';
import { submitFault, opOfSocket, ResolverUnreachable, SubmitResult } from '../resolver/client';
import { reportRefusal } from '../resolver/report';

export const usage =
  'usage: gensee run fault --socket PATH --fault FILE\n' +
  '       exit: 0 continue/retry, 3 delegate, 1 deny, 2 bad usage or input, 4 could not reach the resolver';
/** no answer came: nothing was decided (a deny is 1) */
export const EXIT_UNREACHABLE = 4;
export const FAULT_FILE_MAX = 64 * 1024;

export async function run(argv: string[]): Promise<number> {
  const { values } = parse(argv, { socket: { type: 'string' }, fault: { type: 'string' } }, false);
  if (values.flags.has('help')) {
    out(usage);
    return 0;
  }
  if (!values.socket || !values.fault) throw new GenseeError('E_USAGE', '--socket PATH and --fault FILE are required');
  const socketPath = path.resolve(values.socket);
  const { stateDir, op } = opOfSocket(socketPath);
  const record = await openOperation(stateDir, op);
  const key = await readKey(stateDir, op);

  let fault;
  try {
    const bytes = await readFileNoFollow(path.resolve(values.fault), FAULT_FILE_MAX);
    let json: unknown;
    try {
      json = JSON.parse(bytes.toString('utf8'));
    } catch (e) {
      throw new GenseeError('E_BAD_JSON', `fault ${values.fault}: not JSON: ${(e as Error).message}`);
    }
    const r = faultFromJson(json);
    if (!r.ok) throw new GenseeError('E_SCHEMA', `fault ${values.fault}: ${r.detail}`);
    fault = r.fault;
  } catch (e) {
    // refused before submission: still recorded in the operation's faults.jsonl
    if (e instanceof GenseeError) {
      await reportRefusal({ socketPath, operationId: op, key, resolver: record.resolver, code: e.code, detail: e.message }).catch(() => undefined);
    }
    throw e;
  }
  let res: SubmitResult;
  try {
    res = await submitFault({ socketPath, body: encodeFault(fault), faultId: fault.fault_id, key, resolver: record.resolver });
  } catch (e) {
    if (!(e instanceof ResolverUnreachable)) throw e;
    const detail = e.detail.replace(`connect ${e.socketPath}: `, 'connect: ');
    process.stderr.write(`gensee: could not reach the resolver on ${e.socketPath}: ${e.code} (${detail})\n`);
    return EXIT_UNREACHABLE;
  }
  out(JSON.stringify(resolutionToJson(res.resolution)));
  if (!res.authenticated) process.stderr.write(`gensee: unauthenticated_peer: ${res.detail}\n`);
  switch (res.resolution.action) {
    case 'continue_already_authorized':
    case 'retry_after_lease':
      return 0;
    case 'delegate':
      return 3;
    default:
      return 1;
  }
}
