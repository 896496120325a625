#!/usr/bin/env node
// envd figures, side by side with baselines measured in the same run:
//  - idle RSS of the envd bundle process (after start, and after serving
//    requests, then idling) vs. a bare node HTTP server;
//  - latency of `commands.run('true')` through the real e2b SDK on loopback
//    (p50/p90) vs. spawning the same `/bin/bash -l -c true` directly.
// Usage: npm run build && node bench/envd.mjs [iterations=200]
// Runs envd from packages/envd/bundle in a temporary world (own passwd with
// an unprivileged `user` when run as root); removes it afterwards.
import { spawn, spawnSync } from 'node:child_process';
import {
  chmodSync,
  chownSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { Sandbox } from 'e2b';

const root = new URL('..', import.meta.url).pathname;
const bundle = join(root, 'packages/envd/bundle/envd.mjs');
const iterations = Number(process.argv[2] ?? 200);
const isRoot = process.getuid?.() === 0;

const rssMiB = (pid) =>
  Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))[1]) / 1024;
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const pct = (xs, p) =>
  [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))];

function world() {
  const dir = mkdtempSync(join(tmpdir(), 'envd-bench-'));
  chmodSync(dir, 0o755);
  const home = join(dir, 'home/user');
  mkdirSync(home, { recursive: true });
  const uid = isRoot ? 4242 : process.getuid();
  const gid = isRoot ? 4242 : process.getgid();
  if (isRoot) chownSync(home, uid, gid);
  writeFileSync(
    join(dir, 'passwd'),
    `root:x:0:0:root:${dir}:/bin/bash\nuser:x:${uid}:${gid}::${home}:/bin/bash\n`,
  );
  writeFileSync(join(dir, 'group'), `root:x:0:\nuser:x:${gid}:\n`);
  return { dir, home, uid, gid };
}

async function startChild(args, cwd) {
  const child = spawn(process.execPath, args, { cwd, stdio: ['ignore', 'ignore', 'pipe'] });
  const port = await new Promise((resolve, reject) => {
    createInterface({ input: child.stderr }).on('line', (line) => {
      try {
        const j = JSON.parse(line);
        if (j.port) resolve(j.port);
      } catch {
        // not a JSON log line: ignore
      }
    });
    child.once('exit', (code) => reject(new Error(`exited ${code}`)));
  });
  return { child, url: `http://127.0.0.1:${port}` };
}

const w = world();
const envd = await startChild(
  [
    bundle,
    '--port',
    '0',
    '--host',
    '127.0.0.1',
    '--root',
    w.dir,
    '--passwd',
    join(w.dir, 'passwd'),
    '--group',
    join(w.dir, 'group'),
  ],
  '/',
);
const bare = await startChild(
  [
    '-e',
    "const s=require('http').createServer((q,r)=>r.end()).listen(0,'127.0.0.1',()=>console.error(JSON.stringify({port:s.address().port})))",
  ],
  '/',
);
try {
  await sleep(1000);
  const envdIdle = rssMiB(envd.child.pid);
  const bareIdle = rssMiB(bare.child.pid);

  const sbx = await Sandbox.create({ debug: true, sandboxUrl: envd.url });
  for (let i = 0; i < 20; i++) await sbx.commands.run('true'); // warm up
  const viaEnvd = [];
  for (let i = 0; i < iterations; i++) {
    const t = performance.now();
    await sbx.commands.run('true');
    viaEnvd.push(performance.now() - t);
  }
  const direct = [];
  const asUser = isRoot ? { uid: w.uid, gid: w.gid } : {};
  for (let i = 0; i < iterations; i++) {
    const t = performance.now();
    spawnSync('/bin/bash', ['-l', '-c', 'true'], {
      cwd: w.home,
      env: { PATH: process.env.PATH, HOME: w.home },
      ...asUser,
    });
    direct.push(performance.now() - t);
  }
  await sleep(2000);
  const envdAfter = rssMiB(envd.child.pid);

  const row = (name, a, b, unit) =>
    console.log(
      `${name.padEnd(34)} ${a.toFixed(1).padStart(8)} ${b.toFixed(1).padStart(10)} ${unit.padEnd(4)} ratio ${(a / b).toFixed(2)}`,
    );
  console.log(`${'metric'.padEnd(34)} ${'envd'.padStart(8)} ${'baseline'.padStart(10)}`);
  row('idle RSS after start', envdIdle, bareIdle, 'MiB');
  row(`idle RSS after ${iterations + 20} commands`, envdAfter, bareIdle, 'MiB');
  row("commands.run('true') p50", pct(viaEnvd, 50), pct(direct, 50), 'ms');
  row("commands.run('true') p90", pct(viaEnvd, 90), pct(direct, 90), 'ms');
  console.log(
    `(baselines: a bare node http server; spawnSync of /bin/bash -l -c true${isRoot ? ' as the same user' : ''}; ${iterations} runs each)`,
  );
} finally {
  envd.child.kill('SIGTERM');
  bare.child.kill('SIGTERM');
  rmSync(w.dir, { recursive: true, force: true });
}
