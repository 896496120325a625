/**
 * A test-only network probe, shipped with the network package so that its
 * own suites and every suite outside it (testkit's guests, the server's
 * matrix) use one agent. It runs as a child process inside a namespace
 * (`nsenter --net=<ns> node probe-agent.js <label>`) or inside a real guest
 * (started through envd's process API), so it imports nothing but node's
 * built-ins: the guest gets this one compiled file. Its path is
 * `PROBE_AGENT_PATH` of `@aenv/network/testing`.
 *
 * It takes JSON requests on stdin, one per line, and answers each with one
 * JSON line on stdout (`{id, outcome, text?, code?}`); its first line is
 * `{id: 0, outcome: 'ok', text: 'ready <label>'}`:
 *
 * - `listen {port}`: TCP server; greets each connection with
 *   `hello <label> <peer address>` then echoes what it receives;
 * - `listenUdp {port, host?}`: UDP server on one address; answers
 *   `<label> <peer address> <data>`;
 * - `connect {host, port, timeoutMs}`: one connection, returns the greeting;
 * - `open {conn, host, port, timeoutMs}` / `echo {conn, data, timeoutMs}` /
 *   `close {conn}`: a long-lived connection, for flows that must survive a
 *   policy change;
 * - `udp {host, port, data, timeoutMs}`: one UDP request and its answer;
 * - `forward {socket, host, port}`: a unix socket whose every connection is
 *   piped to `host:port` from this namespace. Unix sockets are reached by
 *   path, not through a network namespace, so the test process (in the root
 *   namespace) reaches a guest's envd the way the node's proxy does: from
 *   "host", at `slotIp:49983`.
 *
 * Outcomes: `ok`, `refused` (a TCP reset: what the slot rules answer
 * denied TCP with), `unreachable` (ICMP unreachable or prohibited),
 * `timeout`, `closed`, `error`. It exits when stdin closes.
 *
 * @module
 */
import { createSocket } from 'node:dgram';
import { createServer, connect, type Socket } from 'node:net';
import { createInterface } from 'node:readline';

type Outcome = 'ok' | 'refused' | 'unreachable' | 'timeout' | 'closed' | 'error';

interface Answer {
  readonly outcome: Outcome;
  readonly text?: string;
  readonly code?: string;
}

const label = process.argv[2] ?? 'agent';
const TIMEOUT = Symbol('timeout');
const conns = new Map<string, { socket: Socket; lines: LineReader }>();

class LineReader {
  #buf = '';
  #waiters: ((line: string | undefined) => void)[] = [];
  #lines: string[] = [];
  #ended = false;

  constructor(socket: Socket) {
    socket.setEncoding('utf8');
    socket.on('data', (d: string) => {
      this.#buf += d;
      let nl: number;
      while ((nl = this.#buf.indexOf('\n')) !== -1) {
        this.#push(this.#buf.slice(0, nl));
        this.#buf = this.#buf.slice(nl + 1);
      }
    });
    const end = (): void => {
      this.#ended = true;
      for (const w of this.#waiters.splice(0)) w(undefined);
    };
    socket.on('close', end);
    socket.on('error', end);
  }

  #push(line: string): void {
    const w = this.#waiters.shift();
    if (w !== undefined) w(line);
    else this.#lines.push(line);
  }

  next(timeoutMs: number): Promise<string | undefined | typeof TIMEOUT> {
    const ready = this.#lines.shift();
    if (ready !== undefined) return Promise.resolve(ready);
    if (this.#ended) return Promise.resolve(undefined);
    return new Promise((resolve) => {
      const waiter = (line: string | undefined): void => {
        clearTimeout(timer);
        resolve(line);
      };
      const timer = setTimeout(() => {
        this.#waiters = this.#waiters.filter((w) => w !== waiter);
        resolve(TIMEOUT);
      }, timeoutMs);
      this.#waiters.push(waiter);
    });
  }
}

const OUTCOME_BY_ERRNO: Readonly<Record<string, Outcome>> = {
  ECONNREFUSED: 'refused',
  EHOSTUNREACH: 'unreachable',
  ENETUNREACH: 'unreachable',
  EACCES: 'unreachable',
  EPERM: 'unreachable',
  ECONNRESET: 'closed',
  EPIPE: 'closed',
};

function classify(err: NodeJS.ErrnoException): Answer {
  const code = err.code ?? err.message;
  return { outcome: OUTCOME_BY_ERRNO[code] ?? 'error', code };
}

function openConnection(
  host: string,
  port: number,
  timeoutMs: number,
): Promise<[Answer, Socket?, LineReader?]> {
  return new Promise((resolve) => {
    const socket = connect({ host, port });
    const lines = new LineReader(socket);
    const timer = setTimeout(() => {
      socket.destroy();
      resolve([{ outcome: 'timeout' }]);
    }, timeoutMs);
    socket.once('error', (err) => {
      clearTimeout(timer);
      resolve([classify(err)]);
    });
    socket.once('connect', () => {
      void lines.next(timeoutMs).then((greeting) => {
        clearTimeout(timer);
        if (greeting === TIMEOUT) resolve([{ outcome: 'timeout' }]);
        else if (greeting === undefined) resolve([{ outcome: 'closed' }]);
        else resolve([{ outcome: 'ok', text: greeting }, socket, lines]);
      });
    });
  });
}

async function echo(conn: string, data: string, timeoutMs: number): Promise<Answer> {
  const c = conns.get(conn);
  if (c === undefined) return { outcome: 'error', code: 'no such connection' };
  if (c.socket.destroyed) return { outcome: 'closed' };
  c.socket.write(`${data}\n`);
  const line = await c.lines.next(timeoutMs);
  if (line === TIMEOUT) return { outcome: 'timeout' };
  if (line === undefined) return { outcome: 'closed' };
  return { outcome: 'ok', text: line };
}

function udp(host: string, port: number, data: string, timeoutMs: number): Promise<Answer> {
  return new Promise((resolve) => {
    const sock = createSocket('udp4');
    const done = (a: Answer): void => {
      clearTimeout(timer);
      sock.close();
      resolve(a);
    };
    const timer = setTimeout(() => done({ outcome: 'timeout' }), timeoutMs);
    sock.on('message', (msg) => done({ outcome: 'ok', text: msg.toString('utf8') }));
    sock.on('error', (err: NodeJS.ErrnoException) => done(classify(err)));
    sock.send(data, port, host);
  });
}

function listen(port: number): Promise<Answer> {
  return new Promise((resolve) => {
    const server = createServer((s) => {
      s.on('error', () => undefined);
      s.write(`hello ${label} ${s.remoteAddress ?? '?'}\n`);
      s.pipe(s);
    });
    server.once('error', (err: NodeJS.ErrnoException) => resolve(classify(err)));
    server.listen(port, '0.0.0.0', () => resolve({ outcome: 'ok' }));
  });
}

function listenUdp(port: number, host: string): Promise<Answer> {
  return new Promise((resolve) => {
    const sock = createSocket('udp4');
    sock.on('message', (msg, rinfo) => {
      sock.send(`${label} ${rinfo.address} ${msg.toString('utf8')}`, rinfo.port, rinfo.address);
    });
    sock.once('error', (err: NodeJS.ErrnoException) => resolve(classify(err)));
    sock.bind(port, host, () => resolve({ outcome: 'ok' }));
  });
}

function forward(socketPath: string, host: string, port: number): Promise<Answer> {
  return new Promise((resolve) => {
    const server = createServer((client) => {
      const upstream = connect({ host, port });
      client.on('error', () => upstream.destroy());
      upstream.on('error', () => client.destroy());
      client.pipe(upstream).pipe(client);
    });
    server.once('error', (err: NodeJS.ErrnoException) => resolve(classify(err)));
    server.listen(socketPath, () => resolve({ outcome: 'ok' }));
  });
}

async function handle(req: Record<string, unknown>): Promise<Answer> {
  const timeoutMs = Number(req['timeoutMs'] ?? 2000);
  const host = String(req['host']);
  const port = Number(req['port']);
  switch (req['op']) {
    case 'listen':
      return listen(port);
    case 'listenUdp':
      // A UDP server bound to 0.0.0.0 answers from the address routing picks,
      // not the one the query went to; bind the address the test names.
      return listenUdp(port, typeof req['host'] === 'string' ? req['host'] : '0.0.0.0');
    case 'connect': {
      const [answer, socket] = await openConnection(host, port, timeoutMs);
      socket?.destroy();
      return answer;
    }
    case 'open': {
      const [answer, socket, lines] = await openConnection(host, port, timeoutMs);
      if (socket !== undefined && lines !== undefined)
        conns.set(String(req['conn']), { socket, lines });
      return answer;
    }
    case 'echo':
      return echo(String(req['conn']), String(req['data']), timeoutMs);
    case 'close':
      conns.get(String(req['conn']))?.socket.destroy();
      conns.delete(String(req['conn']));
      return { outcome: 'ok' };
    case 'forward':
      return forward(String(req['socket']), host, port);
    case 'udp':
      return udp(host, port, String(req['data']), timeoutMs);
    default:
      return { outcome: 'error', code: `unknown op ${String(req['op'])}` };
  }
}

const rl = createInterface({ input: process.stdin });
rl.on('line', (line) => {
  const req = JSON.parse(line) as Record<string, unknown>;
  void handle(req).then((answer) => {
    process.stdout.write(JSON.stringify({ id: req['id'], ...answer }) + '\n');
  });
});
rl.on('close', () => process.exit(0));
process.stdout.write(JSON.stringify({ id: 0, outcome: 'ok', text: `ready ${label}` }) + '\n');
