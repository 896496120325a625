// A real S3-compatible server (s3rver) for tests: listens on 127.0.0.1 on
// an ephemeral port, keeps its objects in a temporary directory, and is
// stopped (connections closed, directory removed) by `stop()`.
// `serviceEndpoint` makes virtual-host-style requests to
// `<bucket>.s3.aenv.test` work; `vhostAgent()` resolves those names to
// 127.0.0.1, so no request ever leaves the loopback interface.
import { Agent } from 'node:http';
import type { LookupFunction } from 'node:net';
import S3rver from 's3rver';
import { tempDir } from './tmp.js';

export const S3_BUCKET = 'aenv-test';
export const S3_CREDENTIALS = { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' };
const SERVICE_DOMAIN = 'aenv.test';

export interface S3Server {
  /** Path-style endpoint, `http://127.0.0.1:<port>`. */
  readonly endpoint: string;
  /** Virtual-host-style endpoint, `http://s3.aenv.test:<port>`. */
  readonly vhostEndpoint: string;
  stop(): Promise<void>;
}

export async function startS3Server(): Promise<S3Server> {
  const dir = await tempDir('aenv-s3rver-');
  const server = new S3rver({
    address: '127.0.0.1',
    port: 0,
    silent: true,
    directory: dir.path,
    serviceEndpoint: SERVICE_DOMAIN,
    configureBuckets: [{ name: S3_BUCKET, configs: [] }],
  });
  const { port } = await server.run();
  return {
    endpoint: `http://127.0.0.1:${port}`,
    vhostEndpoint: `http://s3.${SERVICE_DOMAIN}:${port}`,
    stop: async () => {
      const http = (server as unknown as { httpServer?: { closeAllConnections(): void } })
        .httpServer;
      http?.closeAllConnections();
      await server.close();
      await dir.remove();
    },
  };
}

/** An HTTP agent that resolves `*.aenv.test` (and only that) to 127.0.0.1, recording the names. */
export function vhostAgent(seen: string[] = []): Agent {
  const lookup: LookupFunction = (hostname, options, callback) => {
    seen.push(hostname);
    if (!hostname.endsWith(`.${SERVICE_DOMAIN}`)) {
      callback(new Error(`test agent resolves only *.${SERVICE_DOMAIN}, not ${hostname}`), '', 4);
      return;
    }
    if (options.all === true) {
      (callback as unknown as (e: null, a: { address: string; family: number }[]) => void)(null, [
        { address: '127.0.0.1', family: 4 },
      ]);
      return;
    }
    callback(null, '127.0.0.1', 4);
  };
  return new Agent({ keepAlive: true, lookup });
}
