// Protobuf codec: round trips and strict refusal of everything protobufjs
// would silently accept (unknown fields at any depth, wrong wire types,
// duplicates, two oneof members, schema != 2, unspecified enums, ...).
import t from 'tap';
import { checkResolution, decodeFault, decodeResolution, encodeFault, encodeResolution } from '../../src/protocol/codec';
import { computeMac } from '../../src/protocol/mac';
import { ACTION, FAMILY, FILE_ACCESS, PROTOCOL, SOURCE, STATEMENT_CLASS } from '../../src/protocol/enums';
import { ACTIONS, EFFECT_TYPES, SOURCES, SUBJECT_KINDS, type Effect, type Fault, type Resolution } from '../../src/protocol/types';
import { MESSAGES } from '../../src/gen/fault-fields';

// ---- hand-rolled wire writer: inject anything at any depth
function varint(n: number | bigint): Buffer {
  let x = BigInt(n);
  const out: number[] = [];
  do {
    let b = Number(x & 0x7fn);
    x >>= 7n;
    if (x > 0n) b |= 0x80;
    out.push(b);
  } while (x > 0n);
  return Buffer.from(out);
}
const tag = (field: number, wire: number) => varint((BigInt(field) << 3n) | BigInt(wire));
const v = (field: number, n: number | bigint) => Buffer.concat([tag(field, 0), varint(n)]);
const ld = (field: number, p: Buffer | string) => {
  const b = typeof p === 'string' ? Buffer.from(p, 'utf8') : p;
  return Buffer.concat([tag(field, 2), varint(b.length), b]);
};
const cat = (...parts: Buffer[]) => Buffer.concat(parts);
type Level = 'top' | 'subject' | 'process' | 'effect' | 'network';
interface Hand {
  inject?: Partial<Record<Level, Buffer>>;
  schema?: number | null;
  network?: Buffer;
  source?: number;
}
/** The DESIGN.md example fault, by hand. */
function hand(o: Hand = {}): Buffer {
  const x = (k: Level) => o.inject?.[k] ?? Buffer.alloc(0);
  const network = o.network ?? cat(v(1, 1), v(2, 1), ld(3, '127.0.0.1'), v(4, 8080));
  return cat(
    o.schema === null ? Buffer.alloc(0) : v(1, o.schema ?? 2),
    ld(2, 'demo'),
    ld(3, 'f-0001'),
    ld(4, cat(ld(1, cat(v(1, 4242), v(2, 123456), x('process'))), x('subject'))),
    ld(5, cat(ld(1, cat(network, x('network'))), x('effect'))),
    v(6, o.source ?? 3),
    x('top'),
  );
}

const base: Fault = {
  schema: 2,
  operation_id: 'demo',
  fault_id: 'f-0001',
  subject: { process: { pid: 4242, start_time_ticks: 123456 } },
  effect: { network: { family: 'ipv4', protocol: 'tcp', address: '127.0.0.1', port: 8080 } },
  source: 'manual',
  observed_at_boot_ns: 0n,
  cgroup_id: 0n,
};

const effects: Effect[] = [
  { network: { family: 'ipv6', protocol: 'udp', address: '2001:db8::53', port: 53 } },
  { file: { path: '/etc/shadow', access: 'read' } },
  { syscall: { name: 'socket', number: 41, capability: 'CAP_NET_RAW' } },
  { syscall: { name: 'ptrace', number: 101 } },
  { secret: { name: 'db-password', scope: 'prod' } },
  { cloud_iam: { provider: 'aws', action: 's3:PutObject', resource: 'arn:aws:s3:::bucket/key' } },
  { application: { name: 'github', action: 'merge', target: 'org/repo#1' } },
  { application: { name: 'slack', action: 'post' } },
  { database: { engine: 'postgres', database: 'app', statement_class: 'ddl', table: 'users' } },
  { database: { engine: 'mysql', database: 'app', statement_class: 'read' } },
  { promotion: { artifact: 'img@sha256:abc', from_stage: 'staging', to_stage: 'prod' } },
];

t.test('hand-built DESIGN example decodes', async (t) => {
  const r = decodeFault(hand());
  t.ok(r.ok, r.ok ? '' : r.detail);
  if (r.ok) t.same(r.fault, base);
});

t.test('round trip: every effect type, both subjects, 64-bit values', async (t) => {
  for (const effect of effects) {
    const f: Fault = { ...base, effect };
    const r = decodeFault(encodeFault(f));
    t.ok(r.ok, JSON.stringify(effect));
    if (r.ok) t.same(r.fault, f);
  }
  const big: Fault = {
    ...base,
    subject: { peer: { address: '10.77.0.2' } },
    source: 'peer_gateway',
    observed_at_boot_ns: 18446744073709551615n,
    cgroup_id: 9007199254740993n,
  };
  const r = decodeFault(encodeFault(big));
  t.ok(r.ok);
  if (r.ok) t.same(r.fault, big);
  t.same(encodeFault(base), hand(), 'encoder output equals the hand-built bytes');
});

t.test('unknown fields are refused at every level', async (t) => {
  const junk = v(99, 1);
  const cases: [Level, string][] = [
    ['top', '/: unknown field 99'],
    ['subject', '/subject: unknown field 99'],
    ['process', '/subject/process: unknown field 99'],
    ['effect', '/effect: unknown field 99'],
    ['network', '/effect/network: unknown field 99'],
  ];
  for (const [level, want] of cases) {
    const r = decodeFault(hand({ inject: { [level]: junk } }));
    t.notOk(r.ok, level);
    if (!r.ok) {
      t.equal(r.reason, 'malformed_fault');
      t.match(r.detail, want, level);
    }
  }
  // length-delimited and fixed-width unknowns too
  for (const extra of [ld(15, 'x'), cat(tag(20, 1), Buffer.alloc(8)), cat(tag(21, 5), Buffer.alloc(4))]) {
    const r = decodeFault(hand({ inject: { network: extra } }));
    t.notOk(r.ok);
    if (!r.ok) t.match(r.detail, /^\/effect\/network: unknown field/);
  }
  // an unknown field inside another effect type
  const secret = cat(v(1, 2), ld(2, 'o'), ld(3, 'f'), ld(4, ld(1, cat(v(1, 1), v(2, 1)))),
    ld(5, ld(4, cat(ld(1, 'n'), ld(2, 's'), v(3, 7)))), v(6, 3));
  const r = decodeFault(secret);
  t.notOk(r.ok);
  if (!r.ok) t.equal(r.detail, '/effect/secret: unknown field 3 (wire type 0)');
});

t.test('schema must be 2', async (t) => {
  for (const [schema, want] of [[3, 'unsupported schema 3 (expected 2)'], [1, 'unsupported schema 1'], [null, '/schema: missing']] as const) {
    const r = decodeFault(hand({ schema }));
    t.notOk(r.ok, String(schema));
    if (!r.ok) t.match(r.detail, want);
  }
  // a newer schema with fields we do not know is reported as a schema mismatch
  const r = decodeFault(hand({ schema: 3, inject: { top: v(42, 1) } }));
  if (!r.ok) t.match(r.detail, /^\/schema: unsupported schema 3/);
  else t.fail('schema 3 accepted');
});

t.test('structural refusals', async (t) => {
  const without = (field: number) =>
    cat(v(1, 2), ld(2, 'demo'), ld(3, 'f-0001'),
      field === 4 ? Buffer.alloc(0) : ld(4, ld(1, cat(v(1, 4242), v(2, 123456)))),
      field === 5 ? Buffer.alloc(0) : ld(5, ld(1, cat(v(1, 1), v(2, 1), ld(3, '127.0.0.1'), v(4, 8080)))),
      v(6, 3));
  const cases: [string, Buffer, RegExp][] = [
    ['missing subject', without(4), /^\/subject: missing/],
    ['missing effect', without(5), /^\/effect: missing/],
    ['empty subject', cat(v(1, 2), ld(2, 'd'), ld(3, 'f'), ld(4, Buffer.alloc(0)), ld(5, ld(1, cat(v(1, 1), v(2, 1), ld(3, '1.2.3.4'), v(4, 1)))), v(6, 3)), /^\/subject: exactly one/],
    ['empty effect', cat(v(1, 2), ld(2, 'd'), ld(3, 'f'), ld(4, ld(2, ld(1, '10.0.0.1'))), ld(5, Buffer.alloc(0)), v(6, 3)), /^\/effect: exactly one/],
    ['two subject kinds', hand({ inject: { subject: ld(2, ld(1, '10.0.0.2')) } }), /^\/subject: both "process" and "peer"/],
    ['two effect kinds', hand({ inject: { effect: ld(2, cat(ld(1, '/x'), v(2, 1))) } }), /^\/effect: both "network" and "file"/],
    ['repeated field', hand({ inject: { top: ld(3, 'f-0002') } }), /^\/fault_id: field repeated/],
    ['repeated nested field', hand({ inject: { network: v(4, 80) } }), /^\/effect\/network\/port: field repeated/],
    ['wrong wire type top', hand({ inject: { top: ld(7, 'x') } }), /^\/observed_at_boot_ns: wrong wire type 2/],
    ['wrong wire type nested', hand({ network: cat(v(1, 1), v(2, 1), v(3, 5), v(4, 1)) }), /^\/effect\/network\/address: wrong wire type 0/],
    ['group wire type', hand({ inject: { top: tag(8, 3) } }), /^\/cgroup_id: wrong wire type 3/],
    ['field number 0', hand({ inject: { top: v(0, 1) } }), /invalid field number 0/],
    ['unspecified source', hand({ source: 0 }), /^\/source: unspecified/],
    ['unknown source', hand({ source: 9 }), /^\/source: unknown value 9/],
    ['unspecified family', hand({ network: cat(v(2, 1), ld(3, '127.0.0.1'), v(4, 1)) }), /^\/effect\/network\/family: unspecified/],
    ['unspecified protocol', hand({ network: cat(v(1, 1), ld(3, '127.0.0.1'), v(4, 1)) }), /^\/effect\/network\/protocol: unspecified/],
    ['port > 65535', hand({ network: cat(v(1, 1), v(2, 1), ld(3, '127.0.0.1'), v(4, 65536)) }), /^\/effect\/network\/port: must be <= 65535/],
    ['uint32 overflow', hand({ network: cat(v(1, 1), v(2, 1), ld(3, '127.0.0.1'), v(4, 2n ** 32n + 80n)) }), /^\/effect\/network\/port: value out of range/],
    ['v6 address for ipv4', hand({ network: cat(v(1, 1), v(2, 1), ld(3, '::1'), v(4, 1)) }), /^\/effect\/network\/address: "::1" is not an ipv4 address/],
    ['v4 address for ipv6', hand({ network: cat(v(1, 2), v(2, 1), ld(3, '127.0.0.1'), v(4, 1)) }), /not an ipv6 address/],
    ['garbage address', hand({ network: cat(v(1, 1), v(2, 1), ld(3, '999.1.1.1'), v(4, 1)) }), /^\/effect\/network\/address:/],
    ['zone id', hand({ network: cat(v(1, 2), v(2, 1), ld(3, 'fe80::1%eth0'), v(4, 1)) }), /^\/effect\/network\/address:/],
    ['invalid UTF-8', cat(v(1, 2), ld(2, Buffer.from([0x64, 0xff])), ld(3, 'f')), /^\/operation_id: invalid UTF-8/],
    ['truncated length', cat(v(1, 2), tag(2, 2), varint(50), Buffer.from('de')), /^\/operation_id: truncated/],
    ['truncated varint', cat(v(1, 2), tag(7, 0), Buffer.from([0xff])), /^\/observed_at_boot_ns: malformed varint/],
    ['varint > 64 bits', cat(v(1, 2), tag(7, 0), Buffer.from([0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f])), /malformed varint/],
    ['bad fault id', cat(v(1, 2), ld(2, 'demo'), ld(3, '../x'), ld(4, ld(1, cat(v(1, 1), v(2, 1)))), ld(5, ld(1, cat(v(1, 1), v(2, 1), ld(3, '1.2.3.4'), v(4, 1)))), v(6, 3)), /^\/fault_id: must match pattern/],
    ['pid 0', cat(v(1, 2), ld(2, 'demo'), ld(3, 'f'), ld(4, ld(1, v(2, 1))), ld(5, ld(1, cat(v(1, 1), v(2, 1), ld(3, '1.2.3.4'), v(4, 1)))), v(6, 3)), /^\/subject\/process\/pid: must be >= 1/],
    ['start_time_ticks > 2^53', cat(v(1, 2), ld(2, 'demo'), ld(3, 'f'), ld(4, ld(1, cat(v(1, 1), v(2, 2n ** 60n)))), ld(5, ld(1, cat(v(1, 1), v(2, 1), ld(3, '1.2.3.4'), v(4, 1)))), v(6, 3)), /^\/subject\/process\/start_time_ticks: must be <=/],
    ['empty buffer', Buffer.alloc(0), /empty message/],
  ];
  for (const [name, buf, want] of cases) {
    const r = decodeFault(buf);
    t.notOk(r.ok, name);
    if (!r.ok) t.match(r.detail, want, name);
  }
});

t.test('encodeFault refuses invalid faults', async (t) => {
  t.throws(() => encodeFault({ ...base, effect: { network: { ...base.effect.network!, port: 70000 } } }), { code: 'E_SCHEMA' });
  t.throws(() => encodeFault({ ...base, fault_id: '' }), { code: 'E_SCHEMA' });
});

const key = Buffer.alloc(32, 7);
const lease: Resolution = {
  fault_id: 'f-0001',
  action: 'retry_after_lease',
  reason: 'lease_installed',
  lease: { generation: 3, family: 'ipv4', protocol: 'tcp', address: '127.0.0.1', port: 8080, expires_at_boot_ns: 1234567890n, max_uses: 0 },
};
const resolutions: Resolution[] = [
  lease,
  { fault_id: 'f-2', action: 'continue_already_authorized', reason: 'already_authorized' },
  { fault_id: 'f-3', action: 'delegate', reason: 'policy_delegate', delegate_to: 'egress-proxy' },
  { fault_id: 'f-4', action: 'deny', reason: 'capability_fault_backend_unavailable' },
  { ...lease, lease: { ...lease.lease!, family: 'ipv6', address: '::1', expires_at_boot_ns: 2n ** 64n - 1n, max_uses: 4294967295 } },
];

t.test('resolution round trip', async (t) => {
  for (const r of resolutions) {
    const mac = computeMac(key, r);
    const d = decodeResolution(encodeResolution(r, mac));
    t.ok(d.ok, d.ok ? r.action : d.detail);
    if (d.ok) {
      t.same(d.resolution, r);
      t.same(d.mac, mac);
    }
  }
});

t.test('resolution consistency is enforced both ways', async (t) => {
  const mac = Buffer.alloc(32);
  const bad: [Resolution, RegExp][] = [
    [{ fault_id: 'f', action: 'deny', reason: 'because' }, /not a deny reason/],
    [{ fault_id: 'f', action: 'retry_after_lease', reason: 'lease_installed' }, /lease: required/],
    [{ ...lease, action: 'continue_already_authorized' }, /lease: only allowed/],
    [{ fault_id: 'f', action: 'delegate', reason: 'x' }, /delegate_to: required/],
    [{ fault_id: 'f', action: 'deny', reason: 'policy_denied', delegate_to: 'x' }, /delegate_to: only allowed/],
    [{ fault_id: 'f', action: 'deny', reason: 'Policy Denied' }, /snake_case/],
    [{ ...lease, lease: { ...lease.lease!, address: '::1' } }, /lease\/address/],
    [{ ...lease, lease: { ...lease.lease!, port: 65536 } }, /lease\/port/],
  ];
  for (const [r, want] of bad) {
    t.match(checkResolution(r), want);
    t.throws(() => encodeResolution(r, mac), { code: 'E_SCHEMA' });
  }
  t.throws(() => encodeResolution(lease, Buffer.alloc(31)), { code: 'E_SCHEMA' });

  const good = encodeResolution(lease, mac);
  const withUnknown = Buffer.concat([good, v(9, 1)]);
  const d1 = decodeResolution(withUnknown);
  t.notOk(d1.ok);
  if (!d1.ok) t.match(d1.detail, '/: unknown field 9');
  // unknown field inside the lease: rebuild lease bytes by hand
  const leaseBytes = cat(v(1, 3), v(2, 1), v(3, 1), ld(4, '127.0.0.1'), v(5, 8080), v(6, 1234567890), v(8, 1));
  const d2 = decodeResolution(cat(ld(1, 'f-0001'), v(2, 2), ld(3, 'lease_installed'), ld(4, leaseBytes), ld(6, mac)));
  t.notOk(d2.ok);
  if (!d2.ok) t.match(d2.detail, '/lease: unknown field 8');
  const d3 = decodeResolution(cat(ld(1, 'f-0001'), v(2, 0), ld(3, 'x'), ld(6, mac)));
  t.notOk(d3.ok);
  if (!d3.ok) t.match(d3.detail, '/action: unspecified');
  const d4 = decodeResolution(cat(ld(1, 'f'), v(2, 4), ld(3, 'policy_denied')));
  t.notOk(d4.ok, 'missing mac');
  if (!d4.ok) t.match(d4.detail, '/mac: must be 32 bytes');
});

t.test('TypeScript vocabularies match fault.proto', async (t) => {
  const oneof = (m: keyof typeof MESSAGES) => Object.values(MESSAGES[m]).map((f) => f.name);
  t.same(oneof('gensee.v2.Effect'), [...EFFECT_TYPES]);
  t.same(oneof('gensee.v2.Subject'), [...SUBJECT_KINDS]);
  t.same([...ACTION.byName.keys()], [...ACTIONS]);
  t.same([...SOURCE.byName.keys()], [...SOURCES]);
  t.same([...FAMILY.byName.keys()], ['ipv4', 'ipv6']);
  t.same([...PROTOCOL.byName.keys()], ['tcp', 'udp']);
  t.same([...FILE_ACCESS.byName.keys()], ['read', 'write', 'exec', 'create', 'delete']);
  t.same([...STATEMENT_CLASS.byName.keys()], ['read', 'write', 'ddl', 'admin']);
  // nothing in the fault lets the workload pick an executor, approval, promotion mode or grant
  const names = Object.values(MESSAGES).flatMap((m) => Object.values(m).map((f) => f.name));
  for (const bad of ['executor', 'mediator', 'approval', 'approve', 'grant', 'mode', 'delegate_to', 'lease']) {
    t.notOk(Object.values(MESSAGES['gensee.v2.CapabilityFault']).some((f) => f.name === bad), `fault has no "${bad}"`);
  }
  t.ok(names.includes('delegate_to'), 'delegate_to exists only on Resolution');
});
