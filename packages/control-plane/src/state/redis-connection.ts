/**
 * Connections to the cluster's Redis. URLs are `redis://[user:pass@]host:port[/db]`,
 * `rediss://` (TLS) or `unix:///path/to/redis.sock`. Commands fail fast
 * while Redis is unreachable (two retries, then an error the caller turns
 * into `CLUSTER_STATE_UNAVAILABLE`) instead of queueing for ever: a gateway
 * answers 503 rather than hanging its clients.
 *
 * @module
 */
import { Redis, type RedisOptions } from 'ioredis';
import { AenvError } from '@aenv/shared';

/** Options every connection gets. */
const BASE_OPTIONS: RedisOptions = {
  maxRetriesPerRequest: 2,
  connectTimeout: 5000,
  enableReadyCheck: true,
  // Reconnect with a capped backoff; commands issued meanwhile fail after their retries.
  retryStrategy: (times) => Math.min(times * 200, 2000),
  lazyConnect: true,
};

/**
 * Connects to Redis at `url` and waits until it answers.
 * @throws {AenvError} `CONFIG_INVALID_VALUE` for a malformed URL,
 *   `CLUSTER_STATE_UNAVAILABLE` when it cannot connect.
 */
export async function connectRedis(
  url: string,
  name = 'aenv',
  onError?: (err: Error) => void,
): Promise<Redis> {
  const redis = createRedis(url, name, onError);
  try {
    await redis.connect();
    await redis.ping();
  } catch (err) {
    redis.disconnect();
    throw stateUnavailable(err, `cannot connect to Redis at ${redactUrl(url)}`);
  }
  return redis;
}

/**
 * A client for `url`, not yet connected (`lazyConnect`). Connection errors
 * go to `onError` (ioredis reconnects by itself; commands fail meanwhile).
 */
export function createRedis(
  url: string,
  name = 'aenv',
  onError: (err: Error) => void = () => undefined,
): Redis {
  const options: RedisOptions = { ...BASE_OPTIONS, connectionName: name };
  if (url.startsWith('unix://')) {
    return new Redis({ ...options, path: url.slice('unix://'.length) }).on('error', onError);
  }
  if (!/^rediss?:\/\//.test(url)) {
    throw new AenvError(
      'CONFIG_INVALID_VALUE',
      `not a Redis URL: '${redactUrl(url)}' (redis://host:port, rediss://..., unix:///path)`,
      { fields: { key: 'redis' } },
    );
  }
  return new Redis(url, options).on('error', onError);
}

/** The URL without its password, for messages. */
export function redactUrl(url: string): string {
  return url.replace(/\/\/([^:@/]*):[^@/]*@/, '//$1:***@');
}

/** `CLUSTER_STATE_UNAVAILABLE` wrapping a Redis failure. */
export function stateUnavailable(
  cause: unknown,
  message = 'the cluster state (Redis) failed',
): AenvError {
  if (cause instanceof AenvError) return cause;
  const why = cause instanceof Error ? `: ${cause.message}` : '';
  return new AenvError('CLUSTER_STATE_UNAVAILABLE', `${message}${why}`, { cause });
}
