/**
 * `@aenv/server/testing`: fixtures for suites that pull images from a real
 * registry — the server's own and the CLI's and SDK's, which drive a node
 * pulling from it. A Debian `docker-registry` on a loopback port (no auth,
 * basic auth, or token auth with a small token server), `skopeo` pushes,
 * and test images built from scratch with umoci (busybox-only with
 * whiteouts and opaque directories, a sibling sharing its base layers, a
 * musl one). Nothing here is used by the daemon itself.
 *
 * @module
 */
export {
  freePort,
  pushImage,
  registryUnavailable,
  startLocalRegistry,
  type LocalRegistry,
  type RegistryAuthMode,
} from './local-registry.js';
export { buildTestImages, muslUnavailable, type TestImages } from './test-images.js';
