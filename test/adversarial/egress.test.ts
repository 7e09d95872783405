// Egress around the hooks: raw and packet sockets, unconnected and
// connected UDP, other names for the same listener, TCP fast open, a racing
// rewrite of the sockaddr, and descriptors inherited from outside.
import t from 'tap';
import { attackTest } from './lib';

attackTest(t, 'raw', 'raw IP and AF_PACKET sockets cannot carry a hand-made datagram');

attackTest(t, 'udp', 'sendto/sendmsg/sendmmsg/io_uring and connected UDP reach no denied port');

attackTest(t, 'alias', '0.0.0.0, v4-mapped, odd sockaddrs and fast open reach no denied port');

attackTest(t, 'toctou', 'rewriting the sockaddr during a connect never lands on the denied port', {
  args: () => ['--repeat', '300'],
  check: (t, env, _r, rep) => {
    const ok = Number(rep?.info.ok ?? -1);
    t.ok(ok > 0, `connects to the allowed port went through (${ok}): the race ran`);
    t.equal(env.allowed.conns, ok, 'every connect that worked is one the allowed listener counted');
  },
});

attackTest(t, 'fds', 'the workload inherits nothing but stdio', {
  check: (t, _env, _r, rep) => t.equal(rep?.info.count, 3, 'exactly fds 0, 1, 2'),
});
