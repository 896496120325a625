/**
 * Tests of egress rule entries: parsing, canonical form, checks.
 *
 * @module
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { AenvError } from '@aenv/shared';
import {
  MAX_EGRESS_ENTRIES,
  checkEgressPolicy,
  formatEgressTarget,
  parseEgressList,
  parseEgressTarget,
} from './egress-policy.js';

function code(fn: () => unknown): string {
  try {
    fn();
  } catch (err) {
    assert.ok(err instanceof AenvError, String(err));
    return err.code;
  }
  assert.fail('expected an error');
}

describe('parseEgressTarget', () => {
  it('canonicalises addresses, CIDRs and port ranges', () => {
    assert.deepEqual(parseEgressTarget('8.8.8.8', 'f'), { cidr: '8.8.8.8/32' });
    assert.deepEqual(parseEgressTarget('10.1.2.3/8', 'f'), { cidr: '10.0.0.0/8' });
    assert.deepEqual(parseEgressTarget('1.1.1.1:443', 'f'), {
      cidr: '1.1.1.1/32',
      ports: { first: 443, last: 443 },
    });
    assert.deepEqual(parseEgressTarget('8.8.8.0/24:53-443', 'f'), {
      cidr: '8.8.8.0/24',
      ports: { first: 53, last: 443 },
    });
  });

  it('refuses domains and IPv6 as unsupported, naming the field', () => {
    for (const v of ['*.pypi.org', 'example.com', 'google.com:443']) {
      assert.equal(
        code(() => parseEgressTarget(v, 'network.allowOut[0]')),
        'NET_POLICY_UNSUPPORTED',
        v,
      );
    }
    assert.equal(
      code(() => parseEgressTarget('::/0', 'f')),
      'NET_POLICY_UNSUPPORTED',
    );
    assert.equal(
      code(() => parseEgressTarget('[2001:db8::1]:443', 'f')),
      'NET_POLICY_UNSUPPORTED',
    );
    try {
      parseEgressTarget('*.pypi.org', 'network.allowOut[3]');
    } catch (err) {
      assert.match(
        (err as Error).message,
        /^network\.allowOut\[3\]: domain rules are not supported yet/,
      );
      assert.equal((err as AenvError).fields['field'], 'network.allowOut[3]');
    }
  });

  it('rejects malformed entries as invalid', () => {
    for (const v of [
      42,
      '',
      'not-a-cidr',
      '1.2.3',
      '1.2.3.4/33',
      '1.2.3.4:0',
      '1.2.3.4:70000',
      '1.2.3.4:9-8',
      '1.2.3.4:x',
      '300.1.1.1',
    ]) {
      assert.equal(
        code(() => parseEgressTarget(v, 'f')),
        'NET_POLICY_INVALID',
        String(v),
      );
    }
  });

  it('formats entries the way clients write them', () => {
    for (const v of ['1.1.1.1', '10.0.0.0/8', '1.1.1.1:443', '8.8.8.0/24:53-443', '0.0.0.0/0']) {
      assert.equal(formatEgressTarget(parseEgressTarget(v, 'f')), v);
    }
  });
});

describe('parseEgressList', () => {
  it('treats absent as empty, drops duplicates, and checks the type and size', () => {
    assert.deepEqual(parseEgressList(undefined, 'f'), []);
    assert.deepEqual(parseEgressList(null, 'f'), []);
    assert.deepEqual(parseEgressList(['1.1.1.1', '1.1.1.1/32', '1.1.1.1:53'], 'f'), [
      { cidr: '1.1.1.1/32' },
      { cidr: '1.1.1.1/32', ports: { first: 53, last: 53 } },
    ]);
    assert.equal(
      code(() => parseEgressList('1.1.1.1', 'f')),
      'NET_POLICY_INVALID',
    );
    const many = Array.from({ length: MAX_EGRESS_ENTRIES + 1 }, () => '1.1.1.1');
    assert.equal(
      code(() => parseEgressList(many, 'f')),
      'NET_POLICY_INVALID',
    );
  });

  it('names the offending index', () => {
    try {
      parseEgressList(['1.1.1.1', 'bad'], 'denyOut');
      assert.fail('expected an error');
    } catch (err) {
      assert.match((err as Error).message, /^denyOut\[1\]:/);
    }
  });
});

describe('checkEgressPolicy', () => {
  it('accepts canonical policies and rejects hand-built bad ones', () => {
    const ok = { allowInternetAccess: false, allowOut: [{ cidr: '1.1.1.1/32' }], denyOut: [] };
    assert.equal(checkEgressPolicy(ok), ok);
    const bad = [
      { ...ok, allowOut: [{ cidr: '1.1.1.1' }] },
      { ...ok, allowOut: [{ cidr: '10.1.0.0/8' }] },
      { ...ok, denyOut: [{ cidr: '1.1.1.1/32', ports: { first: 0, last: 1 } }] },
      { ...ok, allowInternetAccess: 'yes' },
      { ...ok, denyOut: 'x' },
    ];
    for (const p of bad)
      assert.equal(
        code(() => checkEgressPolicy(p as never)),
        'NET_POLICY_INVALID',
      );
  });
});
