/**
 * `@aenv/testkit`: conformance suites every backend runs (style R4) and
 * the fixtures suites outside a single package share.
 *
 * - {@link runVmmDriverSuite}: the VMM driver contract against real guests;
 *   `runBlobStoreSuite` and `runBlockDeviceSuite` (from
 *   `@aenv/storage/testing`) for storage backends.
 * - Fixtures: {@link TapNetworks} (a namespace + tap per VM, envd reachable
 *   through a forwarder), {@link EnvdSocketClient}, probe agents and the
 *   {@link NetnsTopology} of network suites, {@link QemuGuest} (a real
 *   guest in a node's slot), suite disks, guest artifacts, host memory.
 *
 * Importing it pulls in `node:test`. Packages below it in the dependency
 * table (vmm, network, storage, guest, server) keep package-internal
 * fixtures of their own: they may not import this package.
 *
 * @module
 */
export { runBlobStoreSuite, runBlockDeviceSuite, type SuiteSkip } from '@aenv/storage/testing';
export {
  VMM_SUITE_TESTS,
  runVmmDriverSuite,
  type VmmDriverSuiteOptions,
  type VmmSuiteGuestSetup,
  type VmmSuiteTest,
} from './vmm/vmm-driver-suite.js';
export {
  ENVD_TIMEOUT_MS,
  PreparedSuiteVm,
  SuiteVm,
  type SuiteVmContext,
  type VmmSuiteGuest,
} from './vmm/suite-vm.js';
export { qcow2Disks, rawCopyDisks, type SuiteDisks } from './vmm/suite-disks.js';
export * from './vmm/guest-programs.js';
export { counterRate, measurePause, type PauseWindow } from './vmm/pause-window.js';
export {
  EnvdSocketClient,
  type EnvdProcess,
  type EnvdProcessEnd,
  type StartOptions,
} from './envd/envd-socket-client.js';
export {
  TapNetworks,
  tapNetworkSkipReason,
  type NetworkFactory,
  type SuiteNetwork,
} from './network/tap-networks.js';
export {
  PROBE_AGENT_PATH,
  Probe,
  startNetnsProbe,
  type ProbeAnswer,
  type ProbeTransport,
} from './network/probe.js';
export {
  NetnsTopology,
  OTHER_PORT,
  SERVICE_PORT,
  WORLD,
  sh,
  topologySkipReason,
} from './network/netns-topology.js';
export {
  QemuGuest,
  guestNode,
  type BootTimings,
  type QemuGuestOptions,
} from './guest/qemu-guest.js';
export {
  TEST_CACHE,
  qemuVmSkipReason,
  testGuestArtifacts,
  type TestGuestArtifacts,
} from './guest/test-guest.js';
export { mib, memAvailable, parseKbField, processPss, totalPss } from './host/host-memory.js';
