/**
 * A STAND-IN machine for fast CLI and SDK suites: instead of a microVM,
 * each sandbox is the REAL envd (the bundle `npm run build` makes,
 * `packages/envd/bundle/`) running as a process on this host, on loopback,
 * confined by its `--root` guard to a directory of its own. The node, its
 * API, proxy, orchestrator and store are the real ones; so are envd's
 * processes, files and PTYs. What the stand-in does not have: a kernel of
 * its own (commands run on the host, as root, so suites only run harmless
 * ones), memory snapshots (a pause stops envd and its resume starts a new
 * one on the same directory; a checkpoint copies the directory while envd
 * runs on, and each machine restored from it gets a copy: files survive,
 * processes do not),
 * and egress enforcement. envd's log lines play the VM console
 * (`$AENV_HOME/sandboxes/<id>/serial.log`). The microVM suites
 * (`*.vm.test.ts`) cover the real machine.
 *
 * The bundle is copied without `envd-entropy`, so `/init`'s entropy goes to
 * `/dev/urandom` as ordinary input instead of reseeding the host's RNG.
 *
 * @module
 */
import { spawn, type ChildProcess } from 'node:child_process';
import {
  cpSync,
  createWriteStream,
  existsSync,
  mkdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type {
  LaunchedSandbox,
  LaunchSpec,
  MachineSnapshot,
  SandboxLauncher,
  SuspendOptions,
} from '@aenv/server';

/** The envd bundle of this checkout (built by `npm run build`). */
export const ENVD_BUNDLE = fileURLToPath(new URL('../../../../envd/bundle', import.meta.url));

/** Why the stand-in cannot run here, or undefined when it can. */
export function standInUnavailable(): string | undefined {
  if (!existsSync(join(ENVD_BUNDLE, 'envd.mjs'))) {
    return `no envd bundle at ${ENVD_BUNDLE} (run npm run build)`;
  }
  return undefined;
}

interface Machine {
  readonly proc: ChildProcess;
  readonly port: number;
  stopping: boolean;
}

function sourceImage(spec: LaunchSpec): MachineSnapshot['image'] {
  return spec.source.kind === 'boot' ? spec.source.image : spec.source.snapshot.image;
}

/** Starts envd and resolves with its port, read from its "envd listening" log line. */
function startEnvd(bundle: string, root: string, consoleLog: string): Promise<Machine> {
  const proc = spawn(
    process.execPath,
    [
      join(bundle, 'envd.mjs'),
      '--port',
      '0',
      '--host',
      '127.0.0.1',
      '--root',
      root,
      '--workdir',
      root,
    ],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  const log = createWriteStream(consoleLog, { flags: 'a' });
  return new Promise((resolve, reject) => {
    let pending = '';
    proc.stderr?.on('data', (chunk: Buffer) => {
      log.write(chunk);
      pending += chunk.toString('utf8');
      const m = /"msg":"envd listening"[^\n]*"port":(\d+)/.exec(pending);
      if (m !== null) resolve({ proc, port: Number(m[1]), stopping: false });
    });
    proc.once('exit', (code, signal) => {
      log.end();
      reject(new Error(`stand-in envd exited at start (${String(code ?? signal)})`));
    });
    proc.once('error', reject);
  });
}

/** Launches stand-in machines (see the module comment). */
export class EnvdStandInLauncher implements SandboxLauncher {
  readonly #home: string;
  readonly #nodeHome: string;
  readonly #bundle: string;
  readonly #machines = new Set<Machine>();
  #launches = 0;

  /**
   * `home`: where roots and the bundle copy go; `nodeHome`: the node's
   * `$AENV_HOME` (console logs go to its `sandboxes/<id>/`).
   */
  constructor(home: string, nodeHome: string) {
    this.#home = home;
    this.#nodeHome = nodeHome;
    this.#bundle = join(home, 'envd-bundle');
    cpSync(ENVD_BUNDLE, this.#bundle, {
      recursive: true,
      filter: (src) => !src.endsWith('envd-entropy'),
    });
  }

  async launch(spec: LaunchSpec, signal: AbortSignal): Promise<LaunchedSandbox> {
    const startedAt = performance.now();
    const dir = join(this.#nodeHome, 'sandboxes', spec.sandboxId);
    mkdirSync(dir, { recursive: true });
    const root = this.#rootFor(spec);
    const machine = await startEnvd(this.#bundle, root, join(dir, 'serial.log'));
    this.#machines.add(machine);
    signal.throwIfAborted();
    const stop = async (): Promise<void> => {
      if (!machine.stopping) {
        machine.stopping = true;
        if (machine.proc.exitCode === null) {
          const gone = new Promise((r) => machine.proc.once('exit', r));
          machine.proc.kill('SIGKILL');
          await gone;
        }
      }
      this.#machines.delete(machine);
      rmSync(dir, { recursive: true, force: true });
    };
    return {
      marks: {
        startedAt,
        vmmRunningAt: performance.now(),
        initStartedAt: Promise.resolve(undefined),
      },
      address: (port) => ({ host: '127.0.0.1', port: port === 49983 ? machine.port : port }),
      applyEgress: () => Promise.resolve(),
      exited: new Promise((resolve) => {
        machine.proc.once('exit', (code, sig) => {
          if (!machine.stopping)
            resolve({ reason: `stand-in envd exited (${String(code ?? sig)})` });
        });
      }),
      suspend: async (options: SuspendOptions) => {
        mkdirSync(options.dir, { recursive: true });
        // The one resume of a pause continues in the same directory, as a VM keeps its paths.
        writeFileSync(join(options.dir, 'standin.json'), JSON.stringify({ root, reuse: true }));
        await stop();
        const image = sourceImage(spec);
        return {
          dir: options.keepMemory ? options.dir : undefined,
          image: { virtualSize: image.virtualSize, layers: [...image.layers] },
        };
      },
      checkpoint: (snapshotDir: string) => {
        // The machine keeps running; the snapshot gets a copy of its files.
        const copy = join(this.#home, 'roots', `checkpoint-${++this.#launches}`);
        cpSync(root, copy, { recursive: true });
        mkdirSync(snapshotDir, { recursive: true });
        writeFileSync(join(snapshotDir, 'standin.json'), JSON.stringify({ root: copy }));
        return Promise.resolve({ dir: snapshotDir, image: sourceImage(spec) });
      },
      stop,
    };
  }

  /** The restored machine's directory, or a fresh one. */
  #rootFor(spec: LaunchSpec): string {
    const snapDir = spec.source.kind === 'restore' ? spec.source.snapshot.dir : undefined;
    const saved = snapDir === undefined ? undefined : join(snapDir, 'standin.json');
    const root = join(this.#home, 'roots', `${spec.sandboxId}-${++this.#launches}`);
    if (saved !== undefined && existsSync(saved)) {
      const from = JSON.parse(readFileSync(saved, 'utf8')) as { root: string; reuse?: boolean };
      if (from.reuse === true) return from.root;
      // A checkpoint may start many machines: each gets its own copy.
      cpSync(from.root, root, { recursive: true });
    } else {
      mkdirSync(root, { recursive: true });
    }
    return root;
  }

  async close(): Promise<void> {
    await Promise.all(
      [...this.#machines].map(async (m) => {
        m.stopping = true;
        if (m.proc.exitCode === null) {
          const gone = new Promise((r) => m.proc.once('exit', r));
          m.proc.kill('SIGKILL');
          await gone;
        }
      }),
    );
    this.#machines.clear();
  }
}
