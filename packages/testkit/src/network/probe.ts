/**
 * The test side of a probe agent (`@aenv/network/testing`), whatever carries its
 * lines: a child process in a namespace ({@link startNetnsProbe}) or a
 * process inside a real guest, started through envd (`qemu-guest.ts`).
 * Each method sends one request and resolves with its answer; answers are
 * matched by id, so requests may overlap. When the agent goes away every
 * pending request resolves with outcome `error` (never hangs).
 *
 * @module
 */
import { spawn } from 'node:child_process';
import { PROBE_AGENT_PATH } from '@aenv/network/testing';

/** The outcome of a probe. */
export interface ProbeAnswer {
  readonly outcome: 'ok' | 'refused' | 'unreachable' | 'timeout' | 'closed' | 'error';
  readonly text?: string;
  readonly code?: string;
}

/** The compiled agent, run as is in namespaces and copied into guests. */
export { PROBE_AGENT_PATH };

/** How request lines reach an agent and how it is ended. */
export interface ProbeTransport {
  /** Delivers one request line (newline included). */
  send(line: string): Promise<void>;
  /** Ends the agent; resolves once it is gone. */
  stop(): Promise<void>;
}

/** A probe agent, wherever it runs. */
export class Probe {
  readonly label: string;
  readonly #transport: ProbeTransport;
  readonly #pending = new Map<number, (a: ProbeAnswer) => void>();
  readonly #ready: Promise<ProbeAnswer>;
  #partial = '';
  #next = 1;
  #failed: string | undefined;

  /** Wire {@link receive} and {@link fail} to the agent's output before anything else. */
  constructor(label: string, transport: ProbeTransport) {
    this.label = label;
    this.#transport = transport;
    this.#ready = new Promise((resolve) => this.#pending.set(0, resolve));
  }

  /** Feeds agent output; chunks need not end at line boundaries. */
  receive(chunk: string): void {
    this.#partial += chunk;
    let nl: number;
    while ((nl = this.#partial.indexOf('\n')) !== -1) {
      const line = this.#partial.slice(0, nl);
      this.#partial = this.#partial.slice(nl + 1);
      let msg: ProbeAnswer & { id: number };
      try {
        msg = JSON.parse(line) as ProbeAnswer & { id: number };
      } catch {
        // Not an answer (a stray line on the agent's stdout): it answers nothing.
        continue;
      }
      this.#pending.get(msg.id)?.(msg);
      this.#pending.delete(msg.id);
    }
  }

  /** The agent is gone: pending and later requests answer `error` with `code`. */
  fail(code: string): void {
    this.#failed ??= code;
    for (const resolve of this.#pending.values()) resolve({ outcome: 'error', code });
    this.#pending.clear();
  }

  /** Resolves when the agent announced itself; throws if it did not. */
  async ready(): Promise<void> {
    const a = await this.#ready;
    if (a.outcome !== 'ok') throw new Error(`probe ${this.label} did not start: ${a.code}`);
  }

  #request(op: string, args: Record<string, unknown>): Promise<ProbeAnswer> {
    if (this.#failed !== undefined)
      return Promise.resolve({ outcome: 'error', code: this.#failed });
    const id = this.#next++;
    const answer = new Promise<ProbeAnswer>((resolve) => this.#pending.set(id, resolve));
    this.#transport.send(JSON.stringify({ id, op, ...args }) + '\n').catch((err: unknown) => {
      this.#pending.get(id)?.({ outcome: 'error', code: `send failed: ${String(err)}` });
      this.#pending.delete(id);
    });
    return answer;
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
  echo(conn: string, data: string, timeoutMs = 2000): Promise<ProbeAnswer> {
    return this.#request('echo', { conn, data, timeoutMs });
  }
  closeConn(conn: string): Promise<ProbeAnswer> {
    return this.#request('close', { conn });
  }
  udp(host: string, port: number, data: string, timeoutMs = 1500): Promise<ProbeAnswer> {
    return this.#request('udp', { host, port, data, timeoutMs });
  }
  /** Pipes every connection to the unix socket `socket` to `host:port`, from the agent's side. */
  forward(socket: string, host: string, port: number): Promise<ProbeAnswer> {
    return this.#request('forward', { socket, host, port });
  }

  /** Ends the agent. */
  stop(): Promise<void> {
    return this.#transport.stop();
  }
}

/** Starts an agent in `/run/netns/<netns>` and waits until it is ready. */
export async function startNetnsProbe(netns: string, label: string): Promise<Probe> {
  const child = spawn(
    'nsenter',
    [`--net=/run/netns/${netns}`, '--', process.execPath, PROBE_AGENT_PATH, label],
    { stdio: ['pipe', 'pipe', 'pipe'] },
  );
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  let stderr = '';
  const probe = new Probe(label, {
    send: (line) =>
      new Promise((resolve, reject) =>
        child.stdin.write(line, (err) => (err ? reject(err) : resolve())),
      ),
    stop: async () => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.stdin.end();
      const timer = setTimeout(() => child.kill('SIGKILL'), 2000);
      await exited;
      clearTimeout(timer);
    },
  });
  child.stdout.setEncoding('utf8');
  child.stdout.on('data', (d: string) => probe.receive(d));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  child.stdin.on('error', () => undefined);
  child.on('exit', () => probe.fail(`agent exited: ${stderr.trim()}`));
  await probe.ready();
  return probe;
}
