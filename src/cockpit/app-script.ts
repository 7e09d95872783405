// The cockpit's browser script, served as /cockpit/app.js. Plain ES2020, no
// dependencies, no build: it is a string here so the package ships it with
// the compiled code. It reads the token from the page's fragment
// (#token=...: a fragment never leaves the browser), checks it with
// GET /cockpit/whoami (a wrong one is refused with 401 and recorded), then
// opens the live stream with the token as a subprotocol and replays each log
// from its start.
export const APP_JS = String.raw`'use strict';
(() => {
  const $ = (id) => document.getElementById(id);
  const esc = (s) => String(s).replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]);
  const token = new URLSearchParams(location.hash.slice(1)).get('token') || '';
  const state = { faults: 0, allowed: 0, denied: 0, refused: 0, events: 0, suppressed: 0, open: new Map(), leases: new Map(), attention: [], intents: new Map(), perSecond: new Map(), last: '' };

  function status(text, cls) {
    const el = $('status');
    el.textContent = text;
    el.className = cls || '';
  }
  function refusal(text) {
    $('refusal').hidden = false;
    $('refusal').textContent = text;
    $('main').hidden = true;
    status('refused', 'bad');
  }
  function dest(n) {
    if (!n) return '?';
    const a = n.family === 'ipv6' ? '[' + n.address + ']' : n.address;
    return n.protocol + ' ' + a + ':' + n.port;
  }
  function counters() {
    $('c-faults').textContent = state.faults;
    $('c-allowed').textContent = state.allowed;
    $('c-denied').textContent = state.denied;
    $('c-refused').textContent = state.refused;
    $('c-leases').textContent = [...state.leases.values()].filter((l) => l.until === null || l.until > Date.now()).length;
    $('c-events').textContent = state.events + (state.suppressed ? ' (+' + state.suppressed + ' suppressed)' : '');
    $('c-open').textContent = state.open.size;
  }
  function row(table, cells, cls) {
    const tr = document.createElement('tr');
    if (cls) tr.className = cls;
    tr.innerHTML = cells.map((c) => '<td>' + esc(c) + '</td>').join('');
    const body = $(table).tBodies[0];
    body.insertBefore(tr, body.firstChild);
    while (body.rows.length > 200) body.deleteRow(body.rows.length - 1);
    return tr;
  }
  function second(at) {
    return String(at).slice(0, 19);
  }
  function perSecond(at, key, verdict, n) {
    const s = second(at);
    let m = state.perSecond.get(s);
    if (!m) state.perSecond.set(s, (m = new Map()));
    const v = m.get(key) || { allow: 0, deny: 0 };
    v[verdict] += n;
    m.set(key, v);
    chart();
  }
  function chart() {
    const secs = [...state.perSecond.keys()].sort().slice(-60);
    const dests = new Map();
    for (const s of secs) for (const [k, v] of state.perSecond.get(s)) {
      const d = dests.get(k) || { allow: 0, deny: 0 };
      d.allow += v.allow;
      d.deny += v.deny;
      dests.set(k, d);
    }
    const rows = [...dests.entries()].sort((a, b) => b[1].allow + b[1].deny - a[1].allow - a[1].deny).slice(0, 8);
    const html = rows.map(([k]) => {
      const max = Math.max(1, ...secs.map((s) => { const v = state.perSecond.get(s).get(k); return v ? v.allow + v.deny : 0; }));
      const bars = secs.map((s, i) => {
        const v = state.perSecond.get(s).get(k) || { allow: 0, deny: 0 };
        const ha = (v.allow / max) * 24, hd = (v.deny / max) * 24;
        return '<rect class="allow" x="' + i * 5 + '" y="' + (24 - ha - hd) + '" width="4" height="' + ha + '"><title>' + s + ' allow ' + v.allow + '</title></rect>' +
          '<rect class="deny" x="' + i * 5 + '" y="' + (24 - hd) + '" width="4" height="' + hd + '"><title>' + s + ' deny ' + v.deny + '</title></rect>';
      }).join('');
      const d = dests.get(k);
      return '<div class="dest" data-dest="' + esc(k) + '"><span class="dname">' + esc(k) + '</span><svg width="300" height="24">' + bars + '</svg><span class="dcount">allow ' + d.allow + ' · deny ' + d.deny + '</span></div>';
    }).join('');
    $('chart').innerHTML = html || '<p class="quiet">no traffic counted yet</p>';
  }
  function leases() {
    const body = $('leases').tBodies[0];
    body.innerHTML = '';
    const now = Date.now();
    for (const [k, l] of state.leases) {
      const left = l.until === null ? 'never' : l.until <= now ? 'expired' : ((l.until - now) / 1000).toFixed(0) + ' s';
      const tr = document.createElement('tr');
      tr.className = l.until !== null && l.until <= now ? 'expired' : 'live';
      tr.innerHTML = '<td>' + esc(k) + '</td><td>' + esc(l.generation) + '</td><td class="left">' + esc(left) + '</td><td>' + esc(l.uses) + '</td>';
      body.appendChild(tr);
    }
    counters();
  }
  function attention() {
    const b = $('attention');
    if (state.attention.length === 0) { b.hidden = true; return; }
    b.hidden = false;
    b.innerHTML = '<strong>Attention</strong> ' + state.attention.map((a) => esc(a.signature) + ': ' + esc(a.detail) + ' <span class="quiet">evidence: events.jsonl lines ' + esc((a.evidence || []).join(', ')) + (a.refs ? '; ' + esc(a.refs.join(', ')) : '') + '</span>').join('<br>');
  }

  function onFaults(l) {
    if (l.kind === 'fault') {
      state.faults++;
      const n = l.fault && l.fault.effect && l.fault.effect.network;
      state.open.set(l.fault_id, { at: l.at, dest: dest(n), source: l.fault.source, pid: l.fault.subject && l.fault.subject.process ? l.fault.subject.process.pid : '' });
      const tr = row('faults', [l.at.slice(11, 23), l.fault_id, l.fault.source, dest(n), 'waiting', ''], 'open');
      tr.id = 'f-' + l.fault_id;
    } else if (l.kind === 'lease_intent') {
      state.intents.set(l.fault_id, l.lease);
    } else if (l.kind === 'resolution') {
      const r = l.resolution;
      const f = state.open.get(l.fault_id);
      state.open.delete(l.fault_id);
      if (r.action === 'deny') state.denied++;
      const tr = document.getElementById('f-' + l.fault_id);
      const verdict = r.action + ' (' + r.reason + ')';
      const took = f ? (Date.parse(l.at) - Date.parse(f.at)) + ' ms' : '';
      if (tr) {
        tr.cells[4].textContent = verdict;
        tr.cells[5].textContent = took;
        tr.className = r.action === 'deny' ? 'deny' : 'allow';
      } else row('faults', [l.at.slice(11, 23), l.fault_id, '', '', verdict, took], r.action === 'deny' ? 'deny' : 'allow');
      if (r.lease) {
        const intent = state.intents.get(l.fault_id);
        const ttl = intent && intent.ttl_s ? intent.ttl_s : null;
        state.leases.set(dest(r.lease), { generation: r.lease.generation, until: ttl ? Date.parse(l.at) + ttl * 1000 : r.lease.expires_at_boot_ns === '0' ? null : null, uses: r.lease.max_uses ? r.lease.max_uses : 'unlimited' });
        leases();
      }
    } else if (l.kind === 'refusal') {
      state.refused++;
      row('faults', [l.at.slice(11, 23), l.fault_id || '-', l.via || '', '', 'refused (' + l.reason + ')', ''], 'deny');
    }
    counters();
  }
  function onCounters(l) {
    if ((l.kind === 'allow' || l.kind === 'deny') && typeof l.delta === 'number') {
      if (l.kind === 'allow' && l.source !== 'nft') state.allowed += l.delta;
      perSecond(l.at, (l.protocol || '?') + ' ' + (l.family === 'ipv6' ? '[' + l.address + ']' : l.address) + ':' + l.port, l.kind, l.delta);
    }
    if (l.kind === 'lease_expired' || l.kind === 'lease_revoked') {
      const k = dest(l);
      const x = state.leases.get(k);
      if (x) { x.until = Date.parse(l.at); leases(); }
    }
    counters();
  }
  function onEvents(l) {
    if (l.type === 'boundary') {
      state.events++;
      row('events', [l.at.slice(11, 23), l.event.kind, l.event.control || '', l.event.detail || ''], '');
    } else if (l.type === 'suppressed') {
      state.suppressed += l.count || 0;
    } else if (l.type === 'attention') {
      state.attention.push(l);
      attention();
    } else if (l.type === 'attention_cleared') {
      state.attention = [];
      attention();
    }
    counters();
  }

  async function start() {
    if (!token) {
      refusal('No token. Open this page as /cockpit#token=TOKEN, with the operation token (OPERATION_DIR/token).');
      return;
    }
    let who;
    try {
      const r = await fetch('/cockpit/whoami', { headers: { Authorization: 'Bearer ' + token }, cache: 'no-store' });
      if (r.status === 401) {
        refusal('Refused: the server says this is not the operation token (HTTP 401). The refusal is recorded in the operation\'s faults.jsonl. Check OPERATION_DIR/token.');
        return;
      }
      if (!r.ok) { refusal('Refused: HTTP ' + r.status); return; }
      who = await r.json();
    } catch (e) {
      refusal('Cannot reach gensee: ' + e.message);
      return;
    }
    $('op').textContent = who.op;
    $('mode').textContent = who.mode;
    const showVerify = (v) => { $('verify').textContent = 'live: ' + v.verify + (v.checked_at ? ' · checked ' + v.checked_at.slice(11, 19) : ''); };
    showVerify(who);
    // verify follows the evidence: asked again when the stream brought lines, at most every 2 s
    let dirty = false, asking = false;
    setInterval(async () => {
      if (!dirty || asking) return;
      dirty = false; asking = true;
      try {
        const r = await fetch('/cockpit/verify', { headers: { Authorization: 'Bearer ' + token }, cache: 'no-store' });
        if (r.ok) showVerify(await r.json());
      } catch (e) {
        dirty = true;
      } finally {
        asking = false;
      }
    }, 2000);
    const url = (location.protocol === 'https:' ? 'wss://' : 'ws://') + location.host + '/?since=faults:0&since=counters:0&since=events:0';
    const ws = new WebSocket(url, ['gensee.v1', 'bearer.' + token]);
    ws.onopen = () => status('live', 'ok');
    ws.onclose = (e) => status('disconnected (' + e.code + (e.reason ? ': ' + e.reason : '') + ')', 'bad');
    ws.onmessage = (m) => {
      let l;
      try { l = JSON.parse(m.data); } catch { return; }
      state.last = l.at || state.last;
      dirty = true;
      if (l.log === 'faults') onFaults(l);
      else if (l.log === 'counters') onCounters(l);
      else if (l.log === 'events') onEvents(l);
    };
    setInterval(leases, 1000);
  }
  start();
})();
`;
