/**
 * The node's connection to the cluster's Redis (`cluster.redisUrl`:
 * `redis://`, `rediss://` or `unix:///path`). Commands fail after two
 * retries while Redis is away instead of queueing: heartbeats and hooks
 * log the failure and try again at their next turn.
 *
 * @module
 */
import { Redis, type RedisOptions } from 'ioredis';
import { AenvError } from '@aenv/shared';

/**
 * Connects and waits for Redis to answer.
 * @throws {AenvError} `CLUSTER_STATE_UNAVAILABLE`.
 */
export async function connectClusterRedis(
  url: string,
  name: string,
  onError: (err: Error) => void,
): Promise<Redis> {
  const options: RedisOptions = {
    maxRetriesPerRequest: 2,
    connectTimeout: 5000,
    retryStrategy: (times) => Math.min(times * 200, 2000),
    lazyConnect: true,
    connectionName: name,
  };
  const redis = url.startsWith('unix://')
    ? new Redis({ ...options, path: url.slice('unix://'.length) })
    : new Redis(url, options);
  redis.on('error', onError);
  try {
    await redis.connect();
    await redis.ping();
  } catch (err) {
    redis.disconnect();
    throw new AenvError(
      'CLUSTER_STATE_UNAVAILABLE',
      `cannot connect to the cluster's Redis: ${(err as Error).message}`,
      { cause: err },
    );
  }
  return redis;
}
