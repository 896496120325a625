/**
 * `@aenv/control-plane/testing`: what cluster tests need besides the
 * control plane itself — a real `redis-server` in a temporary directory.
 *
 * @module
 */
export {
  redisServerAvailable,
  startRedisServer,
  type RedisServerOptions,
  type TestRedis,
} from './redis-server.js';
