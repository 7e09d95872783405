// The evidence, the key and host files are not the workload's; neither are
// gensee's sockets, from the workload itself, a nested user namespace or a
// child that tried to leave the cgroup.
import t from 'tap';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { createHash } from 'node:crypto';
import { GENSEE_BIN } from '../helpers/kernel';
import { attackTest, decodeReply, Env } from './lib';

const victims = new Map<string, { dir: string; file: string; text: string }>();

/** a root-owned 0644 file in a 0755 dir, made before the run */
function victim(env: Env) {
  const dir = fs.mkdtempSync('/tmp/gs-adv-victim-');
  fs.chmodSync(dir, 0o755);
  const file = path.join(dir, 'root-owned');
  const text = `owned by root, ${env.op}\n`;
  fs.writeFileSync(file, text, { mode: 0o644 });
  fs.chmodSync(file, 0o644);
  victims.set(env.op, { dir, file, text });
  return { dir, file, text };
}

const sha = (p: string) => createHash('sha256').update(fs.readFileSync(p)).digest('hex');
const snapshots = new Map<string, Record<string, string>>();

attackTest(t, 'evidence', 'the key, the logs, operation.json and root-owned host files are out of reach', {
  args: (env) => {
    const v = victim(env);
    t.teardown(() => fs.rmSync(v.dir, { recursive: true, force: true }));
    snapshots.set(env.op, { bin: sha(GENSEE_BIN) });
    return ['--victim', v.file, '--victim-bin', GENSEE_BIN];
  },
  check: (t, env) => {
    const v = victims.get(env.op)!;
    t.equal(fs.readFileSync(v.file, 'utf8'), v.text, 'the root-owned file is unchanged');
    t.equal(fs.statSync(v.file).mode & 0o7777, 0o644, 'and so is its mode');
    t.same(fs.readdirSync(v.dir), ['root-owned'], 'no file was created beside it');
    t.equal(sha(GENSEE_BIN), snapshots.get(env.op)!.bin, 'bin/gensee is unchanged');
    t.notOk(fs.readdirSync(env.opDir).some((f) => f.startsWith('adv-created')), 'nothing was created in the state dir');
  },
});

attackTest(t, 'sockets', 'supervisor.sock and control.sock refuse the workload, a nested user namespace and an escapee', {
  check: (t, _env, _r, rep) => {
    for (const [k, v] of Object.entries(rep?.info ?? {})) {
      if (!k.endsWith('supervisor_reply')) continue;
      const d = decodeReply(String(v));
      // no answer at all (not reachable, or closed on) is a refusal too
      if (d === null) t.pass(`${k}: no answer`);
      else t.same(d, { action: 'deny', reason: 'unauthenticated_peer' }, `${k}: the peer was refused before its frame was read`);
    }
  },
});
