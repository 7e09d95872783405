// packaging/kubernetes/ (issue 30): every object validates against the
// Kubernetes JSON schemas (vendored in k8s-schemas/, strict: an unknown or
// misspelt field is an error, as `kubectl apply --validate=strict` makes
// it), with ajv; and the pieces fit each other and gensee: the socket the
// listener serves is the one the profiles name and the one the host sees,
// the pod's Localhost profile is one the init container writes, the policies
// pass gensee's own checks (no host rules), and the init container's
// `gensee profile` command really produces those profiles.
import t from 'tap';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { spawnSync } from 'node:child_process';
import Ajv from 'ajv';
import { parseAllDocuments } from 'yaml';
import { PACKAGE_ROOT } from '../../src/addon';
import { checkPolicy, parsePolicy } from '../../src/protocol/json';
import { hostRules } from '../../src/protocol/ip';
import { GENSEE_BIN } from '../helpers/kernel';

const DIR = path.join(PACKAGE_ROOT, 'packaging', 'kubernetes');
const SCHEMAS = path.join(PACKAGE_ROOT, 'test', 'packaging', 'k8s-schemas', 'v1.32.2-standalone-strict');
const SCHEMA_OF: Record<string, string> = { 'apps/v1 DaemonSet': 'daemonset-apps-v1.json', 'v1 Pod': 'pod-v1.json', 'v1 ConfigMap': 'configmap-v1.json' };

type Obj = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any -- parsed YAML, checked by the schemas

function load(file: string): Obj[] {
  return parseAllDocuments(fs.readFileSync(path.join(DIR, file), 'utf8')).map((d) => {
    if (d.errors.length) throw new Error(`${file}: ${d.errors.map((e) => e.message).join('; ')}`);
    return d.toJS() as Obj;
  });
}

// the schemas' formats (int32, int-or-string, …) are OpenAPI's, not JSON Schema's; x-kubernetes-* are annotations
const ajv = new Ajv({ strict: false, allErrors: true, validateFormats: false });
const validators = new Map<string, ReturnType<Ajv['compile']>>();
function validate(o: Obj): string[] {
  const key = `${o.apiVersion} ${o.kind}`;
  const file = SCHEMA_OF[key];
  if (!file) return [`no vendored schema for ${key}`];
  if (!validators.has(key)) validators.set(key, ajv.compile(JSON.parse(fs.readFileSync(path.join(SCHEMAS, file), 'utf8')) as object));
  const v = validators.get(key)!;
  return v(o) ? [] : (v.errors ?? []).map((e) => `${e.instancePath || '/'} ${e.message ?? ''} ${JSON.stringify(e.params)}`);
}

const listenerDocs = load('gensee-oci-listener.yaml');
const podDocs = load('example-pod.yaml');
const ds = listenerDocs.find((o) => o.kind === 'DaemonSet')!;
const cm = listenerDocs.find((o) => o.kind === 'ConfigMap')!;
const pod = podDocs.find((o) => o.kind === 'Pod')!;

t.test('every object validates against the vendored Kubernetes schemas', async (t) => {
  t.same(listenerDocs.map((o) => o.kind), ['ConfigMap', 'DaemonSet']);
  t.same(podDocs.map((o) => o.kind), ['Pod']);
  for (const o of [...listenerDocs, ...podDocs]) t.same(validate(o), [], `${o.kind} ${o.metadata.name}: valid`);
  // the check can fail: a misspelt field, a wrong type, a bad enum are errors
  const typo = structuredClone(ds);
  typo.spec.template.spec.hostPid = true;
  t.match(validate(typo).join('\n'), /must NOT have additional properties {"additionalProperty":"hostPid"}/, 'a misspelt field (hostPid) is refused');
  const wrongType = structuredClone(ds);
  wrongType.spec.template.spec.containers[0].securityContext.privileged = 'yes';
  t.match(validate(wrongType).join('\n'), /privileged must be boolean/, 'a wrong type is refused');
  const badPod = structuredClone(pod);
  delete badPod.spec.containers;
  t.match(validate(badPod).join('\n'), /containers/, 'a pod without containers is refused');
});

t.test('the pieces fit: socket, mounts, profiles, policies', async (t) => {
  const spec = ds.spec.template.spec;
  const listener = spec.containers.find((c: Obj) => c.name === 'listener');
  const args: string[] = listener.args;
  const arg = (k: string) => args[args.indexOf(k) + 1];
  t.equal(args[0], 'oci-listener');
  t.equal(spec.hostPID, true, 'hostPID: the state runc sends names host pids');
  t.equal(listener.securityContext.privileged, true, 'privileged: BPF, cgroups, seccomp');
  const vol = (name: string) => spec.volumes.find((v: Obj) => v.name === name);
  const mountOf = (c: Obj, p: string) => c.volumeMounts.find((m: Obj) => m.mountPath === p);
  const hostDirOf = (c: Obj, p: string) => vol(mountOf(c, p)?.name)?.hostPath?.path;
  const sock = arg('--socket');
  t.equal(hostDirOf(listener, path.dirname(sock)), path.dirname(sock), `the socket's dir ${path.dirname(sock)} is the host's, at the same path (runc connects there)`);
  for (const p of ['/sys/fs/cgroup', '/sys/fs/bpf']) t.equal(hostDirOf(listener, p), p, `${p} is the host's`);
  t.equal(mountOf(listener, '/sys/fs/bpf').mountPropagation, 'Bidirectional', 'pins reach the host');
  t.equal(hostDirOf(listener, arg('--state-dir')), arg('--state-dir'), 'the evidence is on the host');
  t.equal(vol(mountOf(listener, arg('--policy-dir')).name).configMap.name, cm.metadata.name, 'policies from the ConfigMap');

  // the init container writes gensee/<policy>.json into the kubelet's seccomp root
  const init = spec.initContainers.find((c: Obj) => c.name === 'install-profiles');
  t.equal(hostDirOf(init, '/host/seccomp'), '/var/lib/kubelet/seccomp', "the kubelet's seccomp root");
  const script: string = init.command[2];
  t.match(script, `--socket ${sock}`, 'profiles name the socket the listener serves');
  const names = Object.keys(cm.data).map((k) => k.replace(/\.json$/, ''));
  t.ok(names.includes(pod.spec.securityContext.seccompProfile.localhostProfile.replace(/^gensee\/|\.json$/g, '')), 'the pod uses a profile the init container writes');
  t.equal(pod.spec.securityContext.seccompProfile.type, 'Localhost');

  // the policies pass gensee's checks, and the listener would accept them (no host rules)
  const polDir = t.testdir(Object.fromEntries(Object.entries(cm.data as Record<string, string>).map(([k, v]) => [k, v])));
  for (const [k, v] of Object.entries(cm.data as Record<string, string>)) {
    t.same(await checkPolicy(JSON.parse(v)), [], `${k}: a valid policy`);
    t.same(hostRules(parsePolicy(JSON.parse(v))), [], `${k}: no host rules (the listener would refuse it)`);
  }
  // and the init container's command makes the profile the pod names
  for (const n of names) {
    const r = spawnSync(process.execPath, [GENSEE_BIN, 'profile', '--socket', sock, '--policy', n, '--policy-dir', polDir], { encoding: 'utf8' });
    t.equal(r.status, 0, `gensee profile --policy ${n}: exit 0 (${r.stderr.trim()})`);
    const p = JSON.parse(r.stdout) as { listenerPath: string; listenerMetadata: string };
    t.match(p, { listenerPath: sock, listenerMetadata: `policy=${n}` }, `${n}: the profile names the socket and the policy`);
  }
});

t.test('the vendored schemas say where they come from', async (t) => {
  const note = fs.readFileSync(path.join(PACKAGE_ROOT, 'test', 'packaging', 'k8s-schemas', 'README.md'), 'utf8');
  t.match(note, /Apache License 2\.0/, 'their licence');
  t.match(note, /v1\.32\.2/, 'their Kubernetes version');
  for (const f of Object.values(SCHEMA_OF)) t.ok(fs.existsSync(path.join(SCHEMAS, f)), `${f} is vendored`);
});
