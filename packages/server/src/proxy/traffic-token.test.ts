import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { trafficAuthorizer } from './traffic-token.js';

describe('trafficAuthorizer', () => {
  const check = trafficAuthorizer((id) => (id === 'private' ? 'secret-token' : undefined));

  it('lets public sandboxes and envd traffic through without a token', () => {
    check({ sandboxId: 'public', port: 3000 }, {});
    check({ sandboxId: 'private', port: 49983 }, {});
  });

  it('demands the exact token on the other ports of a private sandbox', () => {
    check({ sandboxId: 'private', port: 3000 }, { 'e2b-traffic-access-token': 'secret-token' });
    for (const given of [undefined, '', 'secret-toke', 'secret-tokenx', 'SECRET-TOKEN']) {
      assert.throws(
        () =>
          check(
            { sandboxId: 'private', port: 3000 },
            given === undefined ? {} : { 'e2b-traffic-access-token': given },
          ),
        { code: 'PROXY_TRAFFIC_TOKEN_INVALID' },
        String(given),
      );
    }
  });
});
