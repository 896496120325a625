/**
 * Tests of the `network` config section and its semantic checks.
 *
 * @module
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { AenvError, describeConfig, loadConfig } from '@aenv/shared';
import { formatCidr } from './ipv4.js';
import {
  networkConfigSchema,
  resolveNetworkSettings,
  usableNameservers,
  type NetworkConfig,
} from './network-config.js';

const defaults = loadConfig(networkConfigSchema, { env: {} });

function settingsError(overrides: Partial<NetworkConfig>): AenvError {
  try {
    resolveNetworkSettings({ ...defaults, ...overrides });
  } catch (err) {
    assert.ok(err instanceof AenvError);
    assert.equal(err.code, 'CONFIG_INVALID_VALUE');
    return err;
  }
  assert.fail('expected an error');
}

describe('networkConfigSchema', () => {
  it('has documented defaults: a /16 pool, prefix aenv, watermarks 4/16', () => {
    const s = resolveNetworkSettings(defaults);
    assert.equal(s.prefix, 'aenv');
    assert.equal(formatCidr(s.addressPool), '10.200.0.0/16');
    assert.equal(s.capacity, 16384);
    assert.equal(s.poolLow, 4);
    assert.equal(s.poolHigh, 16);
    assert.equal(s.dnsServer, 'auto');
    for (const f of describeConfig(networkConfigSchema)) assert.ok(f.doc.length > 20, f.key);
  });

  it('reads its environment variables', () => {
    const c = loadConfig(networkConfigSchema, {
      env: {
        AENV_NETWORK_PREFIX: 'n2',
        AENV_NETWORK_ADDRESS_POOL: '10.201.0.0/24',
        AENV_NETWORK_POOL_LOW: '1',
        AENV_NETWORK_POOL_HIGH: '2',
        AENV_NETWORK_ALLOW_PRIVATE_RANGES: '10.99.0.0/16, 192.168.5.0/24',
        AENV_NETWORK_DNS_SERVER: 'none',
      },
    });
    const s = resolveNetworkSettings(c);
    assert.equal(s.prefix, 'n2');
    assert.equal(s.capacity, 64);
    assert.deepEqual(s.allowPrivateRanges.map(formatCidr), ['10.99.0.0/16', '192.168.5.0/24']);
    assert.equal(s.dnsServer, 'none');
  });

  it('caps capacity with maxSlots', () => {
    assert.equal(resolveNetworkSettings({ ...defaults, maxSlots: 100 }).capacity, 100);
  });

  it('rejects bad prefixes, pools, watermarks, ranges and DNS servers, naming the key', () => {
    const cases: [Partial<NetworkConfig>, string][] = [
      [{ prefix: 'Aenv' }, 'network.prefix'],
      [{ prefix: 'toolongprefix' }, 'network.prefix'],
      [{ prefix: 'a-b' }, 'network.prefix'],
      [{ addressPool: '10.200.0.1/16' }, 'network.addressPool'],
      [{ addressPool: '10.200.0.0' }, 'network.addressPool'],
      [{ addressPool: '10.0.0.0/8' }, 'network.addressPool'],
      [{ addressPool: '10.0.0.0/30' }, 'network.addressPool'],
      [{ addressPool: '169.254.0.0/16' }, 'network.addressPool'],
      [{ slotPool: { low: 5, high: 4 } }, 'network.slotPool.low'],
      [{ maxSlots: 2, slotPool: { low: 1, high: 3 } }, 'network.slotPool.high'],
      [{ allowPrivateRanges: ['10.0.0.0/33'] }, 'network.allowPrivateRanges'],
      [{ deniedRanges: ['x'] }, 'network.deniedRanges'],
      [{ dnsServer: 'dns.example' }, 'network.dnsServer'],
      [{ dnsServer: '127.0.0.53' }, 'network.dnsServer'],
      [{ dnsServer: '10.200.0.2' }, 'network.dnsServer'],
    ];
    for (const [overrides, key] of cases) {
      assert.equal(settingsError(overrides).fields['key'], key, JSON.stringify(overrides));
    }
  });
});

describe('usableNameservers', () => {
  it('keeps IPv4 nameservers that are not loopback, in order', () => {
    const text =
      '# generated\nnameserver 127.0.0.53\nnameserver 10.0.0.2\nsearch x\nnameserver ::1\n  nameserver 1.1.1.1\n';
    assert.deepEqual(usableNameservers(text), ['10.0.0.2', '1.1.1.1']);
    assert.deepEqual(usableNameservers(''), []);
  });
});
