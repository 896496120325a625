/**
 * A real node for network suites that must see the host as it is: the
 * `aenv server` command line (the built `packages/cli`) in its own process,
 * in the host's root network namespace, with its own home, network prefix,
 * address pool and lock directory, listening on a free loopback port. The
 * testkit may not import `@aenv/server` (it sits below it), so the daemon
 * is driven over its HTTP API, and commands reach a guest through the
 * node's proxy with envd's `process.Process/Start` (Connect protocol, JSON
 * codec, server streaming: 5-byte envelopes, flag 0x02 on the last frame).
 *
 * `stop()` sends SIGTERM (the node kills its sandboxes, no pause) and
 * SIGKILL after a grace period; it resolves once the process is gone.
 *
 * @module
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { existsSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { ENVD_PORT } from '@aenv/guest';

/** The built command line (from `packages/testkit/dist/test/network/`). */
export const CLI_PATH = fileURLToPath(new URL('../../../../cli/dist/src/main.js', import.meta.url));
const READY_TIMEOUT_MS = 600_000;
const STOP_GRACE_MS = 60_000;
const PASS_THROUGH = /^AENV_(VMM|QEMU|FIRECRACKER|GUEST|NBD)_/;

/** What {@link NodeDaemon.start} needs. */
export interface NodeDaemonOptions {
  /** A directory of the test's own for the node's state. */
  readonly home: string;
  /** Extra `AENV_*` settings (prefix, pool, ...). */
  readonly env: Readonly<Record<string, string>>;
}

/** How a command run in a guest ended. */
export interface GuestRun {
  readonly exitCode: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** One message of a Start stream (the end-stream frame may carry `error`). */
interface StreamMessage {
  readonly event?: { data?: { stdout?: string; stderr?: string }; end?: { exitCode?: number } };
  readonly error?: { message?: string; code?: string };
}

function* messages(buf: Buffer): Generator<StreamMessage> {
  let at = 0;
  while (at + 5 <= buf.length) {
    const len = buf.readUInt32BE(at + 1);
    const payload = buf.subarray(at + 5, at + 5 + len).toString();
    yield len === 0 ? {} : (JSON.parse(payload) as StreamMessage);
    at += 5 + len;
  }
}

/** A running `aenv server`. */
export class NodeDaemon {
  readonly url: string;
  readonly pid: number;
  readonly #apiKey: string;
  readonly #child: ChildProcess;
  readonly #exited: Promise<unknown>;

  private constructor(child: ChildProcess, exited: Promise<unknown>, url: string, apiKey: string) {
    this.#child = child;
    this.#exited = exited;
    this.pid = child.pid ?? 0;
    this.url = url;
    this.#apiKey = apiKey;
  }

  /** Whether the built command line exists (the suite skips without it). */
  static available(): boolean {
    return existsSync(CLI_PATH);
  }

  /** Starts the daemon and waits until it prints its URL (first start: minutes). */
  static async start(o: NodeDaemonOptions): Promise<NodeDaemon> {
    const config = join(o.home, 'test-config.json');
    await writeFile(config, '{}');
    const passed = Object.entries(process.env).filter(([k]) => PASS_THROUGH.test(k));
    const child = spawn(process.execPath, [CLI_PATH, 'server', '--config', config], {
      env: {
        PATH: process.env.PATH ?? '/usr/sbin:/usr/bin:/sbin:/bin',
        ...Object.fromEntries(passed),
        ...o.env,
        AENV_HOME: o.home,
        AENV_HOST: '127.0.0.1',
        AENV_PORT: '0',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const exited = once(child, 'exit');
    const tail: string[] = [];
    const keep = (line: string): void => void (tail.push(line) > 20 && tail.shift());
    createInterface({ input: child.stderr }).on('line', keep);
    const lines = createInterface({ input: child.stdout });
    let url = '';
    const ready = new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error('aenv server: not ready')), READY_TIMEOUT_MS);
      lines.on('line', (line) => {
        keep(line);
        url = /^aenv node ready at (\S+)/.exec(line)?.[1] ?? url;
        const path = /API key: (\S+)/.exec(line)?.[1];
        if (path === undefined) return;
        clearTimeout(timer);
        resolve(path);
      });
      void exited.then(([code]) => {
        clearTimeout(timer);
        reject(new Error(`aenv server exited (${String(code)}) at start: ${tail.join(' | ')}`));
      });
    });
    let keyPath: string;
    try {
      keyPath = await ready;
    } catch (err) {
      child.kill('SIGKILL');
      await exited;
      throw err;
    }
    const apiKey = (await readFile(keyPath, 'utf8')).trim();
    return new NodeDaemon(child, exited, url, apiKey);
  }

  /** One API call; throws on a status >= 300. */
  async api(method: string, path: string, body?: unknown): Promise<unknown> {
    const res = await fetch(`${this.url}${path}`, {
      method,
      headers: { 'x-api-key': this.#apiKey, 'content-type': 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await res.text();
    if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${text}`);
    return text === '' ? undefined : JSON.parse(text);
  }

  /** Creates a sandbox from `base` (envd without access token); its id. */
  async create(): Promise<string> {
    const body = { templateID: 'base', timeout: 600, secure: false };
    const r = (await this.api('POST', '/v2/sandboxes', body)) as { sandboxID: string };
    return r.sandboxID;
  }

  /**
   * Runs `cmd args` in a sandbox through the node's proxy and waits for its
   * end (as envd's default user, or `user`).
   */
  async run(id: string, cmd: string, args: readonly string[], user?: string): Promise<GuestRun> {
    const message = JSON.stringify({ process: { cmd, args }, stdin: false });
    const head = Buffer.alloc(5);
    head.writeUInt32BE(Buffer.byteLength(message), 1);
    const res = await fetch(`${this.url}/process.Process/Start`, {
      method: 'POST',
      headers: {
        'content-type': 'application/connect+json',
        'e2b-sandbox-id': id,
        'e2b-sandbox-port': String(ENVD_PORT),
        ...(user === undefined ? {} : { authorization: `Basic ${btoa(`${user}:`)}` }),
      },
      body: Buffer.concat([head, Buffer.from(message)]),
      signal: AbortSignal.timeout(180_000),
    });
    const buf = Buffer.from(await res.arrayBuffer());
    if (res.status !== 200) throw new Error(`process start: ${res.status} ${buf.toString()}`);
    let exitCode: number | undefined;
    let stdout = '';
    let stderr = '';
    for (const m of messages(buf)) {
      if (m.error !== undefined) throw new Error(`process start: ${m.error.message}`);
      const ev = m.event;
      if (ev?.data?.stdout !== undefined)
        stdout += Buffer.from(ev.data.stdout, 'base64').toString();
      if (ev?.data?.stderr !== undefined)
        stderr += Buffer.from(ev.data.stderr, 'base64').toString();
      if (ev?.end !== undefined) exitCode = ev.end.exitCode ?? 0;
    }
    if (exitCode === undefined) throw new Error('process start: no end event');
    return { exitCode, stdout, stderr };
  }

  /** Stops the daemon (its sandboxes are killed); resolves once it exited. */
  async stop(): Promise<void> {
    if (this.#child.exitCode === null && this.#child.signalCode === null) {
      this.#child.kill('SIGTERM');
    }
    const timer = setTimeout(() => this.#child.kill('SIGKILL'), STOP_GRACE_MS);
    await this.#exited;
    clearTimeout(timer);
  }
}
