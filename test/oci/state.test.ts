// The container process state a runtime sends to listenerPath: what is
// accepted, what is refused (with which code), and how the operation is named.
import t from 'tap';
import { parseContainerProcessState, operationIdFor, opFromMetadata, defaultOpId, STATE_MAX_BYTES } from '../../src/oci/state';
import { isValidOpId } from '../../src/state/operation';

// exactly what runc 1.1.5 sent on this machine
const RUNC = {
  ociVersion: '1.0.2-dev',
  fds: ['seccompFd'],
  pid: 29794,
  metadata: 'op=manual1',
  state: { ociVersion: '1.0.2-dev', id: 'gsm2', status: 'creating', pid: 29794, bundle: '/tmp/gsb1' },
};

const buf = (v: unknown) => Buffer.from(typeof v === 'string' ? v : JSON.stringify(v));

t.test('runc and spec examples parse', async (t) => {
  const s = parseContainerProcessState(buf(RUNC));
  t.same(s, RUNC);
  t.equal(operationIdFor(s), 'manual1');
  const spec = {
    ociVersion: '1.0.2',
    fds: ['seccompFd'],
    pid: 4422,
    metadata: 'MKNOD=/dev/null,/dev/net/tun;BPF_MAP_TYPES=hash,array',
    state: { ociVersion: '1.0.2', id: 'oci-container1', status: 'creating', pid: 4422, bundle: '/containers/redis', annotations: { myKey: 'myValue' } },
  };
  const s2 = parseContainerProcessState(buf(spec));
  t.same(s2.state.annotations, { myKey: 'myValue' });
  t.equal(operationIdFor(s2), 'oci-oci-container1', 'metadata without op=: named from the container id');
  const noMeta = parseContainerProcessState(buf({ ...RUNC, metadata: undefined, extra: { future: true } }));
  t.equal(noMeta.metadata, undefined);
  t.equal(operationIdFor(noMeta), 'oci-gsm2', 'unknown keys tolerated; default op id');
});

t.test('refusals carry stable codes', async (t) => {
  const cases: [string, unknown, string][] = [
    ['not JSON', '{"ociVersion":', 'E_BAD_JSON'],
    ['an array', [], 'E_SCHEMA'],
    ['no fds', { ...RUNC, fds: [] }, 'E_SCHEMA'],
    ['seccompFd not first', { ...RUNC, fds: ['other', 'seccompFd'] }, 'E_SCHEMA'],
    ['fds not strings', { ...RUNC, fds: [3] }, 'E_SCHEMA'],
    ['pid missing', { ...RUNC, pid: undefined }, 'E_SCHEMA'],
    ['pid zero', { ...RUNC, pid: 0 }, 'E_SCHEMA'],
    ['pid a string', { ...RUNC, pid: '12' }, 'E_SCHEMA'],
    ['pid fractional', { ...RUNC, pid: 1.5 }, 'E_SCHEMA'],
    ['metadata not a string', { ...RUNC, metadata: 7 }, 'E_SCHEMA'],
    ['state missing', { ...RUNC, state: undefined }, 'E_SCHEMA'],
    ['state.id empty', { ...RUNC, state: { ...RUNC.state, id: '' } }, 'E_SCHEMA'],
    ['state.id with a newline', { ...RUNC, state: { ...RUNC.state, id: 'a\nb' } }, 'E_SCHEMA'],
    ['state.status unknown', { ...RUNC, state: { ...RUNC.state, status: 'paused!' } }, 'E_SCHEMA'],
    ['annotations not strings', { ...RUNC, state: { ...RUNC.state, annotations: { a: 1 } } }, 'E_SCHEMA'],
    ['ociVersion NUL', { ...RUNC, ociVersion: 'a\u0000' }, 'E_SCHEMA'],
  ];
  for (const [name, v, code] of cases) t.throws(() => parseContainerProcessState(buf(v)), { code }, name);
  t.throws(() => parseContainerProcessState(Buffer.alloc(STATE_MAX_BYTES + 1, 0x20)), { code: 'E_TOO_LARGE' }, 'oversize');
});

t.test('operation id from metadata', async (t) => {
  t.equal(opFromMetadata('op=build-42'), 'build-42');
  t.equal(opFromMetadata('team=x;op=build-42,other=y'), 'build-42', 'other items ignored');
  t.equal(opFromMetadata('no op here'), null);
  t.equal(opFromMetadata(undefined), null);
  t.throws(() => opFromMetadata('op=../../etc'), { code: 'E_BAD_OP_ID' }, 'traversal refused');
  t.throws(() => opFromMetadata('op='), { code: 'E_BAD_OP_ID' }, 'empty refused');
  t.throws(() => opFromMetadata('op=a;op=b'), { code: 'E_BAD_OP_ID' }, 'two operations refused');
  t.throws(() => opFromMetadata(`op=${'a'.repeat(65)}`), { code: 'E_BAD_OP_ID' }, 'too long refused');
});

t.test('default operation ids are valid and distinct', async (t) => {
  t.equal(defaultOpId('web'), 'oci-web');
  const long = 'c'.repeat(200);
  const odd = 'a+b@c';
  for (const id of [long, odd, `${long}x`]) t.ok(isValidOpId(defaultOpId(id)), `valid for ${id.slice(0, 20)}…`);
  t.not(defaultOpId(long), defaultOpId(`${long}x`), 'a hash keeps truncated ids apart');
  // podman's, containerd's and CRI's ids: 64 hex; the op dir's sockets must still fit in sun_path
  const hex = 'bcacca81e8e5f0e997bf9cc7b7a7e56c41e505355b12a59a182832728e0fbf45';
  t.match(defaultOpId(hex), /^oci-bcacca81e8e5f0e997bf9cc7-[0-9a-f]{8}$/, 'a 64-hex id: its first 24 characters and a hash');
  for (const id of [long, odd, hex]) t.ok(defaultOpId(id).length <= 40, `at most 40 characters for ${id.slice(0, 20)}…`);
});
