/**
 * Drives a probe agent (`probe-agent.ts`) running inside a network
 * namespace: each method sends one request and resolves with its answer.
 *
 * @module
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { PROBE_AGENT_PATH } from '../../src/testing/index.js';
import { createInterface } from 'node:readline';

/** The outcome of a probe. */
export interface ProbeAnswer {
  readonly outcome: 'ok' | 'refused' | 'unreachable' | 'timeout' | 'closed' | 'error';
  readonly text?: string;
  readonly code?: string;
}

/** What a probe can do from wherever it runs (a namespace, or a guest). */
export interface Probe {
  readonly label: string;
  listen(port: number): Promise<ProbeAnswer>;
  listenUdp(port: number, host?: string): Promise<ProbeAnswer>;
  connect(host: string, port: number, timeoutMs?: number): Promise<ProbeAnswer>;
  open(conn: string, host: string, port: number): Promise<ProbeAnswer>;
  echo(conn: string, data: string, timeoutMs?: number): Promise<ProbeAnswer>;
  closeConn(conn: string): Promise<ProbeAnswer>;
  udp(host: string, port: number, data: string, timeoutMs?: number): Promise<ProbeAnswer>;
  stop(): Promise<void>;
}

/** A probe agent process in a named network namespace. */
export class NetnsProbe implements Probe {
  readonly label: string;
  readonly #child: ChildProcessWithoutNullStreams;
  readonly #pending = new Map<number, (a: ProbeAnswer) => void>();
  readonly #exited: Promise<void>;
  #next = 1;

  private constructor(label: string, child: ChildProcessWithoutNullStreams) {
    this.label = label;
    this.#child = child;
    this.#exited = new Promise((resolve) => child.once('exit', () => resolve()));
    createInterface({ input: child.stdout }).on('line', (line) => {
      const msg = JSON.parse(line) as ProbeAnswer & { id: number };
      this.#pending.get(msg.id)?.(msg);
      this.#pending.delete(msg.id);
    });
    child.on('exit', () => {
      for (const resolve of this.#pending.values())
        resolve({ outcome: 'error', code: 'agent exited' });
      this.#pending.clear();
    });
  }

  /** Starts an agent in `/run/netns/<netns>` and waits until it is ready. */
  static async start(netns: string, label: string): Promise<NetnsProbe> {
    const child = spawn(
      'nsenter',
      [`--net=/run/netns/${netns}`, '--', process.execPath, PROBE_AGENT_PATH, label],
      {
        stdio: ['pipe', 'pipe', 'pipe'],
      },
    );
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const probe = new NetnsProbe(label, child);
    const ready = await new Promise<ProbeAnswer>((resolve) => {
      probe.#pending.set(0, resolve);
    });
    if (ready.outcome !== 'ok') throw new Error(`probe ${label} did not start: ${stderr}`);
    return probe;
  }

  #request(op: string, args: Record<string, unknown>): Promise<ProbeAnswer> {
    const id = this.#next++;
    return new Promise((resolve) => {
      this.#pending.set(id, resolve);
      this.#child.stdin.write(JSON.stringify({ id, op, ...args }) + '\n');
    });
  }

  listen(port: number): Promise<ProbeAnswer> {
    return this.#request('listen', { port });
  }
  listenUdp(port: number, host?: string): Promise<ProbeAnswer> {
    return this.#request('listenUdp', { port, host });
  }
  connect(host: string, port: number, timeoutMs = 2000): Promise<ProbeAnswer> {
    return this.#request('connect', { host, port, timeoutMs });
  }
  open(conn: string, host: string, port: number): Promise<ProbeAnswer> {
    return this.#request('open', { conn, host, port, timeoutMs: 2000 });
  }
  echo(conn: string, data: string, timeoutMs = 1500): Promise<ProbeAnswer> {
    return this.#request('echo', { conn, data, timeoutMs });
  }
  closeConn(conn: string): Promise<ProbeAnswer> {
    return this.#request('close', { conn });
  }
  udp(host: string, port: number, data: string, timeoutMs = 1500): Promise<ProbeAnswer> {
    return this.#request('udp', { host, port, data, timeoutMs });
  }

  /** Ends the agent (closing its stdin), killing it if it lingers. */
  async stop(): Promise<void> {
    if (this.#child.exitCode !== null || this.#child.signalCode !== null) return;
    this.#child.stdin.end();
    const timer = setTimeout(() => this.#child.kill('SIGKILL'), 2000);
    await this.#exited;
    clearTimeout(timer);
  }
}
