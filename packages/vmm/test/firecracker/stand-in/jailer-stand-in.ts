/**
 * A STAND-IN for Firecracker's `jailer` (test code). It checks the jailer
 * command line the driver builds (`--id`, `--exec-file`, `--uid`, `--gid`,
 * `--chroot-base-dir`, `--netns`, cgroup and resource-limit options, then
 * `--` and Firecracker's arguments), creates the chroot directory
 * `<base>/<exec name>/<id>/root` owned by `uid:gid` with a copy of the exec
 * file, joins the network namespace and drops to `uid:gid`, then runs the
 * exec file with the jailer's extra arguments.
 *
 * What it cannot do from node: `chroot`/`pivot_root` (the Firecracker
 * stand-in is told the root instead, `AENV_FC_STANDIN_ROOT`, and resolves
 * every path inside it) and `exec` (it runs the exec file as a child, dies
 * with a SIGKILL'd parent through `setpriv --pdeathsig`, forwards SIGTERM
 * and SIGUSR2, and ends the way the child ended). cgroups are checked for
 * form but not created.
 *
 * @module
 */
import { spawn } from 'node:child_process';
import { accessSync, chownSync, constants, copyFileSync, existsSync, mkdirSync } from 'node:fs';
import { basename, isAbsolute, join } from 'node:path';

function fail(message: string): never {
  process.stderr.write(`jailer: ${message}\n`);
  process.exit(1);
}

interface JailerArgs {
  id: string;
  execFile: string;
  uid: number;
  gid: number;
  base: string;
  netns: string | undefined;
  rest: string[];
}

const REPEATABLE = new Set(['--cgroup', '--resource-limit']);
const VALUED = new Set([
  '--id',
  '--exec-file',
  '--uid',
  '--gid',
  '--chroot-base-dir',
  '--netns',
  '--cgroup-version',
  '--parent-cgroup',
  ...REPEATABLE,
]);

function collect(own: readonly string[]): Map<string, string[]> {
  const values = new Map<string, string[]>();
  for (let i = 0; i < own.length; i += 2) {
    const flag = own[i] as string;
    if (!VALUED.has(flag)) fail(`unknown or unsupported argument ${flag}`);
    const value = own[i + 1];
    if (value === undefined) fail(`${flag} needs a value`);
    if (values.has(flag) && !REPEATABLE.has(flag)) fail(`${flag} given twice`);
    values.set(flag, [...(values.get(flag) ?? []), value]);
  }
  for (const c of values.get('--cgroup') ?? []) {
    if (!/^[a-z_]+\.[a-z_.]+=\S.*$/.test(c)) fail(`invalid --cgroup ${c}`);
  }
  for (const r of values.get('--resource-limit') ?? []) {
    if (!/^(no-file|fsize)=\d+$/.test(r)) fail(`invalid --resource-limit ${r}`);
  }
  return values;
}

function parse(argv: readonly string[]): JailerArgs {
  const sep = argv.indexOf('--');
  const values = collect(sep === -1 ? argv : argv.slice(0, sep));
  const one = (f: string): string | undefined => values.get(f)?.[0];
  const need = (f: string): string => one(f) ?? fail(`missing required argument ${f}`);
  const id = need('--id');
  if (!/^[A-Za-z0-9-]{1,64}$/.test(id)) fail(`invalid id ${id}`);
  const uid = Number(need('--uid'));
  const gid = Number(need('--gid'));
  if (!Number.isInteger(uid) || !Number.isInteger(gid)) fail('uid and gid must be integers');
  const base = one('--chroot-base-dir') ?? '/srv/jailer';
  if (!isAbsolute(base)) fail(`chroot base ${base} is not absolute`);
  const rest = sep === -1 ? [] : argv.slice(sep + 1);
  return { id, execFile: need('--exec-file'), uid, gid, base, netns: one('--netns'), rest };
}

function main(): void {
  const a = parse(process.argv.slice(2));
  try {
    accessSync(a.execFile, constants.X_OK);
  } catch {
    fail(`exec file ${a.execFile} is not executable`);
  }
  if (a.netns !== undefined && !existsSync(a.netns)) fail(`netns ${a.netns} does not exist`);
  const root = join(a.base, basename(a.execFile), a.id, 'root');
  mkdirSync(root, { recursive: true });
  copyFileSync(a.execFile, join(root, basename(a.execFile)));
  chownSync(root, a.uid, a.gid);
  let argv = [
    'setpriv',
    `--reuid=${a.uid}`,
    `--regid=${a.gid}`,
    '--clear-groups',
    '--pdeathsig',
    'SIGKILL',
    '--',
    a.execFile,
    ...a.rest,
    '--id',
    a.id,
    '--start-time-us',
    '0',
    '--start-time-cpu-us',
    '0',
  ];
  if (a.netns !== undefined) argv = ['nsenter', `--net=${a.netns}`, '--', ...argv];
  const child = spawn(argv[0] as string, argv.slice(1), {
    stdio: 'inherit',
    env: { ...process.env, AENV_FC_STANDIN_ROOT: root },
  });
  for (const sig of ['SIGTERM', 'SIGUSR2'] as const) process.on(sig, () => child.kill(sig));
  child.on('exit', (code, signal) => {
    if (signal === null) process.exit(code ?? 1);
    process.removeAllListeners(signal);
    process.kill(process.pid, signal);
  });
}

main();
