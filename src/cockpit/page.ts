import type * as http from 'node:http';

/** placeholder until the cockpit lands */
export function cockpitRoute(_op: string): (req: http.IncomingMessage, res: http.ServerResponse, authorized: boolean) => boolean {
  return () => false;
}
