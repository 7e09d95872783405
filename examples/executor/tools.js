// An executor tool module: one tool of each effect class, each writing to
// the example ledger (ledger.js) through its capability handle, its only
// write path. `sent_at` changes on every call: it is marked
// non-deterministic, so no key may name it.
//   gensee executor call --op OP --tools examples/executor/tools.js TOOL --args JSON
const { defineTool } = require('../../dist/src/executor/tool');

const common = {
  ledger: { type: 'string' },
  account: { type: 'string', minLength: 1 },
  amount_cents: { type: 'integer', minimum: 1 },
  sent_at: { type: 'string', 'x-gensee-nondeterministic': true },
};

const post = (handle, a, extra = {}) =>
  handle.write({ method: 'POST', url: `${a.ledger}/entries`, headers: { 'content-type': 'application/json' }, body: JSON.stringify({ ...a, ...extra }) });

// Idempotent: gensee derives the key from account and amount_cents and sets
// it on the write (Idempotency-Key); a retry after a crash is the same write.
const charge = defineTool({
  id: 'charge',
  schema: { type: 'object', properties: common, required: ['ledger', 'account', 'amount_cents', 'sent_at'], additionalProperties: false },
  effect: { kind: 'idempotent', key: { fields: ['account', 'amount_cents'] } },
  run: async (a, handle) => (await post(handle, a)).status,
});

// Queryable: after a crash, gensee asks the ledger whether the request id
// landed. Like every line of this module, the lookup runs inside the
// operation's boundary (never in the executor): it reads the ledger the
// call's recorded arguments name, through the executor (io.get).
const refund = defineTool({
  id: 'refund',
  schema: { type: 'object', properties: { ...common, ref: { type: 'string' } }, required: ['ledger', 'account', 'amount_cents', 'sent_at', 'ref'], additionalProperties: false },
  effect: {
    kind: 'queryable',
    lookup: {
      requestId: (a) => `refund-${a.ref}`,
      lookup: async (id, io, a) => ((await io.get(`${a.ledger}/by-request/${id}`)).status === 200 ? 'found' : 'not_found'),
    },
  },
  run: async (a, handle) => (await post(handle, a)).status,
});

// Unsafe: no key, no lookup; after a crash a person decides.
const note = defineTool({
  id: 'note',
  schema: { type: 'object', properties: common, required: ['ledger', 'account', 'amount_cents', 'sent_at'], additionalProperties: false },
  effect: { kind: 'unsafe' },
  run: async (a, handle) => (await post(handle, a)).status,
});

exports.tools = [charge, refund, note];
