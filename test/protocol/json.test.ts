// JSON forms: fault validation names the offending field, resolution output
// is exactly the DESIGN form, policies parse CIDRs and port ranges.
import t from 'tap';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { BOUNDARY_KINDS } from '../../src/events/types';
import {
  checkBoundaryEvent,
  faultFromJson,
  faultToJson,
  parsePolicy,
  policyHash,
  resolutionToJson,
} from '../../src/protocol/json';
import { formatIp, matchesNetwork, parseCidr, parseIp, parsePortRange } from '../../src/protocol/ip';
import { EFFECT_TYPES, type AddressMatch, type NetworkMatch } from '../../src/protocol/types';

/** an address rule (host rules have no prefix or family) */
function addr(m: NetworkMatch): AddressMatch {
  if (m.kind !== 'address') throw new Error(`not an address rule: ${m.text}`);
  return m;
}

const example = () => ({
  schema: 2,
  operation_id: 'demo',
  fault_id: 'f-0001',
  subject: { process: { pid: 4242, start_time_ticks: 123456 } },
  effect: { network: { family: 'ipv4', protocol: 'tcp', address: '127.0.0.1', port: 8080 } } as Record<string, unknown>,
  source: 'manual',
} as Record<string, unknown>);

t.test('DESIGN example fault parses', async (t) => {
  const r = faultFromJson(example());
  t.ok(r.ok);
  if (!r.ok) return;
  t.same(r.fault.effect, { network: { family: 'ipv4', protocol: 'tcp', address: '127.0.0.1', port: 8080 } });
  t.equal(r.fault.observed_at_boot_ns, 0n);
  const peer = faultFromJson({ ...example(), subject: { peer: { address: '10.77.0.2' } }, cgroup_id: '18446744073709551615' });
  t.ok(peer.ok);
  if (peer.ok) {
    t.equal(peer.fault.cgroup_id, 18446744073709551615n);
    const again = faultFromJson(JSON.parse(JSON.stringify(faultToJson(peer.fault))));
    t.ok(again.ok, 'faultToJson output parses back');
    if (again.ok) t.same(again.fault, peer.fault);
  }
});

t.test('every effect type is accepted with its proto fields', async (t) => {
  const bodies: Record<string, unknown> = {
    network: { family: 'ipv6', protocol: 'udp', address: '::1', port: 53 },
    file: { path: '/etc/passwd', access: 'write' },
    syscall: { name: 'socket', number: 41, capability: 'CAP_NET_RAW' },
    secret: { name: 'token', scope: 'ci' },
    cloud_iam: { provider: 'gcp', action: 'storage.objects.create', resource: 'projects/p/buckets/b' },
    application: { name: 'jira', action: 'transition', target: 'ABC-1' },
    database: { engine: 'postgres', database: 'app', statement_class: 'write', table: 'orders' },
    promotion: { artifact: 'build-42', from_stage: 'staging', to_stage: 'prod' },
  };
  t.same(Object.keys(bodies).sort(), [...EFFECT_TYPES].sort());
  for (const [k, body] of Object.entries(bodies)) {
    const r = faultFromJson({ ...example(), effect: { [k]: body } });
    t.ok(r.ok, r.ok ? k : `${k}: ${r.detail}`);
  }
});

t.test('each JSON error names its field', async (t) => {
  const net = (extra: Record<string, unknown>) => ({ ...example(), effect: { network: { family: 'ipv4', protocol: 'tcp', address: '127.0.0.1', port: 8080, ...extra } } });
  const cases: [string, unknown, string | RegExp][] = [
    ['port range', net({ port: 65536 }), '/effect/network/port: must be <= 65535'],
    ['port type', net({ port: '80' }), '/effect/network/port: must be integer'],
    ['unknown nested field', net({ foo: 1 }), '/effect/network: unknown field "foo"'],
    ['unknown top field', { ...example(), executor: 'me' }, '/: unknown field "executor"'],
    ['unknown subject field', { ...example(), subject: { process: { pid: 1, start_time_ticks: 1, uid: 0 } } }, '/subject/process: unknown field "uid"'],
    ['unknown effect type', { ...example(), effect: { dns: {} } }, /^\/effect: unknown effect type "dns" \(expected one of network\|file\|/],
    ['two effects', { ...example(), effect: { network: net({}).effect.network, file: { path: '/x', access: 'read' } } }, /^\/effect: exactly one effect type required/],
    ['no effect', { ...example(), effect: {} }, /^\/effect: exactly one effect type required/],
    ['two subjects', { ...example(), subject: { process: { pid: 1, start_time_ticks: 1 }, peer: { address: '10.0.0.1' } } }, /^\/subject: exactly one subject kind/],
    ['missing field', net({ port: undefined }), '/effect/network/port: required field missing'],
    ['missing top', (() => { const e = example(); delete e.source; return e; })(), '/source: required field missing'],
    ['family', net({ family: 'inet' }), '/effect/network/family: must be one of "ipv4"|"ipv6"'],
    ['protocol', net({ protocol: 'sctp' }), '/effect/network/protocol: must be one of "tcp"|"udp"'],
    ['source', { ...example(), source: 'workload' }, '/source: must be one of "seccomp_notify"|"cgroup_hook"|"manual"|"peer_gateway"|"executor"'],
    ['address for family', net({ address: '::1' }), '/effect/network/address: "::1" is not an ipv4 address'],
    ['leading zeros', net({ address: '127.000.0.1' }), /^\/effect\/network\/address:/],
    ['schema 3', { ...example(), schema: 3 }, '/schema: unsupported schema 3 (expected 2)'],
    ['schema 3 with new fields', { ...example(), schema: 3, approval: 'auto' }, '/schema: unsupported schema 3 (expected 2)'],
    ['schema missing', (() => { const e = example(); delete e.schema; return e; })(), '/schema: required field missing'],
    ['uint64 overflow', { ...example(), observed_at_boot_ns: '18446744073709551616' }, '/observed_at_boot_ns: must be <= 18446744073709551615'],
    ['uint64 unsafe number', { ...example(), cgroup_id: 2 ** 60 }, /^\/cgroup_id: must be <=/],
    ['syscall capability', { ...example(), effect: { syscall: { name: 'socket', number: 41, capability: 'NET_RAW' } } }, /^\/effect\/syscall\/capability: must match pattern/],
    ['file access', { ...example(), effect: { file: { path: '/x', access: 'chmod' } } }, /^\/effect\/file\/access: must be one of/],
    ['database class', { ...example(), effect: { database: { engine: 'pg', database: 'd', statement_class: 'drop' } } }, /^\/effect\/database\/statement_class:/],
    ['empty string', { ...example(), effect: { secret: { name: '', scope: 's' } } }, /^\/effect\/secret\/name: must NOT have fewer than 1 characters/],
    ['not an object', 'hello', '/: must be object'],
    ['array', [], '/: must be object'],
  ];
  for (const [name, value, want] of cases) {
    const r = faultFromJson(value);
    t.notOk(r.ok, name);
    if (!r.ok) {
      t.equal(r.reason, 'malformed_fault');
      if (typeof want === 'string') t.equal(r.detail, want, name);
      else t.match(r.detail, want, name);
    }
  }
});

t.test('resolutionToJson is the DESIGN form', async (t) => {
  const out = resolutionToJson({
    fault_id: 'f-0001',
    action: 'retry_after_lease',
    reason: 'lease_installed',
    lease: { generation: 3, family: 'ipv4', protocol: 'tcp', address: '127.0.0.1', port: 8080, expires_at_boot_ns: 1234567890n, max_uses: 0 },
  });
  t.equal(
    JSON.stringify(out),
    '{"fault_id":"f-0001","action":"retry_after_lease","reason":"lease_installed",' +
      '"lease":{"generation":3,"family":"ipv4","protocol":"tcp","address":"127.0.0.1","port":8080,' +
      '"expires_at_boot_ns":"1234567890","max_uses":0}}',
  );
  t.equal(
    JSON.stringify(resolutionToJson({ fault_id: 'f', action: 'delegate', reason: 'policy_delegate', delegate_to: 'egress-proxy' })),
    '{"fault_id":"f","action":"delegate","reason":"policy_delegate","delegate_to":"egress-proxy"}',
  );
  t.equal(JSON.stringify(resolutionToJson({ fault_id: 'f', action: 'deny', reason: 'timeout' })), '{"fault_id":"f","action":"deny","reason":"timeout"}');
});

const designPolicy = {
  schema: 1,
  grants: [{ network: { protocol: 'udp', address: '127.0.0.53', port: 53 } }],
  leases: [{ network: { protocol: 'tcp', cidr: '127.0.0.0/8', ports: '8000-8999' }, ttl_s: 30, max_uses: 0 }],
  delegate: [{ network: { protocol: 'tcp', cidr: '0.0.0.0/0', ports: '443' }, to: 'egress-proxy' }],
  fault_deadline_ms: 5000,
};

t.test('DESIGN policy parses', async (t) => {
  const p = parsePolicy(designPolicy);
  t.equal(p.fault_deadline_ms, 5000);
  t.equal(addr(p.grants[0].network).prefix, 32);
  t.same(p.grants[0].network.ports, { lo: 53, hi: 53 });
  t.same(p.leases[0].network.ports, { lo: 8000, hi: 8999 });
  t.equal(p.leases[0].network.text, 'tcp 127.0.0.0/8 8000-8999');
  t.equal(p.delegate[0].to, 'egress-proxy');
  const eff = (address: string, port: number, protocol: 'tcp' | 'udp' = 'tcp') => ({ family: 'ipv4' as const, protocol, address, port });
  t.ok(matchesNetwork(p.leases[0].network, eff('127.9.9.9', 8000)));
  t.ok(matchesNetwork(p.leases[0].network, eff('127.0.0.1', 8999)));
  t.notOk(matchesNetwork(p.leases[0].network, eff('127.0.0.1', 9000)));
  t.notOk(matchesNetwork(p.leases[0].network, eff('128.0.0.1', 8080)));
  t.notOk(matchesNetwork(p.leases[0].network, eff('127.0.0.1', 8080, 'udp')));
  t.ok(matchesNetwork(p.grants[0].network, eff('127.0.0.53', 53, 'udp')));
  t.notOk(matchesNetwork(p.grants[0].network, eff('127.0.0.54', 53, 'udp')));
  t.ok(matchesNetwork(p.delegate[0].network, eff('93.184.216.34', 443)));
  t.notOk(matchesNetwork(p.delegate[0].network, { family: 'ipv6', protocol: 'tcp', address: '::ffff:93.184.216.34', port: 443 }), 'v4-mapped does not match a v4 rule');

  const minimal = parsePolicy({ schema: 1 });
  t.same([minimal.grants, minimal.leases, minimal.delegate, minimal.fault_deadline_ms, minimal.dns_budget], [[], [], [], 5000, 1000]);
});

t.test('IPv6 policies', async (t) => {
  const p = parsePolicy({
    schema: 1,
    leases: [{ network: { protocol: 'tcp', cidr: '2001:db8::/32', ports: '443' }, ttl_s: 10 }],
    grants: [{ network: { protocol: 'udp', address: '::1', port: 53 } }],
  });
  t.equal(addr(p.leases[0].network).family, 'ipv6');
  t.equal(p.leases[0].max_uses, 0);
  const e = (address: string) => ({ family: 'ipv6' as const, protocol: 'tcp' as const, address, port: 443 });
  t.ok(matchesNetwork(p.leases[0].network, e('2001:db8:ffff::1')));
  t.ok(matchesNetwork(p.leases[0].network, e('2001:0DB8:0:0:0:0:0:1')));
  t.notOk(matchesNetwork(p.leases[0].network, e('2001:db9::1')));
  t.notOk(matchesNetwork(p.leases[0].network, { ...e('127.0.0.1'), family: 'ipv4' }));
  t.equal(addr(p.grants[0].network).prefix, 128);
  t.ok(matchesNetwork(p.grants[0].network, { family: 'ipv6', protocol: 'udp', address: '0:0::1', port: 53 }));
});

t.test('bad policies are refused with the field named', async (t) => {
  const net = (network: Record<string, unknown>) => ({ schema: 1, leases: [{ network, ttl_s: 30 }] });
  const cases: [string, unknown, string | RegExp][] = [
    ['schema 2', { ...designPolicy, schema: 2 }, 'policy /schema: unsupported schema 2 (expected 1)'],
    ['unknown top', { ...designPolicy, approve: true }, 'policy /: unknown field "approve"'],
    ['unknown rule field', { schema: 1, grants: [{ network: { protocol: 'tcp', address: '1.2.3.4', port: 1 }, ttl_s: 3 }] }, 'policy /grants/0: unknown field "ttl_s"'],
    ['unknown network field', net({ protocol: 'tcp', cidr: '10.0.0.0/8', ports: '1', family: 'ipv4' }), 'policy /leases/0/network: unknown field "family"'],
    ['address and cidr', net({ protocol: 'tcp', address: '10.0.0.1', cidr: '10.0.0.0/8', ports: '1' }), 'policy /leases/0/network: exactly one of "address", "cidr" or "host" required'],
    ['neither address nor cidr', net({ protocol: 'tcp', ports: '1' }), 'policy /leases/0/network: exactly one of "address", "cidr" or "host" required'],
    ['port and ports', net({ protocol: 'tcp', cidr: '10.0.0.0/8', port: 1, ports: '1' }), 'policy /leases/0/network: exactly one of "port" or "ports" required'],
    ['reversed range', net({ protocol: 'tcp', cidr: '10.0.0.0/8', ports: '9000-8000' }), 'policy /leases/0/network: bad ports "9000-8000": range is reversed'],
    ['range too big', net({ protocol: 'tcp', cidr: '10.0.0.0/8', ports: '1-70000' }), /port out of range/],
    ['ports garbage', net({ protocol: 'tcp', cidr: '10.0.0.0/8', ports: '80,443' }), /^policy \/leases\/0\/network\/ports: must match pattern/],
    ['host bits', net({ protocol: 'tcp', cidr: '127.0.0.1/8', ports: '80' }), 'policy /leases/0/network: bad CIDR "127.0.0.1/8": host bits set (did you mean 127.0.0.0/8?)'],
    ['v6 host bits', net({ protocol: 'tcp', cidr: '2001:db8::1/32', ports: '80' }), /did you mean 2001:db8::\/32\?/],
    ['prefix too long', net({ protocol: 'tcp', cidr: '10.0.0.0/33', ports: '80' }), /prefix \/33 exceeds \/32/],
    ['v6 prefix too long', net({ protocol: 'tcp', cidr: '::/129', ports: '80' }), /prefix \/129 exceeds \/128/],
    ['bad cidr address', net({ protocol: 'tcp', cidr: '300.0.0.0/8', ports: '80' }), /"300.0.0.0" is not an IPv4 or IPv6 address/],
    ['bad address', { schema: 1, grants: [{ network: { protocol: 'tcp', address: '1.2.3', port: 1 } }] }, 'policy /grants/0/network: address "1.2.3" is not an IPv4 or IPv6 address'],
    ['protocol', net({ protocol: 'icmp', cidr: '10.0.0.0/8', ports: '1' }), /^policy \/leases\/0\/network\/protocol: must be one of/],
    ['ttl missing', { schema: 1, leases: [{ network: { protocol: 'tcp', cidr: '10.0.0.0/8', ports: '1' } }] }, 'policy /leases/0/ttl_s: required field missing'],
    ['ttl zero', { schema: 1, leases: [{ network: { protocol: 'tcp', cidr: '10.0.0.0/8', ports: '1' }, ttl_s: 0 }] }, 'policy /leases/0/ttl_s: must be >= 1'],
    ['delegate to', { schema: 1, delegate: [{ network: { protocol: 'tcp', cidr: '0.0.0.0/0', ports: '443' }, to: 'Bad Name' }] }, /^policy \/delegate\/0\/to: must match pattern/],
    ['deadline', { schema: 1, fault_deadline_ms: 0 }, 'policy /fault_deadline_ms: must be >= 100'],
    ['not object', null, 'policy /: must be object'],
  ];
  for (const [name, value, want] of cases) {
    try {
      parsePolicy(value);
      t.fail(`${name}: accepted`);
    } catch (e) {
      const err = e as { code?: string; message: string };
      t.equal(err.code, 'E_SCHEMA', name);
      if (typeof want === 'string') t.equal(err.message, want, name);
      else t.match(err.message, want, name);
    }
  }
});

t.test('ip helpers', async (t) => {
  t.same(parseIp('127.0.0.1'), { family: 'ipv4', bytes: Buffer.from([127, 0, 0, 1]) });
  t.equal(parseIp('127.0.0.1', 'ipv6'), null);
  t.equal(parseIp('::1', 'ipv4'), null);
  t.equal(parseIp('01.2.3.4'), null);
  t.equal(parseIp('fe80::1%lo'), null);
  t.equal(formatIp(parseIp('::ffff:10.1.2.3')!.bytes), '::ffff:a01:203');
  t.equal(formatIp(parseIp('2001:DB8:0:0:1:0:0:1')!.bytes), '2001:db8::1:0:0:1');
  t.equal(formatIp(parseIp('2001:db8:0:1:1:1:1:1')!.bytes), '2001:db8:0:1:1:1:1:1');
  t.equal(formatIp(parseIp('::')!.bytes), '::');
  t.same(parseCidr('0.0.0.0/0'), { family: 'ipv4', bytes: Buffer.alloc(4), prefix: 0 });
  t.same(parseCidr('::/0'), { family: 'ipv6', bytes: Buffer.alloc(16), prefix: 0 });
  t.same(parsePortRange('0-65535'), { lo: 0, hi: 65535 });
  t.match(parsePortRange('65536'), /out of range/);
});

t.test('policyHash and boundary events', async (t) => {
  t.equal(policyHash(''), 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855');
  t.equal(policyHash(Buffer.from('{}')), policyHash('{}'));
  const ev = { kind: 'egress_denied', control: 'ebpf', detail: 'tcp 10.0.0.1:443 no lease', target: '10.0.0.1:443', at: new Date(0).toISOString() };
  t.equal(checkBoundaryEvent(ev), null);
  t.equal(checkBoundaryEvent({ ...ev, detail: 'x'.repeat(301) }), '/detail: must NOT have more than 300 characters');
  t.equal(checkBoundaryEvent({ ...ev, detail: 'é'.repeat(300) }), null, 'characters, not bytes');
  t.equal(checkBoundaryEvent({ ...ev, grant: true }), '/: unknown field "grant"');
  // kind is the closed list DESIGN.md fixes, the same as BOUNDARY_KINDS
  for (const kind of BOUNDARY_KINDS) t.equal(checkBoundaryEvent({ ...ev, kind }), null, kind);
  for (const kind of ['connect_denied', 'attention', 'Egress_denied', 'egress_denied ', '']) t.match(checkBoundaryEvent({ ...ev, kind }), /^\/kind: must be one of/, `${JSON.stringify(kind)} is not a kind`);
  const schema = JSON.parse(fs.readFileSync(path.join(__dirname, '../../../schema/boundary-event.schema.json'), 'utf8')) as { properties: { kind: { enum: string[] } } };
  t.same(schema.properties.kind.enum, [...BOUNDARY_KINDS], 'the schema enum is BOUNDARY_KINDS, in order');
  t.equal(checkBoundaryEvent({ kind: 'egress_denied', control: 'y', detail: '', at: 'yesterday' }), '/at: must match pattern "^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(\\.[0-9]{1,9})?Z$"');
});
