/**
 * Tests of the host-side link and conntrack scripts.
 *
 * @module
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  renderConntrackScrub,
  renderHostBuild,
  renderLinkDestroy,
  renderNetnsDestroy,
} from './host-links.js';
import { subnetsIn } from './host-network.js';
import { formatCidr, parseCidr, type Cidr } from './ipv4.js';
import { SlotAddressing } from './slot-addressing.js';

const addressing = new SlotAddressing({
  prefix: 'aenv',
  addressPool: parseCidr('10.200.0.0/16') as Cidr,
});

describe('host link scripts', () => {
  it('builds netns and veth per slot in one batch', () => {
    assert.equal(
      renderHostBuild(addressing, [0, 1]),
      [
        'netns add aenv-0',
        'link add aenv-v0 type veth peer name veth0 netns aenv-0',
        'link set aenv-v0 up',
        'addr add 10.200.0.1/30 dev aenv-v0',
        'netns add aenv-1',
        'link add aenv-v1 type veth peer name veth0 netns aenv-1',
        'link set aenv-v1 up',
        'addr add 10.200.0.5/30 dev aenv-v1',
        '',
      ].join('\n'),
    );
    assert.equal(renderNetnsDestroy(addressing, [3]), 'netns del aenv-3\n');
    assert.equal(renderLinkDestroy(addressing, [3]), 'link del aenv-v3\n');
  });

  it('scrubs conntrack by network, treating "nothing deleted" as success', () => {
    const text = renderConntrackScrub([parseCidr('10.200.0.4/30') as Cidr]);
    assert.match(text, /ct -D -s 10\.200\.0\.4\/30\nct -D -d 10\.200\.0\.4\/30/);
    assert.match(text, /\*"0 flow entries"\*\) return 0/);
  });

  it('finds the slots a conntrack listing mentions', () => {
    const listing =
      'tcp 6 431999 ESTABLISHED src=10.200.0.6 dst=203.0.113.10 sport=1 dport=2 src=203.0.113.10 dst=192.0.2.1 sport=2 dport=1\n';
    const nets = [0, 1, 2].map((i) => addressing.addresses(i).subnet);
    assert.deepEqual(subnetsIn(listing, nets).map(formatCidr), ['10.200.0.4/30']);
    assert.deepEqual(subnetsIn('', nets), []);
  });
});
