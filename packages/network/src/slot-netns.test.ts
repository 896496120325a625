/**
 * Tests of the scripts run inside slot namespaces.
 *
 * @module
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { GATEWAY_MAC, GUEST_IP, guestKernelArgs, guestNetworkParams } from './guest-network.js';
import { parseCidr, type Cidr } from './ipv4.js';
import { SlotAddressing } from './slot-addressing.js';
import {
  renderSlotNetnsEnsure,
  renderSlotNetnsRules,
  renderSlotNetnsScrub,
  renderSlotNetnsSetup,
} from './slot-netns.js';

const addressing = new SlotAddressing({
  prefix: 'aenv',
  addressPool: parseCidr('10.200.0.0/16') as Cidr,
});

describe('slot netns scripts', () => {
  it('configures veth0 with the slot address, tap0 with the gateway, and forwarding', () => {
    const text = renderSlotNetnsSetup(addressing.addresses(2), '198.51.100.53');
    assert.ok(text.startsWith('set -e\necho 1 > /proc/sys/net/ipv4/ip_forward'));
    for (const line of [
      'addr replace 10.200.0.10/30 dev veth0',
      'route replace default via 10.200.0.9 dev veth0',
      'tuntap add dev tap0 mode tap',
      `link set tap0 address ${GATEWAY_MAC}`,
      'addr add 169.254.100.1/30 dev tap0',
    ]) {
      assert.ok(text.includes(`\n${line}\n`), line);
    }
  });

  it('uses the same rules in every slot: DNAT to the guest, masquerade out, DNS to the resolver', () => {
    const rules = renderSlotNetnsRules('198.51.100.53');
    assert.match(rules, new RegExp(`iifname "veth0" dnat to ${GUEST_IP.replace(/\./g, '\\.')}`));
    assert.match(rules, /oifname "veth0" masquerade/);
    assert.match(rules, /th dport 53 dnat to 198\.51\.100\.53/);
    assert.match(rules, /ip saddr 169\.254\.100\.2 accept/);
    assert.doesNotMatch(renderSlotNetnsRules(undefined), /dport 53/);
    assert.doesNotMatch(rules, /10\.200\./);
  });

  it('scrubs with a fresh tap, and ensures without recreating the tap', () => {
    const scrub = renderSlotNetnsScrub();
    assert.ok(scrub.startsWith('ip link del tap0'));
    assert.match(scrub, /tuntap add dev tap0 mode tap/);
    assert.match(scrub, /conntrack -F/);
    const ensure = renderSlotNetnsEnsure(addressing.addresses(2), undefined);
    assert.match(ensure, /ip link show tap0/);
    assert.doesNotMatch(ensure, /tuntap add/);
  });

  it('tells the guest its fixed address plan on the kernel command line', () => {
    assert.deepEqual(guestKernelArgs(), [
      'aenv.ip=169.254.100.2/30',
      'aenv.gw=169.254.100.1',
      'aenv.dns=169.254.100.1',
    ]);
    assert.deepEqual(guestNetworkParams(), {
      address: '169.254.100.2/30',
      gateway: '169.254.100.1',
      dns: ['169.254.100.1'],
    });
  });
});
