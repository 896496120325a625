/**
 * A template as the node records it: a name for a snapshot that sandboxes
 * are created from (a restore, not a boot), plus the resources they get.
 *
 * @module
 */

/** One template. */
export interface TemplateRecord {
  readonly id: string;
  readonly alias: string | undefined;
  /** The snapshot sandboxes are restored from. */
  readonly snapshotId: string;
  readonly vcpus: number;
  readonly memoryMiB: number;
  readonly diskSizeMiB: number;
  /**
   * What the template was built from (kernel, initramfs, tools and base image
   * digests, machine shape, driver); a different key means rebuild.
   */
  readonly buildKey: string;
  readonly createdAt: string;
  /** The build that made the current snapshot (templates built through the API). */
  readonly buildId?: string | undefined;
  /** What it was built from: `image <ref>@<digest>` or `template <id>`. */
  readonly from?: string | undefined;
  /** When the current snapshot was built (rebuilds keep `createdAt`). */
  readonly updatedAt?: string | undefined;
  /** The tenant that built it; absent = public (the base template, pre-tenant templates). */
  readonly tenant?: string | undefined;
}
