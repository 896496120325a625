/**
 * The bundle directory is self-contained: a copy of it, outside the
 * repository and run from `/` with only the node binary, serves commands
 * (run as another user through its `envd-exec`), pseudo-terminals (its
 * `pty.node`) and files.
 *
 * @module
 */
import assert from 'node:assert/strict';
import { cpSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Sandbox } from 'e2b';
import { ENVD_BUNDLE_DIR, ENVD_VERSION } from '../src/index.js';
import {
  EXTRA_GID,
  IS_ROOT,
  startFixture,
  waitFor,
  type EnvdFixture,
} from './helpers/envd-fixture.js';
import { spawnEnvd, type EnvdProcess } from './helpers/envd-process.js';

const built = existsSync(join(ENVD_BUNDLE_DIR, 'envd.mjs'));

describe(
  'the envd bundle',
  { skip: !built && 'no bundle: run `npm run bundle -w packages/envd`' },
  () => {
    let fx: EnvdFixture;
    let envd: EnvdProcess;
    before(async () => {
      fx = await startFixture();
      const tools = join(fx.dir, 'tools');
      cpSync(ENVD_BUNDLE_DIR, tools, { recursive: true });
      envd = await spawnEnvd(join(tools, 'envd.mjs'), fx.dir, '/');
    });
    after(async () => {
      await envd?.stop();
      await fx?.close();
    });

    it('prints its version', async () => {
      const { execFileSync } = await import('node:child_process');
      assert.equal(
        execFileSync(process.execPath, [join(fx.dir, 'tools', 'envd.mjs'), '--version'], {
          cwd: '/',
        }).toString(),
        `${ENVD_VERSION}\n`,
      );
    });

    it('runs commands, terminals and file operations from the copied bundle', async () => {
      const sbx = await Sandbox.create({ debug: true, sandboxUrl: envd.url });
      const groups = (await sbx.commands.run('id -G')).stdout.trim().split(' ').map(Number);
      if (IS_ROOT)
        assert.ok(
          groups.includes(EXTRA_GID),
          `supplementary groups via envd-exec: ${groups.join(',')}`,
        );
      let output = '';
      const term = await sbx.pty.create({
        cols: 80,
        rows: 24,
        onData: (d) => void (output += Buffer.from(d).toString()),
      });
      await sbx.pty.sendInput(term.pid, new TextEncoder().encode('echo from-pty; exit\n'));
      await term.wait();
      await waitFor(() => output.includes('from-pty'), 2000, 'pty output');
      await sbx.files.write('bundled.txt', 'ok');
      assert.equal(await sbx.files.read('bundled.txt'), 'ok');
    });
  },
);
