// A stand-in for your local resolver, for the README's tour: an
// authoritative DNS server on loopback (UDP and TCP, one port) that answers
// A/AAAA for the names it is given and NXDOMAIN for any other, with the
// DNS library gensee's stub uses (dns-packet).
//   node examples/names/resolver.js PORT NAME=ADDRESS...
//   node examples/names/resolver.js 5353 api.test=127.0.0.1 api.test=::1
const dgram = require('node:dgram');
const net = require('node:net');
const dnsPacket = require('dns-packet');

const [port, ...pairs] = process.argv.slice(2);
const table = pairs.map((p) => p.split('='));

function answer(raw) {
  const q = dnsPacket.decode(raw);
  const question = (q.questions || [])[0];
  if (!question) return null;
  const name = question.name.toLowerCase();
  const known = table.some(([n]) => n === name);
  const answers = table
    .filter(([n, a]) => n === name && question.type === (net.isIPv6(a) ? 'AAAA' : 'A'))
    .map(([, a]) => ({ type: question.type, name: question.name, ttl: 60, data: a }));
  return dnsPacket.encode({ id: q.id, type: 'response', flags: dnsPacket.AUTHORITATIVE_ANSWER | (known ? 0 : 3), questions: [question], answers });
}

const udp = dgram.createSocket('udp4');
udp.on('message', (raw, from) => {
  try {
    const out = answer(raw);
    if (out) udp.send(out, from.port, from.address);
  } catch {
    // not a DNS query: ignored
  }
});
udp.bind(Number(port), '127.0.0.1');
net
  .createServer((sock) => {
    let buf = Buffer.alloc(0);
    sock.on('error', () => {});
    sock.on('data', (d) => {
      buf = Buffer.concat([buf, d]);
      while (buf.length >= 2 && buf.length >= 2 + buf.readUInt16BE(0)) {
        const msg = buf.subarray(2, 2 + buf.readUInt16BE(0));
        buf = buf.subarray(2 + msg.length);
        try {
          const out = answer(msg);
          if (out) sock.write(Buffer.concat([Buffer.from([out.length >> 8, out.length & 255]), out]));
        } catch {
          sock.destroy();
        }
      }
    });
  })
  .listen(Number(port), '127.0.0.1');
process.stdout.write(`resolver: 127.0.0.1:${port} (udp, tcp): ${pairs.join(' ') || 'no names'}\n`);
