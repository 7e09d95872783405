// Verify a hash-chained JSONL log (format: chain.ts) and an operation's logs.
//
// What each problem means (`line` is always the 1-based physical line in the
// file as it is now):
//   edited     line L's bytes are not what line L+1's prev says (reported at L)
//   removed    seq jumps forward at line L: the lines with the missing seqs
//              were there (reported at L, the position they were removed from)
//   seq_gap    seq missing, not a positive integer, or going backwards
//              (duplicated, reordered or inserted lines)
//   bad_json   a newline-terminated line that is not a JSON object with a
//              64-hex prev
//   torn       the last line has no newline: a crash mid-write nobody recorded
//   torn_recorded  a torn line the appender found on open and recorded with a
//              torn_line record right after it. WARNING, not a failure: nothing
//              was lost or hidden, the chain covers the torn bytes, and the
//              crash that caused it is itself evidence an operator should see.
//   evidence_missing  (verifyOperation) a log that must hold lines is absent
//              or empty, by what the operation's records say happened:
//              - faults.jsonl, when network.json holds a lease (with an
//                expiry: a standing grant is the policy's) or a generation
//                started for one (`lease_added`): every lease gensee
//                installs has a durable line there first
//              - counters.jsonl, when operation.json's totals are not zero:
//                totals are the sums of its lines
//              - events.jsonl, when faults.jsonl records a refusal (a deny
//                not closed as abandoned, a hook fault, a suppressed count):
//                every refusal is a boundary event or a suppressed count
//   unresolved_fault  (pairFaults) a {kind:"fault"} line with no later
//              {kind:"resolution"} for its fault_id. {kind:"refusal"} lines
//              stand alone. A resolution with an `abandoned` field closes a
//              fault a resolver died with (abandon.ts): counted, not a problem.
// ok = no problem of severity 'error'.
//
// Limits, by construction of a chain without an external anchor: an edit to
// the very last line and the removal of lines at the end cannot be seen
// (nothing after them refers to them). `last_hash` is reported so an
// operator can anchor it elsewhere.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { createHash } from 'node:crypto';
import { GenseeError, isErrno } from '../errors';
import { assertNoSymlinks, readLines } from '../state/fsutil';
import { checkOpDir } from '../state/operation';
import { ZERO_HASH } from './chain';

export type ProblemKind = 'edited' | 'removed' | 'torn' | 'unresolved_fault' | 'bad_json' | 'seq_gap' | 'torn_recorded' | 'evidence_missing';
export type Severity = 'error' | 'warning';

export interface VerifyProblem {
  line: number;
  kind: ProblemKind;
  severity: Severity;
  detail: string;
  /** for unresolved_fault */
  fault_id?: string;
}

export interface VerifyOptions {
  /** require every {kind:"fault"} line to have a later {kind:"resolution"} with its fault_id */
  pairFaults?: boolean;
  /**
   * A line number and its SHA-256 as an earlier `gensee verify` printed them
   * (its `last line FILE:LINE:HASH`), kept somewhere the log's writer cannot
   * reach. The
   * chain alone cannot show lines cut off the end of a log; against an
   * anchor, a log that ends before the anchored line, or whose line there
   * is not the anchored one, fails.
   */
  anchor?: Anchor;
}

export interface Anchor {
  /** physical line number, from 1 */
  line: number;
  /** 64 lowercase hex */
  hash: string;
}

export interface VerifyReport {
  ok: boolean;
  path: string;
  /** physical lines, a torn last line included */
  lines: number;
  problems: VerifyProblem[];
  /** SHA-256 of the last line (64 zeros for an empty file): the value to anchor elsewhere */
  last_hash: string;
  /** the anchor checked, when one was given */
  anchor?: Anchor & { ok: boolean };
  /** faults closed as abandoned (a resolver died with them open; src/evidence/abandon.ts) */
  abandoned: number;
  /** refusals recorded (deny resolutions not abandoned, hook faults, suppressed counts): they imply events */
  refusals?: number;
}

export const LOG_FILES = ['faults.jsonl', 'counters.jsonl', 'events.jsonl', 'calls.jsonl'] as const;
export type LogFile = (typeof LOG_FILES)[number];

export interface OperationVerifyReport {
  ok: boolean;
  id: string;
  dir: string;
  /** one report per log file that exists */
  logs: Array<VerifyReport & { file: LogFile }>;
  /** log files that do not exist (not an error: an operation may not have written them yet) */
  missing: LogFile[];
}

const HEX64 = /^[0-9a-f]{64}$/;

function severityOf(kind: ProblemKind): Severity {
  return kind === 'torn_recorded' ? 'warning' : 'error';
}

type Rec = Record<string, unknown>;

function parseLine(b: Buffer): Rec | null {
  try {
    const v = JSON.parse(b.toString('utf8'));
    return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Rec) : null;
  } catch {
    return null;
  }
}

class Verifier {
  readonly problems: VerifyProblem[] = [];
  lines = 0;
  private expectedPrev = ZERO_HASH;
  /** seq of the last line with a valid seq, and its physical line number; lines in between
   *  without one (bad or torn) are assumed to have taken one seq each */
  private lastSeq = 0;
  private lastSeqLine = 0;
  /** the previous line, when it was not a parseable record (may turn out to be a recorded torn line) */
  private heldBad: { line: number; detail: string } | null = null;
  private readonly openFaults = new Map<string, number[]>();
  abandoned = 0;
  refusals = 0;
  /** the hash of the anchored line, once read */
  private anchorSeen: string | null = null;

  constructor(
    private readonly pairFaults: boolean,
    private readonly anchor: Anchor | undefined,
  ) {}

  private add(line: number, kind: ProblemKind, detail: string, faultId?: string): void {
    const p: VerifyProblem = { line, kind, severity: severityOf(kind), detail };
    if (faultId !== undefined) p.fault_id = faultId;
    this.problems.push(p);
  }

  private releaseHeld(): void {
    if (this.heldBad) this.add(this.heldBad.line, 'bad_json', this.heldBad.detail);
    this.heldBad = null;
  }

  line(b: Buffer, terminated: boolean): void {
    const i = ++this.lines;
    const hash = createHash('sha256').update(b).digest('hex');
    if (this.anchor && i === this.anchor.line) this.anchorSeen = hash;
    if (!terminated) {
      this.releaseHeld();
      this.add(i, 'torn', `last line has no newline (${b.length} bytes): a write was cut off and not recorded`);
      this.expectedPrev = hash;
      return;
    }
    const rec = parseLine(b);
    if (rec === null) {
      this.releaseHeld();
      this.heldBad = { line: i, detail: b.length === 0 ? 'empty line' : 'not a JSON object' };
      this.expectedPrev = hash;
      return;
    }

    // a torn_line record explains the line right before it
    if (rec.kind === 'torn_line' && i > 1) {
      const claimed = typeof rec.line === 'number' ? rec.line : NaN;
      this.heldBad = null;
      this.add(i - 1, 'torn_recorded', `torn line (${String(rec.bytes)} bytes) left by a crash, recorded by the appender at line ${i}` +
        (claimed === (typeof rec.seq === 'number' ? rec.seq - 1 : NaN) ? '' : ` (record names line ${String(rec.line)})`));
    } else {
      this.releaseHeld();
    }

    // seq continuity
    const seq = rec.seq;
    let removedHere = false;
    const expectedSeq = this.lastSeq + (i - this.lastSeqLine);
    if (typeof seq !== 'number' || !Number.isSafeInteger(seq) || seq < 1) {
      this.add(i, 'seq_gap', `seq is ${JSON.stringify(seq)}, expected ${expectedSeq}`);
    } else {
      if (seq > expectedSeq) {
        removedHere = true;
        const n = seq - expectedSeq;
        this.add(i, 'removed', n === 1 ? `line with seq ${expectedSeq} is missing before this line (seq ${seq})`
          : `lines with seq ${expectedSeq}..${seq - 1} (${n}) are missing before this line (seq ${seq})`);
      } else if (seq < expectedSeq) {
        this.add(i, 'seq_gap', `seq ${seq} where ${expectedSeq} was expected (duplicated, reordered or inserted line)`);
      }
      this.lastSeq = seq;
      this.lastSeqLine = i;
    }

    // chain
    const prev = rec.prev;
    if (typeof prev !== 'string' || !HEX64.test(prev)) {
      this.add(i, 'bad_json', 'missing or malformed "prev" (expected 64 lowercase hex)');
    } else if (prev !== this.expectedPrev && !removedHere) {
      if (i === 1) this.add(1, 'edited', 'first line\'s prev is not 64 zeros');
      else if (!this.problems.some((p) => p.line === i - 1 && p.kind === 'bad_json')) {
        this.add(i - 1, 'edited', `its SHA-256 is ${this.expectedPrev.slice(0, 16)}…, line ${i}'s prev says ${prev.slice(0, 16)}…`);
      }
    }
    this.expectedPrev = hash;

    if (this.pairFaults) {
      const res = rec.resolution as { action?: unknown } | undefined;
      if ((rec.kind === 'resolution' && res?.action === 'deny' && typeof rec.abandoned !== 'string') || rec.kind === 'suppressed' || (rec.kind === 'fault' && rec.via === 'cgroup_hook')) this.refusals++;
    }
    if (this.pairFaults && typeof rec.fault_id === 'string') {
      // a DNS question the stub answered for a host rule is paired like a fault
      if (rec.kind === 'fault' || rec.kind === 'dns_query') {
        const l = this.openFaults.get(rec.fault_id);
        if (l) l.push(i);
        else this.openFaults.set(rec.fault_id, [i]);
      } else if (rec.kind === 'resolution' || rec.kind === 'dns_answer') {
        if (typeof rec.abandoned === 'string') this.abandoned++;
        const l = this.openFaults.get(rec.fault_id);
        if (l) {
          l.shift();
          if (l.length === 0) this.openFaults.delete(rec.fault_id);
        }
      }
    }
  }

  finish(): { problems: VerifyProblem[]; last_hash: string; anchor?: Anchor & { ok: boolean } } {
    this.releaseHeld();
    let anchor: (Anchor & { ok: boolean }) | undefined;
    if (this.anchor) {
      const a = this.anchor;
      anchor = { ...a, ok: this.anchorSeen === a.hash };
      if (this.anchorSeen === null) {
        this.add(a.line, 'removed', this.lines === 0
          ? `the log is empty, but the anchor names line ${a.line} (${a.hash.slice(0, 16)}…): it was cut off the end`
          : `the log ends at line ${this.lines}, but the anchor names line ${a.line} (${a.hash.slice(0, 16)}…): lines ${this.lines + 1}..${a.line} or more were cut off the end`);
      } else if (this.anchorSeen !== a.hash) {
        this.add(a.line, 'edited', `its SHA-256 is ${this.anchorSeen.slice(0, 16)}…, the anchor says ${a.hash.slice(0, 16)}…: the log was rewritten up to here`);
      }
    }
    for (const [id, lines] of this.openFaults) {
      for (const l of lines) this.add(l, 'unresolved_fault', `fault ${JSON.stringify(id)} has no resolution`, id);
    }
    const problems = this.problems
      .map((p, k) => ({ p, k }))
      .sort((a, b) => a.p.line - b.p.line || a.k - b.k)
      .map((x) => x.p);
    return { problems, last_hash: this.lines === 0 ? ZERO_HASH : this.expectedPrev, ...(anchor ? { anchor } : {}) };
  }
}

/**
 * Verify one chained log. The file is opened with O_NOFOLLOW (symlink →
 * E_SYMLINK, non-regular → E_NOT_FILE) and streamed, so size is not limited by
 * memory. ENOENT passes through.
 */
export async function verifyLog(file: string, opts: VerifyOptions = {}): Promise<VerifyReport> {
  const abs = path.resolve(file);
  const v = new Verifier(opts.pairFaults === true, opts.anchor);
  await readLines(abs, (line, complete) => v.line(line, complete), { chunk: 1 << 20 });
  const { problems, last_hash, anchor } = v.finish();
  return {
    ok: !problems.some((p) => p.severity === 'error'),
    path: abs,
    lines: v.lines,
    problems,
    last_hash,
    ...(anchor ? { anchor } : {}),
    abandoned: v.abandoned,
    ...(opts.pairFaults ? { refusals: v.refusals } : {}),
  };
}

/**
 * An anchor as given on the command line: [FILE:]LINE:HASH, FILE one of
 * LOG_FILES (default faults.jsonl), LINE from 1, HASH the full 64-hex SHA-256
 * that `gensee verify` printed for that line.
 */
export function parseAnchor(spec: string): { file: LogFile; anchor: Anchor } {
  const parts = spec.split(':');
  const file = parts.length === 3 ? parts.shift()! : 'faults.jsonl';
  const bad = (why: string) =>
    new GenseeError('E_BAD_ANCHOR', `bad anchor "${spec.slice(0, 120)}": ${why} (expected [FILE:]LINE:HASH, e.g. faults.jsonl:42:<64 hex>, as \`gensee verify\` prints it)`);
  if (parts.length !== 2) throw bad('wrong number of ":"-separated parts');
  if (!(LOG_FILES as readonly string[]).includes(file)) throw bad(`FILE must be one of ${LOG_FILES.join(', ')}`);
  const [line, hash] = parts;
  if (!/^[1-9][0-9]{0,14}$/.test(line)) throw bad('LINE must be a line number from 1');
  if (!HEX64.test(hash)) throw bad('HASH must be 64 lowercase hex digits');
  return { file: file as LogFile, anchor: { line: Number(line), hash } };
}

/**
 * Verify the logs of one operation that exist: faults.jsonl (with fault /
 * resolution pairing), counters.jsonl, events.jsonl.
 */
export async function verifyOperation(
  stateDir: string,
  id: string,
  anchors: Partial<Record<LogFile, Anchor>> = {},
): Promise<OperationVerifyReport> {
  const dir = checkOpDir(stateDir, id);
  const logs: OperationVerifyReport['logs'] = [];
  const missing: LogFile[] = [];
  for (const file of LOG_FILES) {
    const anchor = anchors[file];
    try {
      const r = await verifyLog(path.join(dir, file), { pairFaults: file === 'faults.jsonl', anchor });
      logs.push({ file, ...r });
    } catch (e) {
      if (!(isErrno(e) && e.code === 'ENOENT')) throw e;
      if (!anchor) {
        missing.push(file);
        continue;
      }
      // an anchored log that is gone has lost every line up to its anchor
      logs.push({
        file,
        ok: false,
        path: path.join(dir, file),
        lines: 0,
        problems: [{ line: anchor.line, kind: 'removed', severity: 'error', detail: `the file is gone, but the anchor names its line ${anchor.line} (${anchor.hash.slice(0, 16)}…)` }],
        last_hash: ZERO_HASH,
        anchor: { ...anchor, ok: false },
        abandoned: 0,
      });
    }
  }
  missingEvidence(dir, logs, missing);
  return { ok: logs.every((l) => l.ok), id, dir, logs, missing };
}

/** a record of the operation's directory as JSON, or null (absent or unreadable: not this check's to judge) */
function readJson(file: string): Record<string, unknown> | null {
  try {
    assertNoSymlinks(file);
    const fd = fs.openSync(file, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW);
    let text: string;
    try {
      text = fs.readFileSync(fd, 'utf8');
    } finally {
      fs.closeSync(fd);
    }
    const v = JSON.parse(text);
    return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

/**
 * The evidence_missing rule (see the top of this file): a log the records
 * say must hold lines, absent or empty, fails the operation. Its report is
 * added (absent) or given the problem (empty).
 */
function missingEvidence(dir: string, logs: OperationVerifyReport['logs'], missing: LogFile[]): void {
  const need = (file: LogFile, why: string) => {
    const have = logs.find((l) => l.file === file);
    if (have && have.lines > 0) return;
    const problem: VerifyProblem = { line: 0, kind: 'evidence_missing', severity: 'error', detail: `${file} is ${have ? 'empty' : 'absent'}, but ${why}` };
    if (have) {
      have.problems.push(problem);
      have.ok = false;
      return;
    }
    const i = missing.indexOf(file);
    if (i >= 0) missing.splice(i, 1);
    logs.push({ file, ok: false, path: path.join(dir, file), lines: 0, problems: [problem], last_hash: ZERO_HASH, abandoned: 0 });
  };
  const net = readJson(path.join(dir, 'network.json'));
  // a standing grant (no expiry) is the policy's, installed without a decision (the DNS stub's at start)
  const leases = Array.isArray(net?.leases) ? net.leases.filter((l) => String((l as { expires_at_boot_ns?: unknown })?.expires_at_boot_ns ?? '0') !== '0').length : 0;
  const added = Array.isArray(net?.generations) ? net.generations.filter((g) => (g as { reason?: unknown })?.reason === 'lease_added').length : 0;
  if (leases || added) need('faults.jsonl', `network.json records ${leases} lease(s) and ${added} generation(s) started for a lease: each is recorded there before it is installed`);
  const totals = readJson(path.join(dir, 'operation.json'))?.totals as { allow?: unknown; deny?: unknown; lost_events?: unknown } | undefined;
  if (totals) {
    const n = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) ? v : 0);
    const deny = typeof totals.deny === 'object' && totals.deny !== null ? Object.values(totals.deny).reduce((s: number, v) => s + n(v), 0) : 0;
    const sum = n(totals.allow) + deny + n(totals.lost_events);
    if (sum > 0) need('counters.jsonl', `operation.json's totals count ${sum} (allow ${n(totals.allow)}, deny ${deny}, lost ${n(totals.lost_events)}): totals are the sums of its lines`);
  }
  const refusals = logs.find((l) => l.file === 'faults.jsonl')?.refusals ?? 0;
  if (refusals > 0) need('events.jsonl', `faults.jsonl records ${refusals} refusal(s): each is a boundary event or a suppressed count there`);
}
