// DNS names as the stub compares them: lower case, no trailing dot.
// Names arrive decoded by dns-packet (labels joined with "."); nothing here
// reads wire bytes.

/** The comparison form of a name: lower case, without the trailing dot ("." → ""). */
export function normalizeName(name: string): string {
  const n = name.toLowerCase();
  return n.endsWith('.') ? n.slice(0, -1) : n;
}

// Host names and service labels ("_sip._tcp"); anything else (spaces, UTF-8,
// a "." inside a label that dns-packet joined away, a literal "*" label that a
// policy matcher might take for its own wildcard) is not a name a policy can
// cover, and is refused as malformed before any decision.
const QUERYABLE = /^[a-z0-9_-]+(\.[a-z0-9_-]+)*$/;

/** Whether a normalized name is one the stub will decide on (the root "" is). */
export function isQueryableName(normalized: string): boolean {
  return normalized === '' || (normalized.length <= 253 && QUERYABLE.test(normalized));
}

/**
 * The registered domain of a name, for redacted details: its last two labels
 * ("a.b.example.com" → "example.com"). No public-suffix list is consulted, so
 * "x.example.co.uk" gives "co.uk": the point is to keep the unique left-hand
 * labels (where exfiltrated data would sit) out of records, not to name the
 * registrant exactly. A one-label name is returned whole; the root is "".
 */
export function registeredDomain(name: string): string {
  const labels = normalizeName(name).split('.').filter((l) => l !== '');
  return labels.slice(-2).join('.');
}
