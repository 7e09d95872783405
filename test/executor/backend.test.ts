// The executor backend's decision, pure: a tool's write is allowed only where
// a delegate rule naming that tool covers the URL's destination.
import t from 'tap';
import { ExecutorBackend, writeDestination } from '../../src/backends/executor';
import { parsePolicy } from '../../src/protocol/json';
import type { Fault } from '../../src/protocol/types';

const policy = parsePolicy({
  schema: 1,
  grants: [],
  leases: [],
  delegate: [
    { network: { protocol: 'tcp', address: '127.0.0.1', port: 8787 }, to: 'gensee-executor', tool: 'charge' },
    { network: { protocol: 'tcp', cidr: '10.1.0.0/16', ports: '443' }, to: 'gensee-executor', tool: 'charge' },
    { network: { protocol: 'tcp', host: '*.payments.example', port: 443 }, to: 'gensee-executor', tool: 'refund' },
    { network: { protocol: 'tcp', address: '127.0.0.1', port: 9000 }, to: 'egress-proxy' },
  ],
});
const backend = new ExecutorBackend(() => policy);

function write(name: string, target: string, source: Fault['source'] = 'executor', action = 'write'): Fault {
  return {
    schema: 2,
    operation_id: 'op',
    fault_id: 'f',
    subject: { process: { pid: 1, start_time_ticks: 1 } },
    effect: { application: { name, action, target } },
    source,
    observed_at_boot_ns: 0n,
    cgroup_id: 0n,
  };
}

t.test('allowed only under a delegate rule naming the tool', async (t) => {
  const ok = { action: 'continue_already_authorized', reason: 'delegated_to_tool' };
  const no = { action: 'deny', reason: 'policy_denied' };
  t.same(backend.resolve(write('charge', 'http://127.0.0.1:8787/entries')), ok, 'the exact address and port');
  t.same(backend.resolve(write('charge', 'https://10.1.2.3/v1/charges')), ok, 'a cidr rule, https default port 443');
  t.same(backend.resolve(write('refund', 'https://api.payments.example/r')), ok, 'a wildcard host rule');
  t.same(backend.resolve(write('charge', 'http://127.0.0.1:8788/entries')), no, 'another port');
  t.same(backend.resolve(write('charge', 'http://10.2.0.1:443/')), no, 'outside the cidr');
  t.same(backend.resolve(write('refund', 'https://payments.example/r')), no, 'the wildcard does not cover its apex');
  t.same(backend.resolve(write('refund', 'http://127.0.0.1:8787/entries')), no, "another tool's destination");
  t.same(backend.resolve(write('charge', 'https://api.payments.example/r')), no, "a host rule of another tool");
  t.same(backend.resolve(write('proxy-tool', 'http://127.0.0.1:9000/')), no, 'a delegate rule without a tool names no tool');
  t.same(backend.resolve(write('charge', 'ftp://127.0.0.1:8787/')), no, 'not http(s)');
  t.same(backend.resolve(write('charge', 'not a url')), no, 'not a URL');
});

t.test('no backend for other sources or actions', async (t) => {
  const na = { action: 'deny', reason: 'capability_fault_backend_unavailable' };
  t.same(backend.resolve(write('charge', 'http://127.0.0.1:8787/entries', 'manual')), na, 'a manual fault cannot claim executor authority');
  t.same(backend.resolve(write('charge', 'http://127.0.0.1:8787/entries', 'seccomp_notify')), na, 'nor a paused call');
  t.same(backend.resolve(write('charge', 'http://127.0.0.1:8787/entries', 'executor', 'read')), na, 'only writes');
});

t.test('writeDestination', async (t) => {
  t.same(writeDestination('http://[::1]:8080/x'), { family: 'ipv6', address: '::1', port: 8080 });
  t.same(writeDestination('https://api.example/x'), { name: 'api.example', port: 443 });
  t.equal(writeDestination('file:///etc/passwd'), null);
});
