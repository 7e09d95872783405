// Real podman (Debian's 4.3, `--runtime runc`) for the OCI listener tests:
// storage, run state and temp files of its own under a temp dir (vfs, so no
// overlay mounts are left), a busybox-static rootfs imported with `podman
// import` (nothing pulled from a registry), a unique cgroup parent, and
// cleanup of all of it even on failure: containers, image, storage, cgroups.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { execFile, execFileSync } from 'node:child_process';
import { uniqueName } from '../helpers/kernel';
import { BUSYBOX, TapT, cgroupMounts, onPath, requireRunc } from './runc-helpers';

/** requireRunc, plus podman; fails (never skips) under GENSEE_REQUIRE_KERNEL=1 */
export function requirePodman(t: TapT): boolean {
  if (!requireRunc(t)) return false;
  if (onPath('podman')) return true;
  if (process.env.GENSEE_REQUIRE_KERNEL === '1') t.fail('podman test cannot run: podman not installed (scripts/setup.sh installs it; GENSEE_REQUIRE_KERNEL=1)');
  else t.plan(0, 'podman test skipped: podman not installed');
  return false;
}

export interface Podman {
  /** podman with this test's storage, run root, cgroup manager and runtime */
  args: string[];
  image: string;
  /** the cgroup every container of this test goes under (relative to each hierarchy's root) */
  cgroupParent: string;
  run(extra: string[], cmd: string[], timeoutMs?: number): Promise<{ code: number | null; out: string }>;
}

/** rmdir a cgroup tree bottom-up in every hierarchy (conmon's and the containers' below the parent) */
async function removeCgroupTree(rel: string): Promise<void> {
  for (const m of cgroupMounts()) {
    const top = path.join(m, rel);
    if (!fs.existsSync(top)) continue;
    const dirs: string[] = [];
    const walk = (d: string) => {
      dirs.push(d);
      for (const e of fs.readdirSync(d, { withFileTypes: true })) if (e.isDirectory()) walk(path.join(d, e.name));
    };
    try {
      walk(top);
    } catch {
      /* raced with removal */
    }
    for (const d of dirs.reverse()) {
      for (let i = 0; i < 50 && fs.existsSync(d); i++) {
        try {
          fs.rmdirSync(d);
        } catch {
          await new Promise((r) => setTimeout(r, 20));
        }
      }
    }
  }
}

/**
 * A podman of this test's own under root, with a busybox-static image
 * imported into it. Everything it creates is removed at teardown.
 */
export function makePodman(t: TapT, root: string): Podman {
  const name = uniqueName('gs-pod');
  const cgroupParent = `/${name}`;
  const store = path.join(root, 'podman');
  const args = [
    '--root', path.join(store, 'storage'),
    '--runroot', path.join(store, 'run'),
    '--tmpdir', path.join(store, 'tmp'),
    '--storage-driver', 'vfs',
    '--cgroup-manager', 'cgroupfs',
    '--events-backend', 'file',
    '--runtime', 'runc',
  ];
  const image = `localhost/${name}:1`;
  t.teardown(async () => {
    // not `system reset`: it also drops the host's network configuration
    for (const cmd of [['rm', '-af', '-t', '0'], ['rmi', '-af']]) {
      try {
        execFileSync('podman', [...args, ...cmd], { stdio: 'ignore', timeout: 60_000 });
      } catch {
        /* nothing to remove */
      }
    }
    await removeCgroupTree(name);
    fs.rmSync(store, { recursive: true, force: true });
  });
  // the rootfs: busybox-static from the Debian package, nothing pulled
  const rootfs = path.join(root, 'rootfs');
  fs.mkdirSync(path.join(rootfs, 'bin'), { recursive: true });
  fs.mkdirSync(path.join(rootfs, 'tmp'));
  fs.copyFileSync(BUSYBOX, path.join(rootfs, 'bin', 'busybox'));
  fs.chmodSync(path.join(rootfs, 'bin', 'busybox'), 0o755);
  for (const a of ['sh', 'nc', 'sleep', 'echo', 'cat', 'test', '[']) fs.symlinkSync('busybox', path.join(rootfs, 'bin', a));
  const tar = path.join(root, 'rootfs.tar');
  execFileSync('tar', ['-C', rootfs, '-cf', tar, '.']);
  execFileSync('podman', [...args, 'import', tar, image], { stdio: 'ignore', timeout: 120_000 });
  return {
    args,
    image,
    cgroupParent,
    run: (extra, cmd, timeoutMs = 60_000) =>
      new Promise((resolve) => {
        // host network: the loopback servers are this test's. The rlimits:
        // podman asks for the maximum nofile/nproc, more than a hard limit
        // below it allows (runc then fails "error setting rlimit")
        const argv = [...args, 'run', '--rm', '--network', 'host', '--cgroup-parent', cgroupParent, '--ulimit', 'nofile=1024:1024', '--ulimit', 'nproc=1024:1024', ...extra, image, ...cmd];
        execFile('podman', argv, { timeout: timeoutMs, killSignal: 'SIGKILL' }, (err, stdout, stderr) => {
          const code = err ? ((err as { code?: number }).code ?? null) : 0;
          resolve({ code: typeof code === 'number' ? code : null, out: stdout + stderr });
        });
      }),
  };
}
