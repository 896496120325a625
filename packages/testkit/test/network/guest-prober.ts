/**
 * Connection attempts made INSIDE a real guest: a small script run by the
 * guest's own node (from the tools drive, `guestNode()`) through envd,
 * which tries every (address, port) of a plan at once (bounded
 * concurrency, a short timeout each) and prints one JSON answer. TCP: a
 * `connect()`; `ok` means the handshake completed. UDP: a datagram sent
 * from a connected socket; `ok` means something answered, `refused` or
 * `unreachable` an ICMP error came back, `timeout` nothing did (for UDP
 * only a service that answers can prove reachability, hence the echo
 * canaries of the suite).
 *
 * The plan is sent as the cross product of hosts and ports per protocol,
 * plus single targets, so it stays far below the kernel's limit on one
 * argument however many listeners the host has.
 *
 * @module
 */
import { guestNode } from '../../src/index.js';
import type { NodeDaemon } from './node-daemon.js';

/** What to try from the guest. */
export interface ProbePlan {
  readonly tcp: { readonly hosts: readonly string[]; readonly ports: readonly number[] };
  readonly udp: { readonly hosts: readonly string[]; readonly ports: readonly number[] };
  /** Single targets besides the products (positive controls, guest to guest). */
  readonly extra: readonly ProbeTarget[];
}

/** One attempt. */
export interface ProbeTarget {
  readonly proto: 'tcp' | 'udp';
  readonly host: string;
  readonly port: number;
}

/** One attempt's result. */
export interface ProbeResult extends ProbeTarget {
  readonly outcome: 'ok' | 'refused' | 'unreachable' | 'timeout' | 'error';
  readonly code?: string;
}

// Runs in the guest as `node -e SCRIPT <plan base64> <timeout ms> <concurrency>` (CommonJS).
const SCRIPT = String.raw`
const net = require('node:net');
const dgram = require('node:dgram');
const [planB64, timeoutArg, concArg] = process.argv.slice(1);
const plan = JSON.parse(Buffer.from(planB64, 'base64').toString());
const timeoutMs = Number(timeoutArg);
const targets = [...plan.extra];
for (const proto of ['tcp', 'udp'])
  for (const host of plan[proto].hosts)
    for (const port of plan[proto].ports) targets.push({ proto, host, port });
const kind = (e) =>
  e.code === 'ECONNREFUSED' ? 'refused'
  : ['EHOSTUNREACH', 'ENETUNREACH', 'EACCES', 'EPERM'].includes(e.code) ? 'unreachable'
  : 'error';
function attempt(t) {
  return new Promise((resolve) => {
    let done = false;
    let sock;
    const finish = (outcome, code) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      try { sock.destroy ? sock.destroy() : sock.close(); } catch {}
      resolve({ ...t, outcome, ...(code ? { code } : {}) });
    };
    const timer = setTimeout(() => finish('timeout'), timeoutMs);
    if (t.proto === 'tcp') {
      sock = net.connect({ host: t.host, port: t.port });
      sock.once('connect', () => finish('ok'));
      sock.once('error', (e) => finish(kind(e), e.code));
    } else {
      sock = dgram.createSocket('udp4');
      sock.once('message', () => finish('ok'));
      sock.once('error', (e) => finish(kind(e), e.code));
      sock.connect(t.port, t.host, () =>
        sock.send('aenv-probe', (e) => e && finish(kind(e), e.code)));
    }
  });
}
(async () => {
  const out = [];
  let next = 0;
  await Promise.all(Array.from({ length: Number(concArg) }, async () => {
    while (next < targets.length) out.push(await attempt(targets[next++]));
  }));
  process.stdout.write(JSON.stringify(out));
})();
`;

/** How many attempts are in flight at once inside the guest, and each one's limit. */
const CONCURRENCY = 128;
const TIMEOUT_MS = 3000;

/**
 * Runs `plan` inside sandbox `id` and returns every attempt's result.
 * @throws {Error} when the script did not run or answered nothing.
 */
export async function probeFromGuest(
  node: NodeDaemon,
  id: string,
  plan: ProbePlan,
): Promise<ProbeResult[]> {
  const [cmd, ...args] = guestNode();
  const payload = Buffer.from(JSON.stringify(plan)).toString('base64');
  const r = await node.run(id, cmd ?? '', [
    ...args,
    '-e',
    SCRIPT,
    payload,
    String(TIMEOUT_MS),
    String(CONCURRENCY),
  ]);
  if (r.exitCode !== 0 || r.stdout === '') {
    throw new Error(`prober in ${id}: exit ${r.exitCode}: ${r.stderr.slice(0, 500)}`);
  }
  return JSON.parse(r.stdout) as ProbeResult[];
}

/**
 * Starts a TCP listener on `port` (all addresses) inside sandbox `id` that
 * greets every connection, left running in the background.
 */
export async function startGuestListener(
  node: NodeDaemon,
  id: string,
  port: number,
): Promise<void> {
  const server = `require('node:net').createServer((s) => s.end('guest\\n')).listen(${port})`;
  const script = 'nohup "$@" >/dev/null 2>&1 & sleep 1; echo started';
  const r = await node.run(id, '/bin/bash', ['-c', script, 'listen', ...guestNode(), '-e', server]);
  if (r.exitCode !== 0) throw new Error(`guest listener in ${id}: ${r.stderr}`);
}
