// The stub's default upstream: the host's own resolver configuration.
import * as fs from 'node:fs';
import { GenseeError } from '../errors';
import { parseIp, formatIp } from '../protocol/ip';

export interface Upstream {
  host: string;
  port: number;
  /**
   * the one transport the stub uses to reach it (default udp): the operator's
   * choice (`--dns-upstream tcp:ADDR`), never switched to the other on a
   * truncated answer (src/dns/forward.ts)
   */
  transport?: 'udp' | 'tcp';
}

/**
 * The upstream from the host's resolver configuration: the first `nameserver`
 * line of resolv.conf, port 53. No entry is skipped, so a loopback resolver
 * (systemd-resolved's 127.0.0.53) is taken as it is. `resolvConf` is the
 * file's TEXT (default: /etc/resolv.conf is read). Throws E_USAGE, naming
 * --dns-upstream, when there is no nameserver or the first one is not an IP
 * address (a zone id such as "fe80::1%eth0" is not accepted).
 */
export function hostUpstream(resolvConf?: string): Upstream {
  let text = resolvConf;
  const where = resolvConf === undefined ? '/etc/resolv.conf' : 'the resolver configuration';
  if (text === undefined) {
    try {
      text = fs.readFileSync('/etc/resolv.conf', 'utf8');
    } catch (e) {
      throw new GenseeError('E_USAGE', `cannot read /etc/resolv.conf (${(e as Error).message}): pass --dns-upstream ADDR`);
    }
  }
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (line.startsWith('#') || line.startsWith(';')) continue;
    const m = /^nameserver\s+(\S+)/.exec(line);
    if (!m) continue;
    const ip = parseIp(m[1]);
    if (!ip) throw new GenseeError('E_USAGE', `the first nameserver in ${where} is not an IP address: "${m[1]}"; pass --dns-upstream ADDR`);
    return { host: formatIp(ip.bytes), port: 53 };
  }
  throw new GenseeError('E_USAGE', `no nameserver in ${where}: pass --dns-upstream ADDR`);
}
