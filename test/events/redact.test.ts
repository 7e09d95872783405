// The detail and target of a boundary event on hostile input: secrets gone,
// one line, no control or invisible characters, at most 300 characters.
import t, { Test } from 'tap';
import { redactDetail, redactTarget, DETAIL_MAX } from '../../src/events/redact';

// C0, DEL, C1, line breaks and every invisible or bidi character the redactor removes
const FORBIDDEN =
  /[\u0000-\u001f\u007f-\u009f\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180b-\u180f\u200b-\u200f\u2028-\u202e\u2060-\u206f\u3164\ufe00-\ufe0f\ufeff\uffa0\ufff0-\ufffb\u{e0000}-\u{e0fff}\ud800-\udfff]/u;

/** the properties every redacted detail has, and none of the secrets */
function safe(t: Test, input: string, secrets: string[], label: string): string {
  const out = redactDetail(input);
  t.ok(out.length <= DETAIL_MAX, `${label}: at most 300 (${out.length})`);
  t.notMatch(out, FORBIDDEN, `${label}: no control, invisible or lone-surrogate character`);
  t.equal(out, out.trim(), `${label}: trimmed`);
  t.notMatch(out, / {2}/, `${label}: no run of spaces`);
  for (const s of secrets) t.notOk(out.includes(s), `${label}: ${JSON.stringify(s)} is gone`);
  return out;
}

t.test('URLs: query and fragment, userinfo', async (t) => {
  let out = safe(t, 'callback https://x.test/cb?access_token=abc123&x=1 failed', ['abc123', 'access_token', 'x=1'], 'token in query');
  t.equal(out, 'callback https://x.test/cb?[redacted] failed', 'scheme, host and path kept');
  out = safe(t, 'GET https://user:hunter2@api.x.test:8443/v1/items#frag-secret', ['user', 'hunter2', 'frag-secret'], 'userinfo');
  t.equal(out, 'GET https://[redacted]@api.x.test:8443/v1/items#[redacted]', 'host:port and path kept');
  out = safe(t, 'proxy http://alice@10.0.0.1:3128/ ok', ['alice'], 'user without password');
  t.equal(out, 'proxy http://[redacted]@10.0.0.1:3128/ ok');
  out = safe(t, '"url":"wss://h.test/s?sig=AbC&exp=1"', ['AbC', 'exp=1'], 'quoted URL');
  t.equal(out, '"url":"wss://h.test/s?[redacted]"');
  out = safe(t, 'GET /oauth/cb?code=q1w2e3&state=zz HTTP/1.1', ['q1w2e3', 'zz'], 'query on a bare path');
  t.equal(out, 'GET /oauth/cb?[redacted] HTTP/1.1');
  t.equal(redactDetail('connect to https://example.test:443/path/to/thing'), 'connect to https://example.test:443/path/to/thing', 'a plain URL is left alone');
  t.equal(redactDetail('why? because=no'), 'why? because=no', 'a question mark after a space is not a query');
});

t.test('headers, any case, to the end of their line', async (t) => {
  const jwt = 'eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c';
  let out = safe(t, `Authorization: Bearer ${jwt}\r\nHost: api.x.test`, [jwt, 'eyJ', 'SflKx', 'Bearer e'], 'Authorization Bearer');
  t.equal(out, 'Authorization: [redacted] Host: api.x.test', 'the next line is kept');
  out = safe(t, 'authorization: Basic dXNlcjpodW50ZXIy', ['dXNlcjpodW50ZXIy'], 'authorization Basic');
  t.equal(out, 'authorization: [redacted]');
  out = safe(t, 'PROXY-AUTHORIZATION:Negotiate YIIabc', ['YIIabc', 'Negotiate'], 'Proxy-Authorization');
  t.equal(out, 'PROXY-AUTHORIZATION: [redacted]');
  out = safe(t, 'Cookie: a=b; c=d', ['a=b', 'c=d'], 'Cookie');
  t.equal(out, 'Cookie: [redacted]');
  out = safe(t, 'set-cookie: sid=31d4d96e407aad42; Path=/; HttpOnly\nnext', ['31d4d96e407aad42', 'HttpOnly'], 'Set-Cookie');
  t.equal(out, 'set-cookie: [redacted] next');
  safe(t, 'X-Api-Key: k-998877', ['998877'], 'X-Api-Key');
});

t.test('bearer and basic tokens outside a header', async (t) => {
  t.equal(safe(t, 'sent Bearer abc.def-ghi to upstream', ['abc.def-ghi'], 'bearer'), 'sent Bearer [redacted] to upstream');
  t.equal(safe(t, 'used BASIC dXNlcjpwYXNz, refused', ['dXNlcjpwYXNz'], 'basic'), 'used BASIC [redacted], refused');
});

t.test('key=secret pairs, plain and JSON-ish', async (t) => {
  t.equal(safe(t, 'login password=hunter2 user=bob', ['hunter2'], 'password='), 'login password=[redacted] user=bob');
  t.equal(
    safe(t, '{"api_key": "sk-live-51Hx", "name":"ok"}', ['sk-live', '51Hx'], 'JSON api_key'),
    '{"api_key": "[redacted]", "name":"ok"}',
  );
  t.equal(safe(t, `{'Password':'a\\'b c'}`, ['a\\', 'b c'], 'single-quoted with an escape'), `{'Password':'[redacted]'}`);
  t.equal(safe(t, '"secret":"x\\"y z"', ['x\\', 'y z'], 'escaped quote'), '"secret":"[redacted]"');
  t.equal(safe(t, 'token: tkn-1 ok', ['tkn-1'], 'key: value'), 'token: [redacted] ok');
  t.equal(safe(t, 'PASSWD = p4ss', ['p4ss'], 'spaces around ='), 'PASSWD = [redacted]');
  const pairs: [string, string][] = [
    ['pwd', 'pw0'],
    ['db_secret', 'sec1'],
    ['refresh_token', 'rt2'],
    ['apikey', 'ak3'],
    ['x-api-key', 'ak4'],
    ['AWS_ACCESS_KEY_ID', 'ak5'],
    ['auth', 'au6'],
    ['X-Auth', 'au7'],
    ['authKey', 'au8'],
    ['sessionId', 'se9'],
    ['JSESSIONID', 'se10'],
    ['sig', 'sg11'],
    ['X-Amz-Signature', 'sg12'],
    ['credentials', 'cr13'],
    ['private_key', 'pk14'],
    ['clientSecret', 'cs15'],
  ];
  for (const [k, v] of pairs) {
    t.equal(safe(t, `a ${k}=${v}&b=1`, [v], k), `a ${k}=[redacted]&b=1`, `${k} is a secret key`);
  }
  for (const plain of ['user=bob', 'author=alice', 'signal=9', 'port=443', 'kind=egress_denied']) {
    t.equal(redactDetail(plain), plain, `${plain} is left alone`);
  }
  t.equal(
    redactDetail('tcp connect to auth.example.com:443 and session-api:8080/x without a lease'),
    'tcp connect to auth.example.com:443 and session-api:8080/x without a lease',
    'host:port is not key: value',
  );
  t.equal(redactDetail('password='), 'password=', 'an empty value leaves nothing to hide');
});

t.test('long high-entropy runs', async (t) => {
  const hex = '3f2a9c1e4b7d5a6f8e9d0c1b2a3f4e5d6c7b8a9f';
  t.equal(safe(t, `digest ${hex} mismatch`, [hex, '3f2a9c1e'], 'hex'), 'digest [redacted] mismatch');
  const b64 = 'q9Zt/4XvLm2Rk8Pw+Yh3Ns7Bc1Df6Gj0Ua5Ei2Ko9Lw=';
  t.equal(safe(t, `key ${b64}`, [b64, 'q9Zt', 'Ua5Ei'], 'base64 with / and +'), 'key [redacted]');
  const sk = 'sk_live_4eC39HqLyjWDarjtT1zdp7dc';
  t.equal(safe(t, `charge with ${sk}.`, [sk, '4eC39'], 'API key'), 'charge with [redacted].');
  t.equal(safe(t, `id ${'7'.repeat(40)}`, ['7777777777'], 'long number'), 'id [redacted]');
  for (const keep of [
    'write to /var/lib/gensee/ops/op-20261201-abc123/events refused',
    'open /usr/share/doc/some-package-name/changelog.Debian.gz',
    'control ebpf/connect4 decided resolver/policy_denied',
  ]) {
    t.equal(redactDetail(keep), keep, `kept: ${keep}`);
  }
});

t.test('newlines, control and invisible characters become one space', async (t) => {
  t.equal(safe(t, 'a\nb\r\nc\td', [], 'line breaks'), 'a b c d');
  t.equal(safe(t, '\u0000nul\u0000\u0007bell', [], 'NUL and BEL'), 'nul bell');
  t.equal(safe(t, '\u001b[31mred\u001b[0m text\u001b]0;title\u0007', ['\u001b'], 'ANSI escapes'), '[31mred [0m text ]0;title');
  t.equal(safe(t, 'file\u202egnp.exe', ['\u202e'], 'right-to-left override'), 'file gnp.exe');
  t.equal(safe(t, 'a\u200b\u200d\u2066b\u2069\ufeffc', [], 'zero-width and isolates'), 'a b c');
  t.equal(safe(t, 'a\u0085b\u009bc\u2028d\u2029e', [], 'C1 and Unicode line breaks'), 'a b c d e');
  t.equal(safe(t, 'x\u{e0041}\u{e0042}y', [], 'tag characters'), 'x y');
  t.equal(safe(t, 'lone \ud800 high and \udc00 low', [], 'lone surrogates'), 'lone high and low');
  t.equal(safe(t, '   \n\t  padded \u00a0\u3000 ', [], 'trimmed'), 'padded');
  t.equal(redactDetail('ok 😀 emoji'), 'ok 😀 emoji', 'a pair is not a lone surrogate');
  safe(t, 'pass\nword=x\nAuthorization: Bearer zzz\n\u0000password=hunter2\u0000', ['hunter2', 'zzz'], 'mixed');
});

t.test('the 300 cut', async (t) => {
  t.equal(redactDetail(''), '', 'empty');
  t.equal(redactDetail('word '.repeat(60).trim()), 'word '.repeat(60).trim(), '299 characters stay whole');
  const long = 'abc '.repeat(200);
  const out = safe(t, long, [], 'long');
  t.equal(out.length, DETAIL_MAX, 'exactly 300');
  t.ok(out.endsWith('…'), 'the … is within the 300');
  for (let pad = 290; pad <= 300; pad++) {
    const s = 'a b '.repeat(100).slice(0, pad) + '😀😀😀😀😀😀 tail';
    const o = safe(t, s, [], `emoji at ${pad}`);
    t.ok(o.length <= DETAIL_MAX);
    for (let i = 0; i < o.length; i++) {
      const c = o.charCodeAt(i);
      if (c >= 0xd800 && c <= 0xdbff) t.ok(o.charCodeAt(i + 1) >= 0xdc00 && o.charCodeAt(i + 1) <= 0xdfff, `pair at ${i} whole`);
    }
  }
  const secretLate = `${'x '.repeat(140)}password=${'s'.repeat(50)}`;
  t.notOk(redactDetail(secretLate).includes('sss'), 'a secret across the cut is redacted before the cut');
});

t.test('big hostile strings', async (t) => {
  const unit10 = 'Authorization: Bearer tok1\n' + 'GET https://u:p4ss@x.test/a?access_token=abc123 \u0000\u202e password=hunter2 ';
  const tenK = unit10.repeat(120).slice(0, 10_240);
  t.equal(tenK.length, 10_240);
  // from every token, so that each secret is at the start of some output
  for (let i = 0; i < unit10.length; i++) {
    if (i > 0 && !/[\s\u0000\u202e]/.test(unit10[i - 1])) continue;
    if (unit10.startsWith('tok1', i)) continue; // a bare token with nothing before it is not recognisable
    safe(t, tenK.slice(i), ['tok1', 'p4ss', 'abc123', 'hunter2', 'access_token', 'ss@', 'unter2', 'ok1'], `10 KB from ${i}`);
  }

  const mb = 1 << 20;
  const unit = '"api_key":"sk-live-abc" Cookie: a=b\r\nx https://h.test/?sig=zz9 ';
  safe(t, unit.repeat(Math.ceil(mb / unit.length)), ['sk-live', 'a=b', 'zz9'], '1 MB of secrets');
  for (const [label, s] of [
    ['1 MB of one letter', 'a'.repeat(mb)],
    ['1 MB of key=', 'password='.repeat(mb / 8)],
    ['1 MB of unclosed quotes', 'password:"'.repeat(mb / 10)],
    ['1 MB key run with no =', `${'k'.repeat(mb)} =`],
    ['1 MB of schemes', 'a://'.repeat(mb / 4)],
    ['1 MB of ?', 'a?'.repeat(mb / 2)],
    ['1 MB of controls', '\u0000\u202e\u200b\ud800'.repeat(mb / 4)],
    ['1 MB of emoji', '😀'.repeat(mb / 2)],
    ['1 MB of spaces then a secret', `${' '.repeat(mb)}password=hunter2`],
  ] as const) {
    const out = safe(t, s, ['hunter2'], label);
    t.type(out, 'string');
  }
  // a secret in a long detail, after the first 4096 characters and across
  // the prefix the redactor tries first
  const words = 'w '.repeat(2100);
  safe(t, `${words}password="hunter2 ${'y '.repeat(3000)}"`, ['hunter2'], 'quoted secret across the prefix');
});

t.test('total: never throws', async (t) => {
  const odd: unknown[] = [undefined, null, 42, {}, { toString: () => { throw new Error('x'); } }, Symbol('s')];
  for (const v of odd) {
    t.doesNotThrow(() => redactDetail(v as unknown as string), String(typeof v));
    t.doesNotThrow(() => redactTarget(v as unknown as string), String(typeof v));
  }
  t.equal(redactDetail({ toString: () => { throw new Error('x'); } } as unknown as string), '[redacted]', 'a failure redacts everything');
});

t.test('redactTarget', async (t) => {
  t.equal(redactTarget('127.0.0.1:9'), '127.0.0.1:9');
  t.equal(redactTarget('[2001:db8::1]:443'), '[2001:db8::1]:443');
  t.equal(redactTarget('/home/u/my file.txt'), '/home/u/my file.txt', 'a plain space in a path is kept');
  t.equal(redactTarget('/tmp/a\nb\u0000c\u202ed\u200be'), '/tmp/abcde', 'control and invisible characters stripped');
  t.equal(redactTarget('https://u:p@h.test:8443/x?token=1'), 'https://[redacted]@h.test:8443/x?[redacted]', 'a URL target is redacted');
  t.equal(redactTarget('\n\t'), '', 'nothing left: no target');
  const long = redactTarget(`/${'d/'.repeat(200)}😀`);
  t.ok(long.length <= DETAIL_MAX && long.endsWith('…'), 'capped at 300');
  const pair = redactTarget(`/${'a'.repeat(297)}😀😀`);
  t.equal(pair.length, 299, 'the cut does not split a pair');
  t.notMatch(pair, /[\ud800-\udfff]/u, 'no lone surrogate');
});
