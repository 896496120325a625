#!/usr/bin/env node
/**
 * What a user would pick instead, run on this machine in the same run as
 * an aenv node (runtime-lab §E, §F show how each runs here):
 *
 * - crun (podman's OCI runtime): a container with a fresh overlayfs upper
 *   over a busybox rootfs, `echo` to exit, in a private mount namespace
 *   with a cgroup2 view and `--cgroup-manager=disabled` (crun refuses this
 *   host's hybrid cgroup layout otherwise);
 * - gVisor (`runsc`, Debian's build: ptrace platform, `--network=none`,
 *   the only network mode that works on this kernel): `run` to exit, and
 *   checkpoint, restore, first `exec` after a restore, one image restored
 *   into 4 containers at once, Pss of a restored sandbox;
 * - plain QEMU: the guest kernel with a busybox initramfs to READY;
 * - aenv: create (until a command answers), pause, resume, fork into 4
 *   and Pss of an idle clone, on a node started here.
 *
 * A peer that is missing or cannot run is recorded as skipped with the
 * reason (`--install` installs crun and runsc with apt first). podman
 * itself is not run: it needs an image store and a registry; crun is what
 * it would start.
 *
 *   node bench/peers.mjs [--quick] [--runs 6] [--install]
 *
 * @module
 */
import { execFile, spawn } from 'node:child_process';
import { once } from 'node:events';
import { copyFile, mkdir, open, readFile, readdir, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { prepareGuestArtifacts } from '@aenv/guest';
import { findExecutable } from '@aenv/vmm';
import { runBench } from './lib/bench-main.mjs';
import { bareQemuBoot, miniInitramfs } from './lib/bare-vmm.mjs';
import { artifactsDir, startBenchNode } from './lib/bench-node.mjs';
import { processMemory, toMiB } from './lib/host-memory.mjs';
import { describeMachine } from './lib/machine.mjs';
import { percentile } from './lib/stats.mjs';

const exec = promisify(execFile);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
/** Where {@link timed} writes the output of the command it runs (in the work directory). */
let commandLog = '/dev/null';

/**
 * Runs a command to its exit, timed. Output goes to a log file, not to
 * pipes: `runsc restore --detach` leaves a sandbox running that would
 * hold a pipe open (and the wait with it).
 */
async function timed(file, args) {
  const log = await open(commandLog, 'w');
  try {
    const t0 = performance.now();
    const child = spawn(file, args, { stdio: ['ignore', log.fd, log.fd] });
    const [code] = await once(child, 'exit');
    const ms = performance.now() - t0;
    if (code !== 0) {
      const text = await readFile(commandLog, 'utf8');
      throw new Error(`${file} ${args.join(' ')} exited ${code}: ${text.slice(-400)}`);
    }
    return ms;
  } finally {
    await log.close();
  }
}

/** A busybox rootfs (sh, echo, true, sleep, cat) under `dir/lower`. */
async function busyboxRoot(dir) {
  const lower = join(dir, 'lower');
  for (const d of ['bin', 'proc', 'sys', 'dev', 'tmp', 'etc']) {
    await mkdir(join(lower, d), { recursive: true });
  }
  await copyFile('/bin/busybox', join(lower, 'bin/busybox'));
  for (const a of ['sh', 'echo', 'true', 'sleep', 'cat'])
    await symlink('busybox', join(lower, 'bin', a));
  return lower;
}

/** An OCI bundle made by `<runtime> spec`, adjusted: no terminal, `args`, the rootfs. */
async function bundle(runtime, dir, args, root) {
  await mkdir(dir, { recursive: true });
  await exec(runtime, ['spec'], { cwd: dir });
  const file = join(dir, 'config.json');
  const c = JSON.parse(await readFile(file, 'utf8'));
  c.process.args = args;
  c.process.terminal = false;
  c.root = root;
  await writeFile(file, JSON.stringify(c));
  return dir;
}

async function crunStarts(ctx, lower, runs) {
  const dir = join(ctx.work, 'crun');
  const b = await bundle('crun', join(dir, 'bundle'), ['/bin/echo', 'hi'], {
    path: 'rootfs',
    readonly: false,
  });
  await mkdir(join(b, 'rootfs'), { recursive: true });
  const out = [];
  for (let i = 0; i < runs; i++) {
    const inst = join(dir, `i${i}`);
    await mkdir(join(inst, 'upper'), { recursive: true });
    await mkdir(join(inst, 'work'), { recursive: true });
    const script = [
      'mount -t cgroup2 cgroup2 /sys/fs/cgroup || exit 1',
      `mount -t overlay overlay -o lowerdir=${lower},upperdir=${inst}/upper,workdir=${inst}/work ${b}/rootfs || exit 2`,
      `exec crun --cgroup-manager=disabled --root ${dir}/state run --bundle ${b} c${i}`,
    ].join('\n');
    out.push(await timed('unshare', ['-m', '--propagation', 'private', 'sh', '-c', script]));
  }
  return out;
}

/** Pss of a process and all its descendants, MiB. */
async function treePss(pid) {
  let total = toMiB((await processMemory(pid)).pss);
  const tasks = await readdir(`/proc/${pid}/task`).catch(() => []);
  for (const t of tasks) {
    const kids = await readFile(`/proc/${pid}/task/${t}/children`, 'utf8').catch(() => '');
    for (const k of kids.split(' ').filter((x) => x !== '')) total += await treePss(Number(k));
  }
  return total;
}

async function gvisor(ctx, lower, runs) {
  const dir = join(ctx.work, 'runsc');
  const root = join(dir, 'state');
  await mkdir(root, { recursive: true });
  const rs = (args) => timed('runsc', ['--root', root, '--network=none', ...args]);
  ctx.cleanup.add('delete runsc containers', async () => {
    const { stdout } = await exec('runsc', ['--root', root, 'list', '-quiet']).catch(() => ({
      stdout: '',
    }));
    for (const id of stdout.split('\n').filter((x) => x !== '')) {
      await exec('runsc', ['--root', root, 'delete', '--force', id]).catch(() => undefined);
    }
  });
  const rootSpec = { path: lower, readonly: true };
  const echo = await bundle('runsc', join(dir, 'echo'), ['/bin/echo', 'hi'], rootSpec);
  const loop = await bundle(
    'runsc',
    join(dir, 'loop'),
    ['/bin/sh', '-c', 'while true; do sleep 1; done'],
    rootSpec,
  );
  const r = { run: [], checkpoint: [], restore: [], firstExec: [], pss: [] };
  for (let i = 0; i < runs; i++) r.run.push(await rs(['run', '--bundle', echo, `e${i}`]));
  for (let i = 0; i < Math.min(runs, 8); i++) {
    await rs(['create', '--bundle', loop, `s${i}`]);
    await rs(['start', `s${i}`]);
    const img = join(dir, `img${i}`);
    await mkdir(img);
    r.checkpoint.push(await rs(['checkpoint', '--image-path', img, `s${i}`]));
    r.restore.push(
      await rs(['restore', '--image-path', img, '--bundle', loop, '--detach', `d${i}`]),
    );
    r.firstExec.push(r.restore.at(-1) + (await rs(['exec', `d${i}`, '/bin/true'])));
    await sleep(500);
    const { stdout } = await exec('runsc', ['--root', root, 'state', `d${i}`]);
    r.pss.push(await treePss(JSON.parse(stdout).pid));
    await exec('runsc', ['--root', root, 'delete', '--force', `d${i}`, `s${i}`]);
  }
  const t0 = performance.now();
  const img = join(dir, 'img0');
  await Promise.all(
    [0, 1, 2, 3].map((k) =>
      rs(['restore', '--image-path', img, '--bundle', loop, '--detach', `f${k}`]),
    ),
  );
  r.restore4 = performance.now() - t0;
  return r;
}

async function aenv(ctx, runs) {
  const node = await startBenchNode(ctx, {
    name: 'node',
    prefix: 'bpeers',
    addressPool: '10.240.20.0/24',
  });
  const r = { createApi: [], create: [], pause: [], resume: [], pss: [] };
  for (let i = 0; i < runs; i++) {
    const t0 = performance.now();
    const { id, ms } = await node.create();
    r.createApi.push(ms);
    await node.answer(id);
    r.create.push(performance.now() - t0);
    r.pss.push(toMiB((await node.memory(id)).pss));
    r.pause.push((await node.api('POST', `/sandboxes/${id}/pause`)).ms);
    r.resume.push((await node.api('POST', `/sandboxes/${id}/resume`, { timeout: 600 })).ms);
    if (i < runs - 1) await node.kill(id);
    else r.parent = id;
  }
  const t0 = performance.now();
  const { json } = await node.api('POST', `/sandboxes/${r.parent}/fork`, { count: 4 });
  await Promise.all(json.map((x) => node.answer(x.sandbox.sandboxID)));
  r.fork4 = performance.now() - t0;
  await node.close();
  return r;
}

async function ensure(ctx, install) {
  const missing = [];
  for (const cmd of ['crun', 'runsc'])
    if ((await findExecutable(cmd)) === undefined) missing.push(cmd);
  if (missing.length > 0 && install) {
    ctx.progress(`installing ${missing.join(' ')} with apt`);
    await exec(
      'flock',
      ['/tmp/aenv-apt.lock', 'apt-get', 'install', '-y', '--no-install-recommends', ...missing],
      {
        timeout: 600_000,
      },
    );
    return [];
  }
  return missing;
}

function reportPeers(report, p, a) {
  const p50 = (xs) => percentile(xs ?? [], 50);
  if (p.crun !== undefined) {
    report.section('crun 1.8 (container, overlay rootfs)');
    report.samples('start → exit of echo (overlay mount, run, teardown)', p.crun);
  }
  if (p.gv !== undefined) {
    report.section('gVisor runsc (ptrace platform, --network=none)');
    report.samples('run → exit of echo', p.gv.run);
    report.samples('checkpoint of a running sandbox', p.gv.checkpoint);
    report.samples('restore (--detach)', p.gv.restore);
    report.samples('restore → first exec answered', p.gv.firstExec);
    report.value('restore one image into 4 at once', p.gv.restore4, 'ms');
    report.samples('Pss of a restored sandbox (processes tree)', p.gv.pss, 'MiB');
  }
  report.section('plain QEMU');
  report.samples('boot of the guest kernel → READY (busybox initramfs)', p.qemu);
  report.section('aenv (this node)');
  report.samples('create (API: restored, envd initialized)', a.createApi);
  report.samples('create → first command (/bin/true) answered', a.create);
  report.samples('pause', a.pause);
  report.samples('resume', a.resume);
  report.value('fork into 4 → all answer', a.fork4, 'ms');
  report.samples('Pss of an idle sandbox (VMM process)', a.pss, 'MiB');
  report.ratio('aenv create (API) / crun start (p50)', p50(a.createApi), p50(p.crun));
  report.ratio('aenv create (API) / runsc run (p50)', p50(a.createApi), p50(p.gv?.run));
  report.ratio('aenv pause / runsc checkpoint (p50)', p50(a.pause), p50(p.gv?.checkpoint));
  report.ratio(
    'aenv resume / runsc restore → first exec (p50)',
    p50(a.resume),
    p50(p.gv?.firstExec),
  );
  report.ratio('aenv fork into 4 / runsc restore into 4', a.fork4, p.gv?.restore4);
  report.ratio('aenv idle Pss / runsc restored Pss (p50)', p50(a.pss), p50(p.gv?.pss));
  report.ratio('plain QEMU boot / aenv create (API) (p50)', p50(p.qemu), p50(a.createApi));
}

await runBench({
  name: 'peers',
  title: 'crun, gVisor runsc and plain QEMU beside aenv, same machine, same run',
  options: {
    runs: { default: 6, quick: 2, doc: 'starts per peer (checkpoints: at most 8)' },
    install: { default: 'no', doc: '"yes": install missing crun/runsc with apt' },
  },
  requires: { root: true, commands: ['qemu-system-x86_64', 'unshare'] },
  run: async (ctx) => {
    const { params, report } = ctx;
    commandLog = join(ctx.work, 'command.log');
    const missing = await ensure(ctx, params.install === 'yes');
    for (const m of missing)
      report.skip(m, `${m} is not installed (apt-get install ${m}, or --install yes)`);
    const lower = await busyboxRoot(ctx.work);
    const p = {};
    if (!missing.includes('crun')) p.crun = await crunStarts(ctx, lower, params.runs);
    if (!missing.includes('runsc')) p.gv = await gvisor(ctx, lower, params.runs);
    ctx.progress('containers measured');
    const machine = await describeMachine();
    const { kernel } = await prepareGuestArtifacts({ cacheDir: artifactsDir() });
    const initrd = await miniInitramfs(ctx.work);
    const accel = machine.virtualization.mode === 'kvm' ? 'kvm' : 'tcg';
    p.qemu = [];
    for (let i = 0; i < Math.min(params.runs, 5); i++)
      p.qemu.push(await bareQemuBoot({ kernel, initrd, accel }));
    const a = await aenv(ctx, Math.min(params.runs, 8));
    report.skip(
      'podman',
      'not run: needs an image store and a registry; crun (its OCI runtime) is measured',
    );
    reportPeers(report, p, a);
  },
});
