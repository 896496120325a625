// Build steps against the REAL envd (the bundle `npm run build` makes),
// run on this host as a STAND-IN for a machine: its `--root` guard keeps
// every file path and working directory under a temporary directory, and
// the steps here only touch that directory. The microVM suite
// (images.vm.test.ts) runs the same steps inside guests.
import assert from 'node:assert/strict';
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';
import { AenvError } from '@aenv/shared';
import { readGuestFile, statGuestPath } from '../../src/template/envd-rpc.js';
import { StepRunner } from '../../src/template/step-runner.js';

const BUNDLE = fileURLToPath(new URL('../../../../envd/bundle/envd.mjs', import.meta.url));
const skip = existsSync(BUNDLE)
  ? process.getuid?.() === 0
    ? undefined
    : 'needs root (envd runs processes as users)'
  : `no envd bundle at ${BUNDLE} (npm run build)`;

function startEnvd(root: string): Promise<{ proc: ChildProcess; port: number }> {
  const proc = spawn(
    process.execPath,
    [BUNDLE, '--port', '0', '--host', '127.0.0.1', '--root', root, '--workdir', root],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  return new Promise((resolve, reject) => {
    let log = '';
    proc.stderr?.on('data', (c: Buffer) => {
      log += c.toString();
      const m = /"msg":"envd listening"[^\n]*"port":(\d+)/.exec(log);
      if (m !== null) resolve({ proc, port: Number(m[1]) });
    });
    proc.once('exit', (code) => reject(new Error(`envd exited (${String(code)}): ${log}`)));
  });
}

describe('build steps through envd', { skip }, () => {
  const root = mkdtempSync(join(tmpdir(), 'aenv-steps-'));
  let envd: { proc: ChildProcess; port: number };
  const logs: string[] = [];
  let runner: StepRunner;

  before(async () => {
    envd = await startEnvd(root);
    // A COPY upload as the e2b SDK makes it: the matched paths, relative, gzipped.
    const ctx = join(root, 'ctx');
    mkdirSync(join(ctx, 'site/sub'), { recursive: true });
    writeFileSync(join(ctx, 'site/index.html'), '<h1>hi</h1>\n');
    writeFileSync(join(ctx, 'site/sub/run.sh'), '#!/bin/sh\necho run\n', { mode: 0o755 });
    execFileSync('tar', ['-C', ctx, '-czf', join(root, 'files.tgz'), 'site']);
    mkdirSync(join(root, 'scratch'));
    runner = new StepRunner(
      {
        envd: { host: '127.0.0.1', port: envd.port },
        node: { cmd: process.execPath, args: [] },
        stepTimeoutMs: 30_000,
        scratchDir: join(root, 'scratch'),
        files: () => Promise.resolve(join(root, 'files.tgz')),
        log: (level, message) => logs.push(`${level} ${message}`),
      },
      { envVars: { FROM_IMAGE: 'yes' }, user: 'root', workdir: root },
    );
  });

  after(async () => {
    envd?.proc.kill('SIGKILL');
    await new Promise((r) => (envd?.proc.exitCode === null ? envd.proc.once('exit', r) : r(null)));
    rmSync(root, { recursive: true, force: true });
  });

  it('runs ENV, ARG, WORKDIR and RUN with the build state', async () => {
    await runner.run({ kind: 'ENV', vars: [['GREETING', 'hi $FROM_IMAGE']] });
    await runner.run({ kind: 'ARG', vars: [['VERSION', '7']] });
    await runner.run({ kind: 'WORKDIR', path: join(root, 'w') });
    await runner.run({ kind: 'RUN', command: 'echo "$GREETING $VERSION $(pwd)" > out.txt' });
    assert.equal(readFileSync(join(root, 'w/out.txt'), 'utf8'), `hi yes 7 ${join(root, 'w')}\n`);
    assert.ok(logs.length >= 0);
    const d = runner.defaults();
    assert.deepEqual(d.envVars, { FROM_IMAGE: 'yes', GREETING: 'hi yes' }, 'ARG is not kept');
    assert.equal(d.workdir, join(root, 'w'));
    assert.equal(d.user, 'root');
  });

  it('streams RUN output to the log and names a failing command', async () => {
    await runner.run({ kind: 'RUN', command: 'echo line-one; echo line-two' });
    assert.ok(
      logs.includes('info [run] line-one') && logs.includes('info [run] line-two'),
      logs.join('\n'),
    );
    await assert.rejects(
      runner.run({ kind: 'RUN', command: 'echo broken >&2; exit 3' }),
      (e: unknown) =>
        e instanceof AenvError &&
        e.code === 'BUILD_STEP_FAILED' &&
        /exited with 3: broken/.test(e.message),
    );
  });

  it('copies uploaded files with their modes, into a directory', async () => {
    const dest = `${join(root, 'app')}/`;
    await runner.run({
      kind: 'COPY',
      src: 'site',
      dest,
      mode: undefined,
      user: undefined,
      source: { kind: 'hash', hash: 'x'.repeat(64) },
    });
    assert.equal(readFileSync(join(root, 'app/index.html'), 'utf8'), '<h1>hi</h1>\n');
    assert.equal(statSync(join(root, 'app/sub/run.sh')).mode & 0o777, 0o755);
    assert.deepEqual(
      execFileSync('ls', ['-A', join(root, 'scratch')]).toString(),
      '',
      'manifest removed',
    );
    await runner.run({
      kind: 'COPY',
      src: 'site/index.html',
      dest: join(root, 'single.html'),
      mode: 0o600,
      user: 'root',
      source: { kind: 'hash', hash: 'x'.repeat(64) },
    });
    assert.equal(statSync(join(root, 'single.html')).mode & 0o777, 0o600);
  });

  it('starts a background process and waits for readiness', async () => {
    const proc = await runner.start('sleep 2');
    assert.ok(proc.pid > 0);
    await runner.waitReady(`test -f ${join(root, 'w/out.txt')}`, 10_000, proc);
    proc.detach();
    await assert.rejects(
      runner.waitReady('false', 1500, undefined),
      (e: unknown) => e instanceof AenvError && e.code === 'BUILD_READY_TIMEOUT',
    );
  });

  it('reads and stats files through envd', async () => {
    const addr = { host: '127.0.0.1', port: envd.port };
    assert.equal(
      (await readGuestFile(addr, join(root, 'w/out.txt')))?.toString().startsWith('hi yes'),
      true,
    );
    assert.equal(await readGuestFile(addr, join(root, 'nope')), undefined);
    assert.equal((await statGuestPath(addr, join(root, 'w')))?.type, 'FILE_TYPE_DIRECTORY');
    assert.equal(await statGuestPath(addr, join(root, 'nope')), undefined);
  });
});
