/**
 * The contract between the host and the guest init, in one place: drive
 * serials, kernel parameters, where the tools image is mounted and what it
 * holds, the envd port. The vmm package's `kernel-args.ts` renders the same
 * parameter names; docs/guest.md describes the boot sequence.
 *
 * @module
 */

/** Virtio-blk serials (= vmm drive ids) the initramfs looks for. */
export const GUEST_DRIVE_IDS = { rootfs: 'rootfs', tools: 'tools' } as const;

/** Kernel command-line parameters the initramfs reads. */
export const GUEST_KERNEL_PARAMS = {
  /** `aenv.hostname=<name>`: hostname, also written to /etc/hostname and /etc/hosts. */
  hostname: 'aenv.hostname',
  /** `aenv.ip=<addr>/<prefix>`: eth0's address. */
  address: 'aenv.ip',
  /** `aenv.gw=<addr>`: default route. */
  gateway: 'aenv.gw',
  /** `aenv.dns=<addr>[,<addr>...]`: written to /etc/resolv.conf. */
  dns: 'aenv.dns',
} as const;

/** Where the tools image is mounted inside the guest's root filesystem. */
export const TOOLS_MOUNT = '/run/aenv/tools';

/** Paths inside the tools image (relative to its root). */
export const TOOLS_LAYOUT = {
  /** The PID 1 supervisor (static). */
  init: 'bin/aenv-init',
  /** The node binary, run through the loader below. */
  node: 'node/bin/node',
  /** node's shared libraries and the loader. */
  nodeLib: 'node/lib',
  loader: 'node/lib/ld-linux-x86-64.so.2',
  /** The envd bundle directory (`envd.mjs` + files). */
  envd: 'envd',
  /** JSON describing the image (versions). */
  info: 'aenv-tools.json',
} as const;

/** The port envd listens on inside the guest (E2B's). */
export const ENVD_PORT = 49983;

/** Console line the init prints once envd is started; tests and logs key on it. */
export const INIT_STARTED_MARKER = 'aenv-init: started';
