// Images and templates end to end, with real microVMs: a local registry
// with token auth serves images this test builds (busybox-only with
// whiteouts, musl); sandboxes cold-start from them; the unmodified e2b
// SDK's template builder makes a template with RUN, ENV, WORKDIR, USER,
// COPY and a start command whose HTTP server answers through the proxy in
// every sandbox at once; a failing build names its step and leaves nothing.
//
// The e2b SDK runs every command as `/bin/bash -l -c`, and these images
// have no bash (busybox only, as the issue asks), so commands go to envd's
// Process API directly with `/bin/sh -c`; the SDK still creates, connects,
// writes files and kills.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Sandbox, Template } from 'e2b';
import { ENVD_PORT } from '../src/orchestrator/envd-client.js';
import { runGuestCommand } from '../src/template/envd-rpc.js';
import { startTestNode, type TestNode } from './node-harness.js';
import {
  pushImage,
  registryUnavailable,
  startLocalRegistry,
  type LocalRegistry,
} from '../src/testing/local-registry.js';
import { buildTestImages, muslUnavailable } from '../src/testing/test-images.js';

const skip = registryUnavailable() ?? muslUnavailable();
const ms = (t0: number): number => Math.round(performance.now() - t0);

describe('images and templates on microVMs', { skip, timeout: 900_000 }, () => {
  const work = mkdtempSync(join(tmpdir(), 'aenv-images-vm-'));
  let reg: LocalRegistry;
  let t: TestNode;

  before(async () => {
    const images = buildTestImages(work, { musl: true });
    reg = await startLocalRegistry('token');
    await pushImage(reg, `oci:${images.layout}:multi`, 'test/multi:1');
    await pushImage(reg, `oci:${images.layout}:musl`, 'test/musl:1', { format: 'v2s2' });
    const dockerConfig = join(work, 'docker.json');
    const auth = Buffer.from(`${reg.user}:${reg.password}`).toString('base64');
    writeFileSync(dockerConfig, JSON.stringify({ auths: { [reg.host]: { auth } } }));
    t = await startTestNode({
      AENV_IMAGE_INSECURE_REGISTRIES: reg.host,
      AENV_IMAGE_DOCKER_CONFIG: dockerConfig,
      AENV_IMAGE_DISK_SIZE_MIB: '512',
    });
  });

  after(async () => {
    await t?.close();
    await reg?.close();
    rmSync(work, { recursive: true, force: true });
  });

  function tokenOf(id: string): { accessToken?: string } {
    const token = t.node.orchestrator.find(id)?.envdAccessToken;
    return token === undefined ? {} : { accessToken: token };
  }

  /** Runs `script` with the image's `/bin/sh` through envd; its stdout, trimmed. */
  async function sh(id: string, script: string): Promise<string> {
    const addr = t.node.orchestrator.address(id, ENVD_PORT);
    assert.ok(addr !== undefined, `sandbox ${id} has no address`);
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    const end = await runGuestCommand(
      addr,
      { cmd: '/bin/sh', args: ['-c', script], envs: {}, user: undefined },
      {
        timeoutMs: 60_000,
        onOutput: (s, d) => (s === 'stdout' ? out : err).push(d),
        // sandboxes are secure by default: envd wants the sandbox's token
        ...tokenOf(id),
      },
    );
    assert.equal(end.exitCode, 0, `${script}: ${Buffer.concat(err).toString()}`);
    return Buffer.concat(out).toString().trim();
  }

  async function cold(image: string, extra: Record<string, unknown> = {}): Promise<Sandbox> {
    const res = await fetch(`${t.node.url}/sandboxes-cold`, {
      method: 'POST',
      headers: { 'x-api-key': t.node.apiKey, 'content-type': 'application/json' },
      body: JSON.stringify({ image, timeout: 300, ...extra }),
    });
    const body = (await res.json()) as { sandboxID: string; templateID: string };
    assert.equal(res.status, 201, JSON.stringify(body));
    assert.equal(body.templateID, image);
    return Sandbox.connect(body.sandboxID, { ...t.sdk });
  }

  it('cold-starts a multi-layer image: files, whiteouts, modes, owners, config, disk size', async (ctx) => {
    const t0 = performance.now();
    const sbx = await cold(`${reg.host}/test/multi:1`, {
      cpuCount: 1,
      memoryMB: 384,
      diskSizeMB: 1024,
    });
    ctx.diagnostic(`cold start on a miss (pull, convert, grow, boot): ${ms(t0)} ms`);
    try {
      const run = (cmd: string): Promise<string> => sh(sbx.sandboxId, cmd);
      assert.equal(await run('cat /top.txt /data/keep'), 'multi top\ndata/keep');
      assert.equal(await run('test -e /data/gone && echo present || echo absent'), 'absent');
      assert.equal(await run('ls /opaque'), 'c');
      assert.equal(
        await run('stat -c "%u %g %a" /home/user/owned.txt /added.txt'),
        '1000 1000 640\n1000 1000 600',
      );
      assert.equal(await run('stat -c %a /opt/setuid /tmp'), '4755\n1777');
      assert.equal(await run('pwd; echo "$GREETING"'), '/data\nhello from the image');
      const size = Number(await run("df -m / | awk 'NR==2 {print $2}'"));
      assert.ok(size > 900 && size <= 1024, `rootfs is ${size} MiB`);
      assert.equal(await run('nproc'), '1');
    } finally {
      await sbx.kill();
    }
  });

  it('cold-starts a musl/busybox-only image and runs commands through envd', async (ctx) => {
    const t0 = performance.now();
    const sbx = await cold(`${reg.host}/test/musl:1`);
    ctx.diagnostic(`cold start on a miss (pull, convert, boot): ${ms(t0)} ms`);
    try {
      assert.equal(await sh(sbx.sandboxId, '/usr/bin/hello-musl'), 'hello from musl');
      assert.equal(
        await sh(sbx.sandboxId, 'test -e /usr/lib/libc.so.6 || echo no-glibc'),
        'no-glibc',
      );
      await sbx.files.write('/tmp/x', 'written');
      assert.equal(await sh(sbx.sandboxId, 'cat /tmp/x'), 'written');
    } finally {
      await sbx.kill();
    }
  });

  it('builds a template with the e2b SDK; its server answers through the proxy in every sandbox', async (ctx) => {
    const ctxDir = join(work, 'ctx');
    rmSync(ctxDir, { recursive: true, force: true });
    mkdirSync(ctxDir);
    writeFileSync(join(ctxDir, 'index.html'), '<h1>hello from a template</h1>\n');
    const template = Template({ fileContextPath: ctxDir })
      .fromImage(`${reg.host}/test/multi:1`)
      .runCmd('mkdir -p /srv/www && chown user:user /srv/www')
      .setEnvs({ APP_MODE: 'test' })
      .setWorkdir('/srv/www')
      .copy('index.html', '/srv/www/', { user: 'user' })
      .setUser('user')
      .runCmd('echo "$APP_MODE $(whoami)" > built.txt')
      .setStartCmd('httpd -f -p 8080 -h /srv/www', 'wget -q -O- http://127.0.0.1:8080/index.html');
    const logs: string[] = [];
    const t0 = performance.now();
    const built = await Template.build(template, 'web', {
      ...t.sdk,
      onBuildLogs: (e) => logs.push(e.message),
    });
    ctx.diagnostic(`template build (6 steps, start + ready, snapshot): ${ms(t0)} ms`);
    assert.ok(
      logs.some((l) => /Step 1\/6: RUN mkdir/.test(l)),
      logs.join('\n'),
    );
    const t1 = performance.now();
    const [a, b] = await Promise.all([
      Sandbox.create('web', { ...t.sdk }),
      Sandbox.create(built.templateId, { ...t.sdk }),
    ]);
    ctx.diagnostic(`two sandboxes from the template at once: ${ms(t1)} ms`);
    try {
      for (const sbx of [a, b]) {
        const res = await fetch(`${t.node.url}/index.html`, {
          headers: { 'e2b-sandbox-id': sbx.sandboxId, 'e2b-sandbox-port': '8080' },
        });
        assert.equal(res.status, 200);
        assert.equal(await res.text(), '<h1>hello from a template</h1>\n');
      }
      const out = await sh(
        a.sandboxId,
        'pwd; whoami; echo "$APP_MODE"; cat built.txt; stat -c "%U %a" index.html',
      );
      assert.equal(out, '/srv/www\nuser\ntest\ntest user\nuser 644');
    } finally {
      await Promise.all([a.kill(), b.kill()]);
    }
  });

  it('names the failing step of a build and keeps nothing of it', async () => {
    const snapshots = t.node.state.snapshots.list().length;
    const template = Template()
      .fromImage(`${reg.host}/test/multi:1`)
      .runCmd('echo fine')
      .runCmd('echo about to fail >&2; exit 7');
    await assert.rejects(Template.build(template, 'broken', { ...t.sdk }), (err: unknown) =>
      /step 2 \(RUN echo about to fail.*exited with 7: about to fail/i.test((err as Error).message),
    );
    assert.equal(t.node.state.templates.find('broken'), undefined);
    assert.equal(t.node.state.snapshots.list().length, snapshots);
    // The build machine's directory is gone (prepared restores `pool-*` are the restore pool's).
    const left = readdirSync(join(t.home, 'sandboxes')).filter((d) => !d.startsWith('pool-'));
    assert.deepEqual(left, []);
    const machines = spawnSync('pgrep', ['-af', 'aenv-build-'], { encoding: 'utf8' })
      .stdout.split('\n')
      .filter((l) => l.includes(t.home));
    assert.deepEqual(machines, [], 'no build machine runs on');
  });
});
