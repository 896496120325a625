// `aenv pull`, `aenv build -f` and the SDK's `templates.build` against a
// node with real microVMs that pulls from a REAL registry on loopback
// (Debian's docker-registry, basic auth, credentials in the node's docker
// config), into which this suite pushes a busybox-only image it builds
// itself: the templates exist afterwards and sandboxes start from them.
// The CLI's progress lines (layer downloads and conversions, build steps)
// are checked on its stderr.
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { AenvClient } from '@aenv/sdk';
import {
  buildTestImages,
  pushImage,
  registryUnavailable,
  startLocalRegistry,
  type LocalRegistry,
} from '@aenv/server/testing';
import { runAenv } from './helpers/run-aenv.js';
import { startVmNode, type VmNode } from './helpers/vm-node.js';

const skip = registryUnavailable();

describe(
  'aenv pull and build from a local registry (real microVMs)',
  { skip, timeout: 900_000 },
  () => {
    const work = mkdtempSync(join(tmpdir(), 'aenv-cli-pull-'));
    let reg: LocalRegistry;
    let t: VmNode;
    let image = '';
    const aenv = (argv: string[]) => runAenv(argv, t.env, { cwd: work });

    before(async () => {
      const images = buildTestImages(work);
      reg = await startLocalRegistry('basic');
      await pushImage(reg, `oci:${images.layout}:multi`, 'tools/multi:1');
      image = `${reg.host}/tools/multi:1`;
      const dockerConfig = join(work, 'docker.json');
      const auth = Buffer.from(`${reg.user}:${reg.password}`).toString('base64');
      writeFileSync(dockerConfig, JSON.stringify({ auths: { [reg.host]: { auth } } }));
      t = await startVmNode('10.246.0.0/24', {
        AENV_IMAGE_INSECURE_REGISTRIES: reg.host,
        AENV_IMAGE_DOCKER_CONFIG: dockerConfig,
      });
    });

    after(async () => {
      await t?.close();
      await reg?.close();
      rmSync(work, { recursive: true, force: true });
    });

    it('aenv pull makes a template of the image, with per-layer progress', async () => {
      const r = await aenv(['pull', image, '--name', 'multi']);
      assert.equal(r.code, 0, r.stderr);
      const id = r.stdout.trim();
      assert.match(id, /^[a-z0-9]{20}$/);
      // Three layers, each downloaded and converted, reported as it goes.
      assert.match(r.stderr, /layer 1\/3/);
      assert.match(r.stderr, /layer 3\/3 .*done/);
      const ls = await aenv(['template', 'ls', '--output', 'json']);
      const listed = JSON.parse(ls.stdout) as { templateId: string; aliases: string[] }[];
      assert.ok(
        listed.some((x) => x.templateId === id && x.aliases.includes('multi')),
        ls.stdout,
      );
      const started = await aenv(['start', 'multi', '--detach', '--timeout', '5m']);
      assert.equal(started.code, 0, started.stderr);
      assert.equal((await aenv(['rm', started.stdout.trim()])).code, 0);
    });

    it('aenv build -f builds a Dockerfile with COPY from its context, showing its steps', async () => {
      const ctxDir = join(work, 'ctx');
      mkdirSync(ctxDir, { recursive: true });
      writeFileSync(join(ctxDir, 'hello.txt'), 'hello from the context\n');
      const dockerfile = join(work, 'tool.Dockerfile');
      writeFileSync(
        dockerfile,
        `FROM ${image}\nCOPY hello.txt /srv/hello.txt\nRUN grep -q 'from the context' /srv/hello.txt\n`,
      );
      const r = await aenv(['build', '-f', dockerfile, '--name', 'tool', ctxDir]);
      assert.equal(r.code, 0, r.stderr);
      assert.match(r.stdout.trim(), /^[a-z0-9]{20}$/);
      assert.match(r.stderr, /Step 1\/2: COPY hello\.txt/);
      assert.match(r.stderr, /Step 2\/2: RUN grep/);
    });

    it('the SDK builds from a Dockerfile; a failing step is named', async () => {
      const client = new AenvClient({ apiUrl: t.node.url, apiKey: t.node.apiKey, env: {} });
      const logs: string[] = [];
      const built = await client.templates.build(`FROM ${image}\nRUN echo built > /built.txt\n`, {
        name: 'sdk-built',
        onProgress: (e) => logs.push(JSON.stringify(e)),
      });
      assert.ok(built.aliases.includes('sdk-built'));
      assert.ok(
        logs.some((l) => l.includes('cached')),
        `the image's layers are reused: ${logs.join('\n')}`,
      );
      await assert.rejects(
        client.templates.build(`FROM ${image}\nRUN exit 3\n`, { name: 'sdk-broken' }),
        /step 1 \(RUN exit 3\)/,
      );
      assert.equal(t.node.state.templates.find('sdk-broken'), undefined);
    });
  },
);
