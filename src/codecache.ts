// A V8 code cache for gensee's own JavaScript (dist/ and node_modules/ of
// this package): every `gensee` command otherwise compiles the same ~100
// files again, and a `gensee run` compiles each function of its fault path
// again before its first fault (bin/gensee installs this first; see
// docs/design.md, "Start-up").
//
// An entry is V8's code cache of one file, written when the process that
// compiled it exits, so it holds the functions that command ran, not only
// the files' top level. Entries are kept per command (run, supervise, ...),
// each primed by its own first run.
//
// Only for root, in a root-owned directory nobody else can write to
// (default /var/cache/gensee/v8/<node version>-<arch>/): an entry is code
// this process runs. An entry is found by the file's path, size, mtime,
// inode and device (as Python's .pyc by timestamp), so a rebuilt or
// upgraded file misses; V8 itself refuses an entry built by another V8 or
// with other flags, or a torn one (then the file is compiled as usual and
// the entry written again). Nothing here may break a command: any failure
// of the cache itself compiles the file the ordinary way. A run that writes
// entries (after a build, the first of each command) removes the old ones
// nobody will find again (prune).
//
// GENSEE_CODE_CACHE=0 turns it off; GENSEE_CODE_CACHE=DIR uses DIR (it
// must pass the same checks); GENSEE_CODE_CACHE_DEBUG=1 prints one line
// of counts on stderr at exit.
import * as crypto from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as vm from 'node:vm';
import { Module } from 'node:module';

export const DEFAULT_CODE_CACHE_BASE = '/var/cache/gensee/v8';

export interface CodeCacheStats {
  dir: string | null;
  /** why there is no cache (dir null) */
  off: string | null;
  hits: number;
  misses: number;
  rejected: number;
  written: number;
  failed: number;
  /** old entries removed (prune) */
  pruned: number;
}

/** the entry's name: the file's identity on disk, never its path alone */
export function entryName(filename: string, st: fs.BigIntStats): string {
  return crypto.createHash('sha256').update(`${filename}\0${st.size}\0${st.mtimeNs}\0${st.ino}\0${st.dev}`).digest('hex');
}

/**
 * Why directory d may not stand in the cache's path (null: it may): it
 * must be a real directory of root's that nobody else can write to. An
 * ancestor of the base may also be sticky (as /tmp: others may add, not
 * rename or remove what is root's). missingOk: a directory not made yet.
 */
function unsafeOne(d: string, o: { above?: boolean; missingOk?: boolean } = {}): string | null {
  let st: fs.Stats;
  try {
    st = fs.lstatSync(d);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    return o.missingOk && code === 'ENOENT' ? null : `${d}: ${code ?? String(e)}`;
  }
  const where = o.above ? ' (above the cache)' : '';
  if (!st.isDirectory()) return `${d}${where} is not a directory`;
  if (st.uid !== 0) return `${d}${where} is owned by uid ${st.uid}, not root`;
  if (st.mode & 0o022 && !(o.above && st.mode & 0o1000)) {
    return `${d}${where} is writable by group or others (mode ${(st.mode & (o.above ? 0o7777 : 0o777)).toString(8)})`;
  }
  return null;
}

/**
 * Why an ancestor of base lets somebody other than root replace base
 * (null: none does): each directory from / down to base's nearest existing
 * parent, as its real path has it (what is missing, mkdir makes root's and
 * 0700), passes unsafeOne.
 */
export function unsafeAncestor(base: string): string | null {
  let from = path.dirname(base);
  while (!fs.existsSync(from) && from !== path.dirname(from)) from = path.dirname(from);
  let real: string;
  try {
    real = fs.realpathSync(from);
  } catch (e) {
    return `${from}: ${(e as NodeJS.ErrnoException).code ?? String(e)}`;
  }
  for (let d = real; ; d = path.dirname(d)) {
    const bad = unsafeOne(d, { above: true });
    if (bad || d === path.dirname(d)) return bad;
  }
}

/** base and each directory below it down to dir (under base), by unsafeOne (no symlink: lstat) */
function unsafeChain(base: string, dir: string, missingOk = false): string | null {
  const rel = path.relative(base, dir);
  let cur = base;
  for (const part of ['', ...(rel ? rel.split(path.sep) : [])]) {
    cur = path.join(cur, part);
    const bad = unsafeOne(cur, { missingOk });
    if (bad) return bad;
  }
  return null;
}

/**
 * Why dir may not hold code for this process (null: it may): its
 * ancestors above base (unsafeAncestor), then base and every directory
 * down to dir (unsafeChain).
 */
export function unsafeDir(base: string, dir: string): string | null {
  const rel = path.relative(base, dir);
  if (rel.startsWith('..') || path.isAbsolute(rel)) return `${dir} is not under ${base}`;
  return unsafeAncestor(base) ?? unsafeChain(base, dir);
}

/** the directory for this command's entries, created if missing (0700), or why not */
export function cacheDir(env: NodeJS.ProcessEnv, profile: string): { dir: string | null; off: string | null } {
  const v = env.GENSEE_CODE_CACHE;
  if (v === '0') return { dir: null, off: 'GENSEE_CODE_CACHE=0' };
  if (typeof process.getuid !== 'function' || process.getuid() !== 0) return { dir: null, off: 'not root' };
  const base = v && v !== '1' ? path.resolve(v) : DEFAULT_CODE_CACHE_BASE;
  const dir = path.join(base, `${process.version}-${process.arch}`, /^[a-z][a-z0-9-]{0,31}$/.test(profile) ? profile : 'cli');
  // nothing is made under a directory somebody else could change: above
  // base, and what of base and below exists already
  const before = unsafeAncestor(base) ?? unsafeChain(base, dir, true);
  if (before) return { dir: null, off: before };
  try {
    fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  } catch (e) {
    return { dir: null, off: `${dir}: ${(e as NodeJS.ErrnoException).code ?? String(e)}` };
  }
  // and what mkdir made (or found made meanwhile)
  const bad = unsafeChain(base, dir);
  return bad ? { dir: null, off: bad } : { dir, off: null };
}

type Compile = (this: Module, content: string, filename: string) => unknown;
interface ModuleInternals {
  _resolveFilename(request: string, parent: Module, isMain: boolean, options?: unknown): string;
  _resolveLookupPaths(request: string, parent: Module): string[] | null;
  _extensions: unknown;
  _cache: unknown;
  wrap(content: string): string;
  prototype: { _compile: Compile };
}

let installed: CodeCacheStats | null = null;

/**
 * Compile the files under root/dist and root/node_modules through the code
 * cache for the rest of this process. Once per process; returns the
 * counts (live: they move as files load and at exit).
 */
export function installCodeCache(root: string, profile: string, env: NodeJS.ProcessEnv = process.env): CodeCacheStats {
  if (installed) return installed;
  const { dir, off } = cacheDir(env, profile);
  const stats: CodeCacheStats = { dir, off, hits: 0, misses: 0, rejected: 0, written: 0, failed: 0, pruned: 0 };
  installed = stats;
  const debug = env.GENSEE_CODE_CACHE_DEBUG === '1';
  const report = (): void => {
    if (debug) process.stderr.write(`gensee: code cache: ${dir ?? `off (${off})`}: ${stats.hits} hits, ${stats.misses} misses, ${stats.rejected} rejected, ${stats.written} written, ${stats.failed} not written, ${stats.pruned} pruned\n`);
  };
  if (!dir) {
    process.on('exit', report);
    return stats;
  }
  const M = Module as unknown as ModuleInternals;
  const ordinary = M.prototype._compile;
  const mine = [path.join(root, 'dist') + path.sep, path.join(root, 'node_modules') + path.sep];
  const toWrite: { entry: string; script: vm.Script }[] = [];
  /** every entry this process found or will write (kept by prune) */
  const used: string[] = [];
  M.prototype._compile = function (this: Module, content: string, filename: string): unknown {
    // eslint-disable-next-line @typescript-eslint/no-this-alias -- the module being compiled, for its require
    const mod = this;
    if (!mine.some((p) => filename.startsWith(p)) || content.startsWith('#!')) return ordinary.call(this, content, filename);
    let script: vm.Script;
    let entry: string;
    let cached: Buffer | undefined;
    try {
      entry = path.join(dir, entryName(filename, fs.statSync(filename, { bigint: true })));
      try {
        cached = fs.readFileSync(entry);
      } catch {
        cached = undefined;
      }
      script = new vm.Script(M.wrap(content), { filename, cachedData: cached });
    } catch {
      // a syntax error (or anything of the cache's own): the ordinary way says it
      return ordinary.call(this, content, filename);
    }
    used.push(entry);
    if (!cached) stats.misses++;
    else if (script.cachedDataRejected) stats.rejected++;
    else stats.hits++;
    if (!cached || script.cachedDataRejected) toWrite.push({ entry, script });
    const fn = script.runInThisContext({ displayErrors: true }) as (...a: unknown[]) => unknown;
    const req = function require(id: string): unknown {
      return mod.require(id);
    } as NodeJS.Require;
    const resolve = ((request: string, options?: unknown) => M._resolveFilename(request, mod, false, options)) as NodeJS.RequireResolve;
    resolve.paths = (request: string) => M._resolveLookupPaths(request, mod);
    req.resolve = resolve;
    req.main = require.main;
    req.extensions = M._extensions as NodeJS.RequireExtensions;
    req.cache = M._cache as NodeJS.Dict<NodeModule>;
    return fn.call(mod.exports, mod.exports, req, mod, filename, path.dirname(filename));
  };
  // written at exit, so an entry holds every function this run compiled
  process.on('exit', () => {
    for (const { entry, script } of toWrite) {
      const tmp = `${entry}.tmp-${process.pid}`;
      try {
        fs.writeFileSync(tmp, script.createCachedData(), { mode: 0o600, flag: 'wx' });
        fs.renameSync(tmp, entry);
        stats.written++;
      } catch {
        stats.failed++;
        try {
          fs.unlinkSync(tmp);
        } catch {
          /* not there */
        }
      }
    }
    if (toWrite.length) stats.pruned = prune(dir, new Set(used));
    report();
  });
  return stats;
}

/** entries older than this are removed when a run writes new ones (unless that run used them) */
export const PRUNE_AGE_MS = 30 * 24 * 3600 * 1000;
/** and no command keeps more than this many (each build of gensee adds ~110 per command) */
export const PRUNE_KEEP = 1000;

/**
 * Remove the entries of dir nobody will find again: a rebuilt or upgraded
 * file is looked up under a new name, so each build leaves its old entries
 * behind. Run by a process that wrote entries (after a build: the first run
 * of each command). Keeps what this process used; of the rest, removes
 * those older than PRUNE_AGE_MS, then the oldest beyond PRUNE_KEEP, and any
 * temporary file of a writer that died (older than a minute). Returns how
 * many it removed.
 */
export function prune(dir: string, keep: ReadonlySet<string>, now = Date.now()): number {
  let names: string[];
  try {
    names = fs.readdirSync(dir);
  } catch {
    return 0;
  }
  const rest: { file: string; mtime: number }[] = [];
  let removed = 0;
  const remove = (file: string): void => {
    try {
      fs.unlinkSync(file);
      removed++;
    } catch {
      /* gone already, or not ours to remove */
    }
  };
  for (const name of names) {
    const file = path.join(dir, name);
    if (keep.has(file)) continue;
    let st: fs.Stats;
    try {
      st = fs.lstatSync(file);
    } catch {
      continue;
    }
    if (!st.isFile()) continue;
    if (name.includes('.tmp-')) {
      if (now - st.mtimeMs > 60_000) remove(file);
      continue;
    }
    if (!/^[0-9a-f]{64}$/.test(name)) continue;
    if (now - st.mtimeMs > PRUNE_AGE_MS) remove(file);
    else rest.push({ file, mtime: st.mtimeMs });
  }
  const over = rest.length + keep.size - PRUNE_KEEP;
  if (over > 0) {
    rest.sort((a, b) => a.mtime - b.mtime);
    for (const r of rest.slice(0, over)) remove(r.file);
  }
  return removed;
}
