// Names in policy (issue 14): a network rule may name `host` (an exact name or
// a `*.` wildcard) instead of address/cidr. The schema and the parser refuse
// bad names with their pointer; `*.example.com` matches one or more labels
// under example.com and never example.com itself; a host rule never matches
// an address; ruleForName finds the first covering rule (grants, leases,
// delegate); dns_budget is 1..100000, default 1000.
import t from 'tap';
import { checkPolicy, parsePolicy } from '../../src/protocol/json';
import { canonicalName, hostError, hostMatches, hostRules, matchesNetwork, ruleForName } from '../../src/protocol/ip';
import type { HostMatch, NetworkMatch } from '../../src/protocol/types';

type Net = Record<string, unknown>;
const lease = (network: Net) => ({ schema: 1, leases: [{ network, ttl_s: 30 }] });
const hostNet = (host: string, extra: Net = { port: 443 }): Net => ({ protocol: 'tcp', host, ...extra });

function host(m: NetworkMatch): HostMatch {
  if (m.kind !== 'host') throw new Error(`not a host rule: ${m.text}`);
  return m;
}

/** parsePolicy's E_SCHEMA message, or null when it accepted */
function refusal(value: unknown): string | null {
  try {
    parsePolicy(value);
    return null;
  } catch (e) {
    const err = e as { code?: string; message: string };
    if (err.code !== 'E_SCHEMA') throw e;
    return err.message;
  }
}

t.test('valid exact and wildcard names parse into host rules', async (t) => {
  const ok = [
    'api.github.com',
    'example.com',
    'a.b.c.d.example.co.uk',
    '*.pypi.org',
    '*.a.b.example.com',
    'xn--bcher-kva.example',
    '*.xn--bcher-kva.example',
    '1.example.com',
    'a-b.c-d.example',
    'co.uk',
    `${'a'.repeat(63)}.example`,
    // 253 characters exactly: 3 × 63 + 61 + 3 dots
    `${'a'.repeat(63)}.${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(61)}`,
  ];
  t.equal(ok[ok.length - 1].length, 253);
  for (const h of ok) {
    t.equal(hostError(h), null, h);
    const p = parsePolicy(lease(hostNet(h)));
    const m = host(p.leases[0].network);
    t.equal(m.host, h, `${h}: kept as written`);
    t.equal(m.wildcard, h.startsWith('*.'), `${h}: wildcard`);
    t.same(m.ports, { lo: 443, hi: 443 });
    t.equal(m.text, `tcp ${h} 443`);
    t.same(await checkPolicy(lease(hostNet(h))), [], `${h}: check finds nothing`);
  }
  // every rule list takes a host
  const all = parsePolicy({
    schema: 1,
    grants: [{ network: { protocol: 'udp', host: 'ntp.example.org', port: 123 } }],
    leases: [{ network: { protocol: 'tcp', host: '*.example.com', ports: '8000-8063' }, ttl_s: 60, max_uses: 3 }],
    delegate: [{ network: { protocol: 'tcp', host: 'api.example.net', ports: '443' }, to: 'egress-proxy', tool: 'http' }],
  });
  t.equal(host(all.grants[0].network).protocol, 'udp');
  t.same(host(all.leases[0].network).ports, { lo: 8000, hi: 8063 }, '64 ports is the cap, allowed');
  t.equal(all.leases[0].max_uses, 3);
  t.equal(host(all.delegate[0].network).host, 'api.example.net');
  t.equal(all.delegate[0].tool, 'http');
});

t.test('each refusal: message and pointer (parsePolicy and checkPolicy agree)', async (t) => {
  const long = `${'a'.repeat(63)}.${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(62)}`; // 254
  const P = '/leases/0/network/host';
  const cases: [string, Net, string, RegExp][] = [
    ['uppercase', hostNet('API.Example.com'), P, /host "API.Example.com" must be in lowercase A-label form \(IDNA names as xn-- punycode\): use "api.example.com"$/],
    ['non-ASCII (IDNA U-label)', hostNet('bücher.example'), P, /host "bücher.example" must be in lowercase A-label form .*: use "xn--bcher-kva.example"$/],
    ['non-ASCII wildcard', hostNet('*.Bücher.example'), P, /use "\*.xn--bcher-kva.example"$/],
    ['bad A-label', hostNet('xn--zz.example'), P, /label "xn--zz" is not a valid A-label \(xn-- punycode\)$/],
    ['A-label of plain ASCII', hostNet('xn--abc-.example'), P, /label "xn--abc-" /],
    ['too long', hostNet(long), P, /is longer than 253 characters$/],
    ['label too long', hostNet(`${'a'.repeat(64)}.example`), P, /label "a{40}…" is longer than 63 characters$/],
    ['one label', hostNet('localhost'), P, /host "localhost": at least two labels required/],
    ['wildcard over a TLD', hostNet('*.com'), P, /a wildcard needs at least two labels after "\*\." \("\*.example.com" matches one or more labels under example.com, never example.com itself\)$/],
    ['* inside', hostNet('a.*.example.com'), P, /"\*" is allowed only as the whole first label \("\*.example.com" matches one or more labels under example.com, never example.com itself\)$/],
    ['* partial label', hostNet('*api.example.com'), P, /"\*" is allowed only as the whole first label/],
    ['** label', hostNet('**.example.com'), P, /"\*" is allowed only as the whole first label/],
    ['bare *', hostNet('*'), P, /./],
    ['leading hyphen', hostNet('-api.example.com'), P, /label "-api" must not start or end with "-"$/],
    ['trailing hyphen', hostNet('api-.example.com'), P, /label "api-" must not start or end with "-"$/],
    ['underscore', hostNet('_dmarc.example.com'), P, /label "_dmarc" may hold only a-z, 0-9 and "-"$/],
    ['empty label', hostNet('api..example.com'), P, /has an empty label$/],
    ['trailing dot', hostNet('api.example.com.'), P, /must not end with "\."$/],
    ['an IP address', hostNet('127.0.0.1'), P, /looks like an IP address: use "address"/],
    ['empty', hostNet(''), P, /./],
    ['too many ports', hostNet('*.example.com', { ports: '1000-1064' }), '/leases/0/network/ports', /^a host rule names at most 64 ports \(each answered address installs one lease per port\); "1000-1064" names 65$/],
    ['every port', hostNet('api.example.com', { ports: '0-65535' }), '/leases/0/network/ports', /names 65536$/],
    ['no port', hostNet('api.example.com', {}), '/leases/0/network', /^exactly one of "port" or "ports" required$/],
    ['host and address', hostNet('api.example.com', { address: '1.2.3.4', port: 1 }), '/leases/0/network', /^exactly one of "address", "cidr" or "host" required$/],
    ['host and cidr', hostNet('api.example.com', { cidr: '10.0.0.0/8', port: 1 }), '/leases/0/network', /^exactly one of "address", "cidr" or "host" required$/],
    ['host not a string', { protocol: 'tcp', host: 7, port: 1 }, P, /^must be string$/],
  ];
  for (const [name, network, pointer, want] of cases) {
    const doc = lease(network);
    const msg = refusal(doc);
    t.ok(msg !== null, `${name}: refused`);
    t.match(msg ?? '', new RegExp(`^policy ${pointer.replace(/\//g, '\\/')}: `), `${name}: parsePolicy names ${pointer}`);
    t.match((msg ?? '').slice(`policy ${pointer}: `.length), want, `${name}: parsePolicy message`);
    const problems = await checkPolicy(doc);
    t.equal(problems.length, 1, `${name}: one problem (${JSON.stringify(problems)})`);
    t.equal(problems[0]?.pointer, pointer, `${name}: check pointer`);
    t.match(problems[0]?.message ?? '', want, `${name}: check message`);
  }
});

t.test('the schema keeps additionalProperties false for host rules', async (t) => {
  t.equal(refusal(lease(hostNet('a.example.com', { port: 1, wildcard: true }))), 'policy /leases/0/network: unknown field "wildcard"');
  t.equal(refusal({ schema: 1, grants: [{ network: hostNet('a.example.com'), ttl_s: 3 }] }), 'policy /grants/0: unknown field "ttl_s"');
});

t.test('wildcard semantics: one or more labels, never the apex', async (t) => {
  const w = host(parsePolicy(lease(hostNet('*.example.com'))).leases[0].network);
  t.ok(hostMatches(w, 'a.example.com'), 'one label');
  t.ok(hostMatches(w, 'a.b.example.com'), 'two labels');
  t.ok(hostMatches(w, 'x.y.z.example.com'), 'three labels');
  t.notOk(hostMatches(w, 'example.com'), 'never the apex');
  t.notOk(hostMatches(w, 'example.com.'), 'never the apex, with a trailing dot');
  t.notOk(hostMatches(w, '.example.com'), 'an empty label is not a label');
  t.notOk(hostMatches(w, 'aexample.com'), 'a label boundary, not a string suffix');
  t.notOk(hostMatches(w, 'example.com.evil.net'), 'suffix only');
  t.notOk(hostMatches(w, 'example.org'));
  t.ok(hostMatches(w, 'A.B.EXAMPLE.COM.'), 'case-insensitive, trailing dot tolerated');

  const e = host(parsePolicy(lease(hostNet('api.example.com'))).leases[0].network);
  t.ok(hostMatches(e, 'api.example.com'));
  t.ok(hostMatches(e, 'Api.Example.Com'), 'case-insensitive');
  t.ok(hostMatches(e, 'api.example.com.'), 'trailing dot tolerated');
  t.notOk(hostMatches(e, 'api.example.com..'), 'one trailing dot only');
  t.notOk(hostMatches(e, 'x.api.example.com'), 'exact: no subdomains');
  t.notOk(hostMatches(e, 'example.com'));
  t.notOk(hostMatches(e, 'api\u212aexample.com'), 'no Unicode case folding');
  t.notOk(hostMatches(e, 'api.example.com\u0000'), 'no stray bytes');
  t.notOk(hostMatches(e, ''), 'empty');

  t.equal(canonicalName('WWW.Example.COM.'), 'www.example.com');
  t.equal(canonicalName('\u212a.example.com'), null, 'Kelvin sign is not k');
  t.equal(canonicalName('a b.example.com'), null);
  t.equal(canonicalName(`${'a'.repeat(64)}.com`), null);
});

t.test('a host rule never matches an address', async (t) => {
  const p = parsePolicy({
    schema: 1,
    grants: [{ network: { protocol: 'tcp', host: 'localhost.example', port: 443 } }],
    leases: [{ network: { protocol: 'tcp', host: '*.example.com', ports: '1-64' }, ttl_s: 30 }],
    delegate: [{ network: { protocol: 'tcp', host: 'api.example.net', port: 443 }, to: 'egress-proxy' }],
  });
  for (const r of [p.grants[0], p.leases[0], p.delegate[0]]) {
    for (const address of ['127.0.0.1', '93.184.216.34', '0.0.0.0']) {
      for (const port of [1, 443, 64]) t.notOk(matchesNetwork(r.network, { family: 'ipv4', protocol: 'tcp', address, port }), `${r.network.text} vs ${address}:${port}`);
    }
    t.notOk(matchesNetwork(r.network, { family: 'ipv6', protocol: 'tcp', address: '::1', port: 443 }));
  }
  // an address rule beside them still matches
  const mixed = parsePolicy({
    schema: 1,
    leases: [
      { network: { protocol: 'tcp', host: '*.example.com', port: 443 }, ttl_s: 30 },
      { network: { protocol: 'tcp', cidr: '10.0.0.0/8', port: 443 }, ttl_s: 30 },
    ],
  });
  const e = { family: 'ipv4' as const, protocol: 'tcp' as const, address: '10.1.2.3', port: 443 };
  t.equal(mixed.leases.find((r) => matchesNetwork(r.network, e)), mixed.leases[1]);
  t.equal(mixed.leases.find((r) => matchesNetwork(r.network, { ...e, address: '11.1.2.3' })), undefined);
});

t.test('hostRules and ruleForName: grants, then leases, then delegate', async (t) => {
  const p = parsePolicy({
    schema: 1,
    grants: [
      { network: { protocol: 'udp', address: '127.0.0.53', port: 53 } },
      { network: { protocol: 'tcp', host: 'api.example.com', port: 443 } },
    ],
    leases: [
      { network: { protocol: 'tcp', cidr: '10.0.0.0/8', port: 443 }, ttl_s: 30 },
      { network: { protocol: 'tcp', host: '*.example.com', port: 443 }, ttl_s: 30 },
      { network: { protocol: 'udp', host: '*.example.com', port: 443 }, ttl_s: 30 },
      { network: { protocol: 'tcp', host: 'x.example.com', port: 8443 }, ttl_s: 30 },
    ],
    delegate: [
      { network: { protocol: 'tcp', host: 'example.com', port: 443 }, to: 'egress-proxy' },
      { network: { protocol: 'tcp', host: '*.example.org', port: 443 }, to: 'egress-proxy' },
    ],
  });
  t.same(
    hostRules(p).map((r) => [r.list, r.index, r.rule.host]),
    [
      ['grants', 1, 'api.example.com'],
      ['leases', 1, '*.example.com'],
      ['leases', 2, '*.example.com'],
      ['leases', 3, 'x.example.com'],
      ['delegate', 0, 'example.com'],
      ['delegate', 1, '*.example.org'],
    ],
  );
  const at = (name: string, protocol?: 'tcp' | 'udp') => {
    const r = ruleForName(p, name, protocol);
    return r && [r.list, r.index];
  };
  t.same(at('api.example.com'), ['grants', 1], 'a grant before the wildcard lease');
  t.same(at('API.example.com.'), ['grants', 1]);
  t.same(at('x.example.com'), ['leases', 1], 'the first covering rule in file order, not the most specific');
  t.same(at('x.example.com', 'udp'), ['leases', 2], 'protocol filters');
  t.same(at('example.com'), ['delegate', 0], 'the apex is not under *.example.com');
  t.equal(at('example.com', 'udp'), null);
  t.same(at('a.b.example.org'), ['delegate', 1]);
  t.equal(at('example.org'), null);
  t.equal(at('evil.net'), null);
  t.equal(at('10.1.2.3'), null, 'an address is not a name any rule covers');
  const r = ruleForName(p, 'x.example.com');
  t.equal(r?.rule, p.leases[1].network, 'the parsed rule itself');
  t.same(hostRules(parsePolicy({ schema: 1 })), []);
});

t.test('dns_budget: 1..100000, default 1000', async (t) => {
  t.equal(parsePolicy({ schema: 1 }).dns_budget, 1000);
  t.equal(parsePolicy({ schema: 1, dns_budget: 1 }).dns_budget, 1);
  t.equal(parsePolicy({ schema: 1, dns_budget: 100000 }).dns_budget, 100000);
  t.equal(refusal({ schema: 1, dns_budget: 0 }), 'policy /dns_budget: must be >= 1');
  t.equal(refusal({ schema: 1, dns_budget: 100001 }), 'policy /dns_budget: must be <= 100000');
  t.equal(refusal({ schema: 1, dns_budget: 1.5 }), 'policy /dns_budget: must be integer');
  t.equal(refusal({ schema: 1, dns_budget: '10' }), 'policy /dns_budget: must be integer');
  t.same(await checkPolicy({ schema: 1, dns_budget: 0 }), [{ pointer: '/dns_budget', message: 'must be >= 1' }]);
});

t.test('checkPolicy lists every problem, with pointers, in document order', async (t) => {
  const doc = {
    schema: 1,
    grants: [{ network: { protocol: 'tcp', host: 'Bücher.example', port: 443 } }],
    leases: [
      { network: { protocol: 'tcp', host: '*.example.com', ports: '1-100' }, ttl_s: 0 },
      { network: { protocol: 'tcp', cidr: '10.0.0.1/8', port: 1 }, ttl_s: 1 },
    ],
    delegate: [{ network: { protocol: 'tcp', host: 'a.*.example.com', address: '1.2.3.4', port: 1 }, to: 'x' }],
    dns_budget: 0,
    extra: true,
  };
  const problems = await checkPolicy(doc);
  t.same(
    problems.map((p) => p.pointer),
    ['/', '/grants/0/network/host', '/leases/0/ttl_s', '/leases/0/network/ports', '/leases/1/network', '/delegate/0/network', '/delegate/0/network/host', '/dns_budget'],
  );
  t.match(problems[4].message, /host bits set \(did you mean 10.0.0.0\/8\?\)/);
  // parsePolicy reports one of them
  t.match(refusal(doc) ?? '', /^policy \//);
  t.same(await checkPolicy({ schema: 2, nonsense: 1 }), [{ pointer: '/schema', message: 'unsupported schema 2 (expected 1)' }]);
  t.same(await checkPolicy(null), [{ pointer: '/', message: 'must be object' }]);
  t.same(await checkPolicy({ schema: 1, grants: 'x' }), [{ pointer: '/grants', message: 'must be array' }]);
});
