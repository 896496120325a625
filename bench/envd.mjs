#!/usr/bin/env node
/**
 * envd on the host, beside baselines measured in the same run:
 *
 * - idle Rss of the envd bundle process (after start, and after serving
 *   commands, then idling) vs. a bare node HTTP server;
 * - latency of `commands.run('true')` through the real e2b SDK on loopback
 *   vs. spawning the same `/bin/bash -l -c true` directly.
 *
 * envd runs from packages/envd/bundle (`npm run build` makes it) in a
 * temporary world (its own passwd with an unprivileged `user` when run as
 * root), removed afterwards.
 *
 *   node bench/envd.mjs [--quick] [--iterations 200]
 *
 * @module
 */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { chmod, chown, mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { Sandbox } from 'e2b';
import { runBench } from './lib/bench-main.mjs';

const bundle = new URL('../packages/envd/bundle/envd.mjs', import.meta.url).pathname;
const isRoot = process.getuid?.() === 0;
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function rssMiB(pid) {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? NaN) / 1024;
}

/** A root directory with passwd/group and a home for `user`. */
async function world(dir) {
  await chmod(dir, 0o755);
  const home = join(dir, 'home/user');
  await mkdir(home, { recursive: true });
  const uid = isRoot ? 4242 : process.getuid();
  const gid = isRoot ? 4242 : process.getgid();
  if (isRoot) await chown(home, uid, gid);
  await writeFile(
    join(dir, 'passwd'),
    `root:x:0:0:root:${dir}:/bin/bash\nuser:x:${uid}:${gid}::${home}:/bin/bash\n`,
  );
  await writeFile(join(dir, 'group'), `root:x:0:\nuser:x:${gid}:\n`);
  return { dir, home, uid, gid };
}

/** Starts a node child that logs `{"port": N}` on stderr; registered for cleanup. */
async function startChild(ctx, args) {
  const child = spawn(process.execPath, args, { cwd: '/', stdio: ['ignore', 'ignore', 'pipe'] });
  ctx.cleanup.add('stop child', () => child.kill('SIGTERM'));
  const port = await new Promise((resolve, reject) => {
    createInterface({ input: child.stderr }).on('line', (line) => {
      try {
        const j = JSON.parse(line);
        if (j.port) resolve(j.port);
      } catch {
        // not a JSON log line
      }
    });
    child.once('exit', (code) => reject(new Error(`exited ${code}`)));
  });
  return { child, url: `http://127.0.0.1:${port}` };
}

async function commandLatency(envdUrl, w, n) {
  const sbx = await Sandbox.create({ debug: true, sandboxUrl: envdUrl });
  for (let i = 0; i < 20; i++) await sbx.commands.run('true'); // warm up
  const viaEnvd = [];
  for (let i = 0; i < n; i++) {
    const t = performance.now();
    await sbx.commands.run('true');
    viaEnvd.push(performance.now() - t);
  }
  const direct = [];
  const asUser = isRoot ? { uid: w.uid, gid: w.gid } : {};
  for (let i = 0; i < n; i++) {
    const t = performance.now();
    spawnSync('/bin/bash', ['-l', '-c', 'true'], {
      cwd: w.home,
      env: { PATH: process.env.PATH, HOME: w.home },
      ...asUser,
    });
    direct.push(performance.now() - t);
  }
  return { viaEnvd, direct };
}

await runBench({
  name: 'envd',
  title: "envd's idle memory and commands.run('true') vs. a bare server and a direct spawn",
  options: { iterations: { default: 200, quick: 10, doc: 'commands per variant' } },
  run: async (ctx) => {
    const { report, params } = ctx;
    if (!existsSync(bundle)) throw new Error(`${bundle} is missing: run npm run build`);
    const w = await world(ctx.work);
    const envd = await startChild(ctx, [
      ...[bundle, '--port', '0', '--host', '127.0.0.1', '--root', w.dir],
      ...['--passwd', join(w.dir, 'passwd'), '--group', join(w.dir, 'group')],
    ]);
    const bare = await startChild(ctx, [
      '-e',
      "const s=require('http').createServer((q,r)=>r.end()).listen(0,'127.0.0.1',()=>console.error(JSON.stringify({port:s.address().port})))",
    ]);
    await sleep(1000);
    const idle = { envd: await rssMiB(envd.child.pid), bare: await rssMiB(bare.child.pid) };
    const lat = await commandLatency(envd.url, w, params.iterations);
    await sleep(2000);
    const after = await rssMiB(envd.child.pid);
    report.section('memory');
    report.value('envd idle Rss after start', idle.envd, 'MiB');
    report.value(`envd idle Rss after ${params.iterations + 20} commands`, after, 'MiB');
    report.value('baseline: bare node HTTP server idle Rss', idle.bare, 'MiB');
    report.section("commands.run('true')");
    report.samples('e2b SDK → envd on loopback', lat.viaEnvd);
    report.samples(
      `baseline: spawnSync bash -l -c true${isRoot ? ' as the same user' : ''}`,
      lat.direct,
    );
    report.ratio('envd Rss after commands / bare server', after, idle.bare);
    report.ratio(
      'commands.run / direct spawn (p50)',
      report.find('e2b SDK → envd on loopback').p50,
      report.rows.at(-1).p50,
    );
  },
});
