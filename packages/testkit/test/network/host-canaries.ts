/**
 * Canary listeners on the host for the host surface suite: a TCP greeter
 * and a UDP echo on 0.0.0.0 (what a careless service on the host would
 * bind) and a TCP greeter on each given address (the slot gateways, the
 * addresses closest to a guest). Each greets with `canary\n` (UDP: echoes
 * the datagram), so a probe that reaches one is unmistakable, and the host
 * itself checks that each answers (the positive control).
 *
 * @module
 */
import { createSocket, type Socket as UdpSocket } from 'node:dgram';
import { once } from 'node:events';
import { connect, createServer, type AddressInfo, type Server } from 'node:net';

const GREETING = 'canary\n';

/**
 * Connects to `host:port`, reads until the peer closes (at most 3 s) and
 * returns what it sent, or `error:<code>`.
 */
export function readGreeting(host: string, port: number): Promise<string> {
  return new Promise((resolve) => {
    let data = '';
    const sock = connect({ host, port });
    const timer = setTimeout(() => finish('error:timeout'), 3000);
    const finish = (v: string): void => {
      clearTimeout(timer);
      sock.destroy();
      resolve(v);
    };
    sock.setEncoding('utf8');
    sock.on('data', (d: string) => (data += d));
    sock.once('end', () => finish(data));
    sock.once('error', (e: NodeJS.ErrnoException) => finish(`error:${e.code ?? e.message}`));
  });
}

async function greeter(host: string): Promise<Server> {
  const server = createServer((s) => s.end(GREETING));
  server.listen(0, host);
  await once(server, 'listening');
  return server;
}

const portOf = (s: Server): number => (s.address() as AddressInfo).port;

/** The open canaries. */
export class Canaries {
  readonly #any: Server;
  readonly #udp: UdpSocket;
  readonly #onAddress: ReadonlyMap<string, Server>;

  private constructor(any: Server, udp: UdpSocket, onAddress: Map<string, Server>) {
    this.#any = any;
    this.#udp = udp;
    this.#onAddress = onAddress;
  }

  /** Opens the 0.0.0.0 canaries and one TCP canary on each of `addresses`. */
  static async open(addresses: readonly string[]): Promise<Canaries> {
    const udp = createSocket('udp4');
    udp.on('message', (msg, from) => udp.send(msg, from.port, from.address));
    udp.bind(0, '0.0.0.0');
    await once(udp, 'listening');
    const onAddress = new Map<string, Server>();
    const canaries = new Canaries(await greeter('0.0.0.0'), udp, onAddress);
    try {
      for (const a of addresses) onAddress.set(a, await greeter(a));
    } catch (err) {
      await canaries.close();
      throw err;
    }
    return canaries;
  }

  /** Every TCP canary's port. */
  tcpPorts(): number[] {
    return [portOf(this.#any), ...[...this.#onAddress.values()].map(portOf)];
  }

  /** The UDP echo's port. */
  udpPort(): number {
    return this.#udp.address().port;
  }

  /** Asserts (throws) that the host itself reaches every canary where it listens. */
  async assertReachableFromHost(): Promise<void> {
    const checks: [string, number][] = [['127.0.0.1', portOf(this.#any)]];
    for (const [a, s] of this.#onAddress) checks.push([a, portOf(s)], [a, portOf(this.#any)]);
    for (const [host, port] of checks) {
      const got = await readGreeting(host, port);
      if (got !== GREETING) throw new Error(`host -> canary ${host}:${port}: ${got}`);
    }
    const client = createSocket('udp4');
    try {
      client.send('ping', this.udpPort(), '127.0.0.1');
      const timer = setTimeout(() => client.emit('error', new Error('no echo in 3 s')), 3000);
      const [msg] = (await once(client, 'message')) as [Buffer];
      clearTimeout(timer);
      if (msg.toString() !== 'ping') throw new Error(`UDP canary echoed ${msg.toString()}`);
    } finally {
      client.close();
    }
  }

  /** Closes every canary. */
  async close(): Promise<void> {
    const servers = [this.#any, ...this.#onAddress.values()];
    await Promise.all(servers.map((s) => new Promise((resolve) => s.close(resolve))));
    this.#udp.close();
  }
}
