import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { matchRoute, type Route } from './router.js';

const ok = () => ({ status: 200 });
const routes: Route[] = [
  { method: 'GET', path: '/sandboxes', handler: ok },
  { method: 'GET', path: '/sandboxes/:id', handler: ok },
  { method: 'POST', path: '/sandboxes/:id/timeout', handler: ok },
];

describe('matchRoute', () => {
  it('matches literal paths and extracts decoded parameters', () => {
    assert.equal(matchRoute(routes, 'GET', '/sandboxes')?.route, routes[0]);
    const m = matchRoute(routes, 'GET', '/sandboxes/ab%20c');
    assert.equal(m?.route, routes[1]);
    assert.deepEqual(m?.params, { id: 'ab c' });
    assert.deepEqual(matchRoute(routes, 'POST', '/sandboxes/x/timeout')?.params, { id: 'x' });
  });

  it('ignores trailing slashes but not extra segments or other methods', () => {
    assert.equal(matchRoute(routes, 'GET', '/sandboxes/')?.route, routes[0]);
    assert.equal(matchRoute(routes, 'GET', '/sandboxes/x/y'), undefined);
    assert.equal(matchRoute(routes, 'DELETE', '/sandboxes/x'), undefined);
    assert.equal(matchRoute(routes, 'GET', '/sandboxes/%E0%A4%A'), undefined);
  });
});
