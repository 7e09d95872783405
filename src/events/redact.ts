// The detail and target of a boundary event, made safe to write (DESIGN,
// "Boundary events"): `detail` is one line, redacted, at most 300 characters;
// `target` is host:port, [v6]:port or a path with no control characters.
//
// redactDetail, in this order:
//   1. header values: Authorization, Proxy-Authorization, Cookie, Set-Cookie
//      (and a few API-key headers), any case, up to the end of their line
//      -> `Authorization: [redacted]` (done first, while lines still exist);
//   2. every run of whitespace, C0/C1 control, zero-width, bidi-override,
//      variation-selector, tag character or lone surrogate -> one space;
//   3. URLs `scheme://…`: userinfo -> `[redacted]@`, a query -> `?[redacted]`,
//      a fragment -> `#[redacted]` (scheme, host, port and path are kept);
//      a query on a bare path (`/cb?code=…`) -> `?[redacted]` too;
//   4. `Bearer x`, `Basic x`, `Negotiate x` -> `Bearer [redacted]`;
//   5. `key=value`, `key: value`, `"key": "value"` whose key looks secret
//      (password, passwd, pwd, secret, token, api_key, apikey, access_key,
//      auth, session, sig, signature, credential, private_key, cookie, …)
//      -> `key=[redacted]` (a `host:port` is not a key and value);
//   6. long high-entropy-looking runs of the base64/hex alphabet (32 or more
//      characters with either an unbroken letter-or-digit stretch of 32, or a
//      32-character window that keeps switching between lower case, upper
//      case and digits, as keys, hashes and JWTs do) -> `[redacted]`; a long
//      path of words (`/var/lib/gensee/ops/op-20261201-abc123/events`) stays;
//   7. trim, and cut to 300 UTF-16 code units with a trailing `…` counted
//      within the 300, never splitting a surrogate pair.
// Redaction runs on the whole input before the cut, so a secret that starts
// before character 300 is never half-shown by the cut.
//
// Every pattern is linear: no nested quantifiers that can match the same
// text two ways, and each unbounded run is anchored by a lookbehind at the
// start of its run, so a run is scanned once however long it is. Both
// functions are total: they never throw (a failure of the redactor itself
// gives `[redacted]` or an empty target rather than the unredacted input).

/** the longest detail or target, in UTF-16 code units */
export const DETAIL_MAX = 300;

const REDACTED = '[redacted]';
// the first prefix of a long detail that is redacted (see redactDetail)
const PREFIX = 4096;

// C0, DEL, C1, soft hyphen, combining grapheme joiner, Arabic letter mark,
// Hangul fillers, Khmer invisible vowels, Mongolian selectors, zero-width and
// direction marks, line/paragraph separators, bidi embeddings and overrides,
// word joiner, invisible operators and bidi isolates, variation selectors,
// BOM, interlinear annotations, tag characters and the variation selectors
// supplement, and (with the u flag) a lone surrogate; then every whitespace
// character of \s but the plain space
const INVISIBLE =
  '\\u0000-\\u001f\\u007f-\\u009f\\u00ad\\u034f\\u061c\\u115f\\u1160\\u17b4\\u17b5\\u180b-\\u180f' +
  '\\u200b-\\u200f\\u2028-\\u202e\\u2060-\\u206f\\u3164\\ufe00-\\ufe0f\\ufeff\\uffa0\\ufff0-\\ufffb' +
  '\\u{e0000}-\\u{e0fff}\\ud800-\\udfff' +
  '\\u00a0\\u1680\\u2000-\\u200a\\u202f\\u205f\\u3000';
// a run of them and spaces that is not already one plain space
const INVISIBLE_RUN = new RegExp(`(?:[${INVISIBLE}]| [ ${INVISIBLE}])[ ${INVISIBLE}]*`, 'gu');
// for a target: stripped, plain spaces kept
const TARGET_STRIP = new RegExp(`[${INVISIBLE}]+`, 'gu');

// 1. a secret header up to the end of its line
const HEADER =
  /(?<![A-Za-z0-9_-])(proxy-authorization|authorization|set-cookie|cookie|x-api-key|api-key|x-auth-token|x-access-token|x-amz-security-token)[ \t]*:[^\r\n]*/gi;

// 3. scheme://authority path [?query|#fragment]; the scheme starts a run
const URL_RE =
  /(?<![A-Za-z0-9+.-])([A-Za-z][A-Za-z0-9+.-]*:\/\/)([^\s/?#"'<>`]*)([^\s?#"'<>`]*)([?#][^\s"'<>`]*)?/g;
// a query on a bare path: `?` after a non-space, then `name=`
const BARE_QUERY = /(?<=[^\s?])\?(?=[A-Za-z0-9_.%-]*=)[^\s"'<>`]*/g;

// 4. an auth scheme and its credentials
const AUTH_SCHEME = /(?<![A-Za-z0-9_-])(bearer|basic|negotiate)( +)(?!\[redacted\])[^\s,;"'<>`]+/gi;

// 5. key, separator, value (quoted with escapes, or bare)
// (the lookahead, scanned once per run, passes over keys with no hint of a
// secret so that they cost no call of redactKeyValue)
const KEY_VALUE =
  /(?<![A-Za-z0-9_.-])(?=[A-Za-z0-9_.-]*?(?:pass|pwd|secret|token|key|cred|sess|sig|auth|cookie|bearer|jwt|otp|pin))([A-Za-z0-9_.-]+)(["']?[ \t]*[=:][ \t]*)("[^"\\]*(?:\\.[^"\\]*)*"?|'[^'\\]*(?:\\.[^'\\]*)*'?|[^\s&;,"'<>{}()[\]`]+)/gi;

// a key is secret when it contains one of these anywhere (case-insensitive)
const SECRET_SUBSTRINGS =
  /pass(?:word|wd|phrase)|secret|token|api[_.-]?key|access[_.-]?key|private[_.-]?key|credential|session|sessid|signature|authorization|authtoken|cookie|bearer/;
// or has one of these as a whole segment (split at _ . - and camelCase)
const SECRET_SEGMENTS = new Set(['pwd', 'pass', 'auth', 'sig', 'jwt', 'otp', 'pin']);

// 6. a run of the base64/hex alphabet, from its start
const LONG_RUN = /(?<![A-Za-z0-9+/=_-])[A-Za-z0-9+/=_-]{32}[A-Za-z0-9+/=_-]*/g;
const WINDOW = 32;
const WINDOW_SWITCHES = 10;

function secretKey(key: string): boolean {
  const lower = key.toLowerCase();
  if (SECRET_SUBSTRINGS.test(lower)) return true;
  // camelCase boundaries become separators: authKey -> auth_key
  const segs = key.replace(/([a-z0-9])([A-Z])/g, '$1_$2').toLowerCase().split(/[_.-]/);
  return segs.some((s) => SECRET_SEGMENTS.has(s));
}

function redactUrl(_m: string, scheme: string, authority: string, path: string, rest: string | undefined): string {
  const at = authority.lastIndexOf('@');
  const host = at >= 0 ? `${REDACTED}@${authority.slice(at + 1)}` : authority;
  let tail = '';
  if (rest !== undefined) tail = rest.length > 1 ? `${rest[0]}${REDACTED}` : rest;
  return scheme + host + path + tail;
}

function redactKeyValue(m: string, key: string, sep: string, value: string): string {
  if (!secretKey(key)) return m;
  const quote = value[0] === '"' || value[0] === "'" ? value[0] : '';
  // host:port (auth.example.com:8443, session-api:8080/x) is not a secret
  if (sep === ':' && !quote && (key.includes('.') || /^[0-9]{1,5}(?:\/|$)/.test(value))) return m;
  return `${key}${sep}${quote}${REDACTED}${quote}`;
}

// 0 letter-or-digit classes: 1 lower, 2 upper, 3 digit, 0 other
function charClass(c: number): number {
  if (c >= 97 && c <= 122) return 1;
  if (c >= 65 && c <= 90) return 2;
  if (c >= 48 && c <= 57) return 3;
  return 0;
}

/** a run (already 32 or more) that looks like a key, hash or token */
function highEntropy(run: string): boolean {
  // a switch is a letter or digit of another class than the letter or digit
  // before it (other characters are passed over); ring holds the last WINDOW
  let prev = 0;
  let streak = 0;
  let inWindow = 0;
  let ring = 0; // bit i: a switch at position (i mod 32)
  for (let i = 0; i < run.length; i++) {
    const cls = charClass(run.charCodeAt(i));
    const bit = 1 << (i % WINDOW);
    if (ring & bit) inWindow--;
    ring &= ~bit;
    if (cls === 0) {
      streak = 0;
      continue;
    }
    if (++streak >= WINDOW) return true;
    if (prev !== 0 && cls !== prev) {
      ring |= bit;
      if (++inWindow >= WINDOW_SWITCHES) return true;
    }
    prev = cls;
  }
  return false;
}

/** cut to max code units with a trailing `…` within them, never splitting a surrogate pair */
function cap(s: string, max: number): string {
  if (s.length <= max) return s;
  let cut = s.slice(0, max - 1);
  const last = cut.charCodeAt(cut.length - 1);
  if (last >= 0xd800 && last <= 0xdbff) cut = cut.slice(0, -1);
  return `${cut.trimEnd()}…`;
}

/**
 * One line, redacted, at most 300 UTF-16 code units (see the header for
 * what is redacted). Never throws.
 */
export function redactDetail(s: string): string {
  try {
    let t = typeof s === 'string' ? s : String(s);
    t = t.replace(HEADER, (_m, name: string) => `${name}: ${REDACTED}`);
    t = t.replace(INVISIBLE_RUN, ' ').trim();
    // Only the first 300 characters are kept, so the rest of the work is
    // first done on a prefix cut at a space, and on the whole only when the
    // prefix gives 300 characters or fewer. This is safe: after step 2 no match of steps 3-6
    // crosses a space except a quoted value, and a quoted value cut short
    // still matches to the end of the prefix (its closing quote is
    // optional), so the prefix's result is redacted at least as far as the
    // whole's, and everything before the cut is the same.
    const cut = t.length > 2 * PREFIX ? t.indexOf(' ', PREFIX) : -1;
    if (cut > 0 && cut < t.length / 2) {
      const r = redactLine(t.slice(0, cut));
      if (r.length > DETAIL_MAX) return cap(r, DETAIL_MAX);
    }
    return cap(redactLine(t), DETAIL_MAX);
  } catch {
    return REDACTED;
  }
}

/** steps 3 to 6 on one line */
function redactLine(t: string): string {
  t = t.replace(URL_RE, redactUrl);
  t = t.replace(BARE_QUERY, `?${REDACTED}`);
  t = t.replace(AUTH_SCHEME, (_m, scheme: string, sp: string) => `${scheme}${sp}${REDACTED}`);
  t = t.replace(KEY_VALUE, redactKeyValue);
  return t.replace(LONG_RUN, (run) => (highEntropy(run) ? REDACTED : run));
}

/**
 * A target (host:port, [v6]:port or a path): control, invisible and bidi
 * characters and line breaks stripped, a URL's userinfo and query redacted,
 * at most 300 UTF-16 code units. An empty result means "no target" (the
 * schema wants at least one character): leave the field out. Never throws.
 */
export function redactTarget(s: string): string {
  try {
    let t = typeof s === 'string' ? s : String(s);
    t = t.replace(TARGET_STRIP, '');
    t = t.replace(URL_RE, redactUrl);
    return cap(t.trim(), DETAIL_MAX);
  } catch {
    return '';
  }
}
