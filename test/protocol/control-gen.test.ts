// control.proto's generated code: scripts/gen.sh --check notices when the C
// or TypeScript output no longer matches the proto, and the two agree on
// the bytes of a request.
import t from 'tap';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { gensee } from '../../src/gen/control';

const ROOT = process.env.GENSEE_ROOT ?? path.resolve(__dirname, '../../..');

function copyTree(dir: string): void {
  for (const d of ['scripts', 'proto', 'schema', 'src/gen', 'addon/gen']) fs.cpSync(path.join(ROOT, d), path.join(dir, d), { recursive: true });
  fs.symlinkSync(path.join(ROOT, 'node_modules'), path.join(dir, 'node_modules'));
}

t.test('a changed control.proto makes its generated files stale', async (t) => {
  const dir = t.testdir({});
  copyTree(dir);
  const proto = path.join(dir, 'proto/gensee/v2/control.proto');
  fs.writeFileSync(proto, fs.readFileSync(proto, 'utf8').replace('message LeaseRm {\n  LeaseTuple tuple = 1;\n}', 'message LeaseRm {\n  LeaseTuple tuple = 1;\n  string why = 2;\n}'));
  const r = spawnSync(path.join(dir, 'scripts/gen.sh'), ['--check'], { cwd: dir, encoding: 'utf8' });
  t.equal(r.status, 1, 'the check fails');
  for (const f of ['addon/gen/gensee/v2/control.pb-c.c', 'addon/gen/gensee/v2/control.pb-c.h', 'src/gen/control.js', 'src/gen/control.d.ts']) t.match(r.stderr, `stale: ${f}`);
  t.notMatch(r.stderr, 'stale: src/gen/fault.js', 'fault.proto output is untouched');
  t.equal(spawnSync(path.join(dir, 'scripts/gen.sh'), [], { cwd: dir }).status, 0);
  t.equal(spawnSync(path.join(dir, 'scripts/gen.sh'), ['--check'], { cwd: dir }).status, 0, 'regenerating repairs it');
});

t.test('protobuf-c decodes what TypeScript encodes', async (t) => {
  const have = spawnSync('sh', ['-c', 'command -v cc']).status === 0;
  if (!have) return t.fail('no C compiler');
  const { ControlRequest } = gensee.v2;
  const body = ControlRequest.encode({ schema: 2, lease_add: { tuple: { protocol: 'tcp', address: '127.0.0.1', port: 8080 }, ttl_ms: 30000, max_uses: 3 } }).finish();
  const dir = t.testdir({
    'main.c': String.raw`
#include <stdio.h>
#include <stdlib.h>
#include "gensee/v2/control.pb-c.h"
int main(int argc, char **argv) {
	uint8_t buf[4096];
	size_t n = fread(buf, 1, sizeof(buf), stdin);
	Gensee__V2__ControlRequest *r = gensee__v2__control_request__unpack(NULL, n, buf);
	(void)argc; (void)argv;
	if (!r || r->command_case != GENSEE__V2__CONTROL_REQUEST__COMMAND_LEASE_ADD) return 1;
	printf("%u %s %s %u %llu %u\n", r->schema, r->lease_add->tuple->protocol, r->lease_add->tuple->address,
	       r->lease_add->tuple->port, (unsigned long long)r->lease_add->ttl_ms, r->lease_add->max_uses);
	gensee__v2__control_request__free_unpacked(r, NULL);
	return 0;
}
`,
  });
  const exe = path.join(dir, 'main');
  const cc = spawnSync('cc', ['-Wall', '-Wextra', '-Werror', '-I', path.join(ROOT, 'addon/gen'), '-o', exe, path.join(dir, 'main.c'), path.join(ROOT, 'addon/gen/gensee/v2/control.pb-c.c'), '-lprotobuf-c'], { encoding: 'utf8' });
  t.equal(cc.status, 0, cc.stderr);
  const run = spawnSync(exe, [], { input: Buffer.from(body), encoding: 'utf8' });
  t.equal(run.stdout.trim(), '2 tcp 127.0.0.1 8080 30000 3');
});
