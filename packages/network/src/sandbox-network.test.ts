/**
 * Tests of the E2B request validation for sandbox networks.
 *
 * @module
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { AenvError, toHttpError } from '@aenv/shared';
import { parseNetworkUpdate, parseSandboxNetwork, toE2bNetwork } from './sandbox-network.js';

function failure(fn: () => unknown): AenvError {
  try {
    fn();
  } catch (err) {
    assert.ok(err instanceof AenvError);
    return err;
  }
  assert.fail('expected an error');
}

describe('parseSandboxNetwork', () => {
  it('defaults to internet access, public traffic and no lists', () => {
    const n = parseSandboxNetwork({ templateID: 'base' });
    assert.deepEqual(n, {
      egress: { allowInternetAccess: true, allowOut: [], denyOut: [] },
      allowPublicTraffic: true,
      maskRequestHost: undefined,
    });
  });

  it('reads allow_internet_access (snake case, as E2B sends it) and the network object', () => {
    const n = parseSandboxNetwork({
      allow_internet_access: false,
      network: {
        allowOut: ['1.1.1.1', '8.8.8.0/24:53'],
        denyOut: ['0.0.0.0/0'],
        allowPublicTraffic: false,
        maskRequestHost: 'localhost:${PORT}',
      },
    });
    assert.equal(n.egress.allowInternetAccess, false);
    assert.deepEqual(n.egress.allowOut, [
      { cidr: '1.1.1.1/32' },
      { cidr: '8.8.8.0/24', ports: { first: 53, last: 53 } },
    ]);
    assert.deepEqual(n.egress.denyOut, [{ cidr: '0.0.0.0/0' }]);
    assert.equal(n.allowPublicTraffic, false);
    assert.equal(n.maskRequestHost, 'localhost:${PORT}');
    assert.deepEqual(toE2bNetwork(n), {
      allowOut: ['1.1.1.1', '8.8.8.0/24:53'],
      denyOut: ['0.0.0.0/0'],
      allowPublicTraffic: false,
      maskRequestHost: 'localhost:${PORT}',
    });
  });

  it('accepts camelCase allowInternetAccess and null values as absent', () => {
    assert.equal(
      parseSandboxNetwork({ allowInternetAccess: false }).egress.allowInternetAccess,
      false,
    );
    assert.equal(
      parseSandboxNetwork({ allow_internet_access: null, network: null }).egress
        .allowInternetAccess,
      true,
    );
  });

  it('answers 400 naming the field for bad input', () => {
    const cases: [Record<string, unknown>, string, string][] = [
      [{ allow_internet_access: 'no' }, 'allow_internet_access', 'NET_POLICY_INVALID'],
      [{ network: [] }, 'network', 'NET_POLICY_INVALID'],
      [{ network: { allowOut: ['x'] } }, 'network.allowOut[0]', 'NET_POLICY_INVALID'],
      [{ network: { denyOut: ['example.com'] } }, 'network.denyOut[0]', 'NET_POLICY_UNSUPPORTED'],
      [
        { network: { allowOut: ['*.pypi.org'], denyOut: ['0.0.0.0/0'] } },
        'network.allowOut[0]',
        'NET_POLICY_UNSUPPORTED',
      ],
      [{ network: { allowPublicTraffic: 1 } }, 'network.allowPublicTraffic', 'NET_POLICY_INVALID'],
      [{ network: { maskRequestHost: 5 } }, 'network.maskRequestHost', 'NET_POLICY_INVALID'],
      [{ network: { rules: { 'a.com': {} } } }, 'network.rules', 'NET_POLICY_UNSUPPORTED'],
      [
        { network: { egressProxy: { address: 'x' } } },
        'network.egressProxy',
        'NET_POLICY_UNSUPPORTED',
      ],
      [{ network: { bogus: 1 } }, 'network.bogus', 'NET_POLICY_INVALID'],
    ];
    for (const [body, field, code] of cases) {
      const err = failure(() => parseSandboxNetwork(body));
      assert.equal(err.code, code, JSON.stringify(body));
      assert.equal(err.fields['field'], field);
      assert.ok(err.message.startsWith(`${field}:`), err.message);
      assert.equal(toHttpError(err).status, 400);
    }
  });

  it('accepts empty unimplemented options (clients send them empty)', () => {
    const n = parseSandboxNetwork({ network: { rules: {}, egressProxy: null, httpsPorts: [] } });
    assert.equal(n.egress.allowInternetAccess, true);
  });
});

describe('parseNetworkUpdate', () => {
  it('replaces the whole policy; absent fields take their defaults', () => {
    assert.deepEqual(parseNetworkUpdate({}), {
      allowInternetAccess: true,
      allowOut: [],
      denyOut: [],
    });
    assert.deepEqual(parseNetworkUpdate(undefined), {
      allowInternetAccess: true,
      allowOut: [],
      denyOut: [],
    });
    assert.deepEqual(parseNetworkUpdate({ allowOut: ['1.1.1.1'], denyOut: ['0.0.0.0/0'] }), {
      allowInternetAccess: true,
      allowOut: [{ cidr: '1.1.1.1/32' }],
      denyOut: [{ cidr: '0.0.0.0/0' }],
    });
    assert.equal(parseNetworkUpdate({ allow_internet_access: false }).allowInternetAccess, false);
  });

  it('names fields without the network. prefix and rejects unknown keys', () => {
    assert.equal(
      failure(() => parseNetworkUpdate({ denyOut: ['1.2.3'] })).fields['field'],
      'denyOut[0]',
    );
    assert.equal(failure(() => parseNetworkUpdate({ allowout: [] })).fields['field'], 'allowout');
    assert.equal(failure(() => parseNetworkUpdate([1])).fields['field'], 'body');
  });
});
