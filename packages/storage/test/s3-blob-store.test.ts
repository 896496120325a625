// The S3 backend against a real S3-compatible server (s3rver) on loopback:
// the shared conformance suite, path-style and virtual-host-style, with
// multipart uploads exercised (5 MiB parts).
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { NodeHttpHandler } from '@smithy/node-http-handler';
import { S3BlobStore } from '../src/blob/s3-blob-store.js';
import { runBlobStoreSuite } from '../src/testing/blob-store-suite.js';
import {
  S3_BUCKET,
  S3_CREDENTIALS,
  startS3Server,
  vhostAgent,
  type S3Server,
} from './helpers/s3-server.js';

let server: S3Server;
before(async () => (server = await startS3Server()));
after(async () => server.stop());

runBlobStoreSuite({
  name: 'S3BlobStore, path-style',
  create: () =>
    Promise.resolve(
      new S3BlobStore({
        bucket: S3_BUCKET,
        prefix: `${randomUUID()}/`,
        endpoint: server.endpoint,
        credentials: S3_CREDENTIALS,
        partSize: 5 << 20,
      }),
    ),
});

runBlobStoreSuite({
  name: 'S3BlobStore, virtual-host-style',
  create: () =>
    Promise.resolve(
      new S3BlobStore({
        bucket: S3_BUCKET,
        prefix: `${randomUUID()}/`,
        endpoint: server.vhostEndpoint,
        forcePathStyle: false,
        credentials: S3_CREDENTIALS,
        partSize: 5 << 20,
        clientConfig: { requestHandler: new NodeHttpHandler({ httpAgent: vhostAgent() }) },
      }),
    ),
});

describe('S3BlobStore specifics', () => {
  it('virtual-host-style requests name the bucket in the host', async () => {
    const seen: string[] = [];
    const store = new S3BlobStore({
      bucket: S3_BUCKET,
      endpoint: server.vhostEndpoint,
      forcePathStyle: false,
      credentials: S3_CREDENTIALS,
      clientConfig: { requestHandler: new NodeHttpHandler({ httpAgent: vhostAgent(seen) }) },
    });
    try {
      await store.put('vhost/probe', Buffer.from('x'));
      assert.equal((await store.getRange('vhost/probe', 0, 1)).toString(), 'x');
      assert.ok(seen.includes(`${S3_BUCKET}.s3.aenv.test`), seen.join(','));
    } finally {
      await store.close();
    }
  });

  it('maps an unreachable endpoint to BLOB_STORE_UNAVAILABLE', async () => {
    // Port 9 on loopback: nothing listens there, so the connection is refused at once.
    const store = new S3BlobStore({
      bucket: S3_BUCKET,
      endpoint: 'http://127.0.0.1:9',
      credentials: S3_CREDENTIALS,
      clientConfig: { maxAttempts: 1 },
    });
    try {
      await assert.rejects(store.head('x'), { code: 'BLOB_STORE_UNAVAILABLE' });
    } finally {
      await store.close();
    }
  });

  it('a missing bucket is BLOB_STORE_UNAVAILABLE, not a missing blob', async () => {
    const store = new S3BlobStore({
      bucket: 'no-such-bucket',
      endpoint: server.endpoint,
      credentials: S3_CREDENTIALS,
    });
    try {
      await assert.rejects(store.put('k', Buffer.from('x')), { code: 'BLOB_STORE_UNAVAILABLE' });
      await assert.rejects(store.get('k'), { code: 'BLOB_STORE_UNAVAILABLE' });
    } finally {
      await store.close();
    }
  });
});
