/**
 * Tests of the rendered host-side nftables scripts. (The integration suites
 * in `test/` load them into a real kernel.)
 *
 * @module
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseEgressList, type EgressPolicy } from './egress-policy.js';
import {
  renderHostTable,
  renderSlotAdd,
  renderSlotDelete,
  renderSlotPolicy,
  renderTableDelete,
} from './host-ruleset.js';
import { parseCidr, type Cidr } from './ipv4.js';
import { SlotAddressing } from './slot-addressing.js';

const pool = parseCidr('10.200.0.0/16') as Cidr;
const addressing = new SlotAddressing({ prefix: 'aenv', addressPool: pool });
const input = {
  addressing,
  addressPool: pool,
  allowPrivateRanges: [parseCidr('10.99.0.0/16') as Cidr],
  deniedRanges: [parseCidr('203.0.113.0/24') as Cidr],
  dnsServer: '192.168.1.1',
};

function policy(allow: string[], deny: string[], allowInternetAccess = true): EgressPolicy {
  return {
    allowInternetAccess,
    allowOut: parseEgressList(allow, 'a'),
    denyOut: parseEgressList(deny, 'd'),
  };
}

describe('renderHostTable', () => {
  const text = renderHostTable(input, [{ index: 3, policy: policy(['1.1.1.1'], []) }]);

  it('replaces the whole table atomically', () => {
    assert.ok(
      text.startsWith(
        'table inet aenv_slots\ndelete table inet aenv_slots\ntable inet aenv_slots {',
      ),
    );
  });

  it('denies the pool, loopback, link-local and the operator ranges before anything else', () => {
    const denied = /set always_denied \{[^}]*elements = \{ ([^}]*) \}/.exec(text)?.[1] ?? '';
    for (const r of [
      '0.0.0.0-0.255.255.255',
      '10.200.0.0-10.200.255.255',
      '127.0.0.0-127.255.255.255',
      '169.254.0.0-169.254.255.255',
      '203.0.113.0-203.0.113.255',
      '224.0.0.0-255.255.255.255',
    ]) {
      assert.ok(denied.includes(r), `${r} in ${denied}`);
    }
    assert.match(text, /set private_allowed \{[^}]*10\.99\.0\.0-10\.99\.255\.255/);
  });

  it('evaluates DNS, then always-denied, then private, then the slot chain', () => {
    const egress = text.slice(text.indexOf('chain egress'), text.indexOf('chain ingress'));
    const order = [
      'meta nfproto ipv6 drop',
      'fib saddr . iif oif missing drop',
      'ip daddr 192.168.1.1 meta l4proto { tcp, udp } th dport 53 accept',
      'ip daddr @always_denied goto deny',
      'ip daddr @private_allowed iifname vmap @slot_policy',
      'ip daddr @private goto deny',
      '\n    iifname vmap @slot_policy',
    ].map((s) => egress.indexOf(s));
    assert.ok(
      order.every((i) => i >= 0),
      String(order),
    );
    assert.deepEqual(
      [...order].sort((a, b) => a - b),
      order,
    );
  });

  it('masquerades what slots send elsewhere and shields the host and the slots', () => {
    assert.match(text, /iifname "aenv-v\*" oifname != "aenv-v\*" masquerade/);
    assert.match(text, /chain from_slot \{ ct state established,related accept; goto deny/);
    assert.match(text, /chain ingress \{ ct state established,related accept; goto deny/);
    assert.match(
      text,
      /chain deny \{\n {4}meta l4proto tcp reject with tcp reset\n {4}reject with icmpx type admin-prohibited/,
    );
  });

  it('includes the given slots with their policy', () => {
    assert.match(text, /add element inet aenv_slots slot_policy \{ "aenv-v3" : jump s3 \}/);
    assert.match(text, /add element inet aenv_slots a3 \{ 1\.1\.1\.1 \}/);
  });
});

describe('slot scripts', () => {
  it('adds an empty chain (deny by fall-through) and its map entry', () => {
    const text = renderSlotAdd(addressing, 5);
    assert.match(text, /add chain inet aenv_slots s5/);
    assert.match(text, /slot_policy \{ "aenv-v5" : jump s5 \}/);
    assert.doesNotMatch(text, /add rule/);
  });

  it('renders allow before deny before the base, with merged sets and port rules', () => {
    const text = renderSlotPolicy(
      addressing,
      5,
      policy(['8.8.8.8', '8.8.8.0/24', '1.1.1.1:443'], ['0.0.0.0/0', '9.9.9.9:53-54'], false),
    );
    const lines = text.trim().split('\n');
    assert.deepEqual(lines.slice(0, 3), [
      'flush chain inet aenv_slots s5',
      'flush set inet aenv_slots a5',
      'flush set inet aenv_slots d5',
    ]);
    assert.ok(lines.includes('add element inet aenv_slots a5 { 8.8.8.0-8.8.8.255 }'));
    assert.ok(lines.includes('add element inet aenv_slots d5 { 0.0.0.0-255.255.255.255 }'));
    const rules = lines.filter((l) => l.startsWith('add rule'));
    assert.deepEqual(rules, [
      'add rule inet aenv_slots s5 ip daddr @a5 accept',
      'add rule inet aenv_slots s5 ip daddr 1.1.1.1/32 meta l4proto { tcp, udp } th dport 443 accept',
      'add rule inet aenv_slots s5 ip daddr @d5 goto deny',
      'add rule inet aenv_slots s5 ip daddr 9.9.9.9/32 meta l4proto { tcp, udp } th dport 53-54 goto deny',
      'add rule inet aenv_slots s5 goto deny',
    ]);
  });

  it('only adds when the slot is pristine', () => {
    const text = renderSlotPolicy(addressing, 5, policy([], []), true);
    assert.doesNotMatch(text, /flush|delete/);
    assert.match(text, /add rule inet aenv_slots s5 accept\n$/);
  });

  it('deletes idempotently (adds each object before deleting it)', () => {
    const lines = renderSlotDelete(addressing, 5).split('\n');
    const add = lines.indexOf('add chain inet aenv_slots s5');
    const del = lines.indexOf('delete chain inet aenv_slots s5');
    assert.ok(add >= 0 && del > add);
    assert.ok(lines.indexOf('delete element inet aenv_slots slot_policy { "aenv-v5" }') < del);
    assert.equal(
      renderTableDelete(addressing),
      'table inet aenv_slots\ndelete table inet aenv_slots\n',
    );
  });
});
