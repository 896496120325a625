/**
 * Tests of the host surface parsers (`host-listeners.ts`) on real `ss` and
 * `ip` output shapes, and of the readers against this host: a listener this
 * test opens on 0.0.0.0 must be among the listed sockets.
 *
 * @module
 */
import assert from 'node:assert/strict';
import { createServer, type AddressInfo } from 'node:net';
import { describe, it } from 'node:test';
import {
  hostIpv4Addresses,
  hostListeners,
  parseIpv4Addresses,
  parseSsListeners,
} from './host-listeners.js';

const SS = [
  'udp   UNCONN 0      0        127.0.0.53%lo:53        0.0.0.0:*    users:(("systemd-resolve",pid=412,fd=13))',
  'udp   UNCONN 0      0              0.0.0.0:68        0.0.0.0:*',
  'tcp   LISTEN 0      128            0.0.0.0:22        0.0.0.0:*    users:(("sshd",pid=1,fd=3),("sshd",pid=9,fd=3))',
  'tcp   LISTEN 0      511          127.0.0.1:39123     0.0.0.0:*',
  'tcp   LISTEN 0      128               [::]:22           [::]:*',
  'tcp   LISTEN 0      4096                 *:8080            *:*',
  'u_str LISTEN 0      4096   /run/x.sock 123 * 0',
].join('\n');

describe('parseSsListeners', () => {
  it('reads proto, address, port and processes of every TCP/UDP listener', () => {
    const l = parseSsListeners(SS);
    assert.deepEqual(
      l.map((x) => `${x.proto} ${x.address} ${x.port} ${x.process}`),
      [
        'udp 127.0.0.53%lo 53 systemd-resolve',
        'udp 0.0.0.0 68 ',
        'tcp 0.0.0.0 22 sshd,sshd',
        'tcp 127.0.0.1 39123 ',
        'tcp [::] 22 ',
        'tcp * 8080 ',
      ],
    );
  });
});

describe('parseIpv4Addresses', () => {
  it('lists every non-loopback address with its device', () => {
    const text = [
      '1: lo    inet 127.0.0.1/8 scope host lo\\       valid_lft forever preferred_lft forever',
      '2: eth0    inet 10.1.2.3/24 brd 10.1.2.255 scope global eth0\\       valid_lft forever',
      '7: aenv-v0@if2    inet 10.200.0.1/30 scope global aenv-v0\\       valid_lft forever',
    ].join('\n');
    assert.deepEqual(parseIpv4Addresses(text), [
      { dev: 'eth0', address: '10.1.2.3' },
      { dev: 'aenv-v0', address: '10.200.0.1' },
    ]);
  });
});

describe('host readers', () => {
  it('list a listener this test opens, and some address', async (t) => {
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, '0.0.0.0', resolve));
    try {
      const port = (server.address() as AddressInfo).port;
      let listeners;
      try {
        listeners = await hostListeners();
      } catch (err) {
        t.skip(`ss is not available: ${String(err)}`);
        return;
      }
      assert.ok(listeners.some((l) => l.proto === 'tcp' && l.port === port));
      assert.ok((await hostIpv4Addresses()).every((a) => !a.address.startsWith('127.')));
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
