/**
 * Tests of slot names and addresses.
 *
 * @module
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { formatCidr, parseCidr, type Cidr } from './ipv4.js';
import { SlotAddressing } from './slot-addressing.js';

const addressing = new SlotAddressing({
  prefix: 'aenv',
  addressPool: parseCidr('10.200.0.0/16') as Cidr,
});

describe('SlotAddressing', () => {
  it('gives slot i the i-th /30 of the pool: .1 host end, .2 slot address', () => {
    assert.deepEqual(
      { ...addressing.addresses(0), subnet: formatCidr(addressing.addresses(0).subnet) },
      { subnet: '10.200.0.0/30', hostIp: '10.200.0.1', slotIp: '10.200.0.2' },
    );
    const last = addressing.addresses(16383);
    assert.equal(formatCidr(last.subnet), '10.200.255.252/30');
    assert.equal(last.slotIp, '10.200.255.254');
  });

  it('names objects after the prefix and index, within the interface name limit', () => {
    assert.equal(addressing.netnsName(7), 'aenv-7');
    assert.equal(addressing.netnsPath(7), '/run/netns/aenv-7');
    assert.equal(addressing.hostInterface(7), 'aenv-v7');
    assert.equal(addressing.tableName, 'aenv_slots');
    assert.equal(addressing.interfaceGlob, 'aenv-v*');
    const longest = new SlotAddressing({
      prefix: 'abcdefgh',
      addressPool: parseCidr('10.0.0.0/16') as Cidr,
    });
    assert.ok(longest.hostInterface(16383).length <= 15);
  });

  it('parses back only its own names', () => {
    assert.equal(addressing.indexOfNetns('aenv-12'), 12);
    assert.equal(addressing.indexOfInterface('aenv-v12'), 12);
    for (const other of ['aenv2-12', 'aenv-v12', 'aenv-012', 'aenv-', 'xaenv-1', 'aenv-1x']) {
      assert.equal(addressing.indexOfNetns(other), undefined, other);
    }
    for (const other of ['aenv-12', 'aenv2-v1', 'aenv-v', 'aenv-v01']) {
      assert.equal(addressing.indexOfInterface(other), undefined, other);
    }
  });
});
