/**
 * The `base` template: built once per node by booting the base image,
 * waiting for envd, and suspending the VM into a snapshot (memory + device
 * state + the disk sealed over the base layer). Every sandbox created from
 * `base` is then a restore of that snapshot, not a boot. It is rebuilt only
 * when its inputs change (kernel, initramfs, tools image, base image,
 * machine shape, driver), which the build key captures.
 *
 * @module
 */
import { createHash } from 'node:crypto';
import { access } from 'node:fs/promises';
import { DEFAULT_EGRESS_POLICY } from '@aenv/network';
import { Cleanup, LOG_FIELDS, newId } from '@aenv/shared';
import type { ImageSpec } from '@aenv/storage';
import type { Logger } from '../log.js';
import type { NodeMetrics } from '../metrics/node-metrics.js';
import { ENVD_PORT, waitForEnvd } from '../orchestrator/envd-client.js';
import type { SandboxLauncher } from '../orchestrator/launcher.js';
import type { SnapshotCatalog } from '../snapshot/snapshot-catalog.js';
import type { TemplateCatalog } from './template-catalog.js';
import type { TemplateRecord } from './template-record.js';

/** What the base template is built from. */
export interface BaseTemplateInputs {
  /** The base image's layers. */
  readonly image: ImageSpec;
  readonly vcpus: number;
  readonly memoryMiB: number;
  readonly diskSizeMiB: number;
  readonly envdVersion: string;
  /** Everything else that makes a snapshot incompatible when it changes (digests, driver, mode). */
  readonly identity: Readonly<Record<string, string | undefined>>;
}

/** What building needs. */
export interface BaseTemplateOptions {
  readonly launcher: SandboxLauncher;
  readonly templates: TemplateCatalog;
  readonly snapshots: SnapshotCatalog;
  readonly envdReadyTimeoutMs: number;
  readonly logger: Logger;
  readonly metrics?: NodeMetrics;
}

/** The build key of a set of inputs. */
export function baseTemplateKey(inputs: BaseTemplateInputs): string {
  const { image, vcpus, memoryMiB, envdVersion, identity } = inputs;
  // Only what defines the disk: an import and a lookup of the same base may differ in extra fields.
  const disk = { virtualSize: image.virtualSize, layers: [...image.layers] };
  const canonical = JSON.stringify({ disk, vcpus, memoryMiB, envdVersion, identity });
  return `sha256:${createHash('sha256').update(canonical).digest('hex')}`;
}

async function usable(
  record: TemplateRecord | undefined,
  key: string,
  snapshots: SnapshotCatalog,
): Promise<boolean> {
  if (record === undefined || record.buildKey !== key) return false;
  const dir = snapshots.find(record.snapshotId)?.dir;
  if (dir === undefined) return false;
  return access(dir).then(
    () => true,
    () => false,
  );
}

/**
 * Returns the `base` template, building it (a boot, ~seconds under TCG)
 * when missing or out of date.
 */
export async function ensureBaseTemplate(
  inputs: BaseTemplateInputs,
  o: BaseTemplateOptions,
): Promise<TemplateRecord> {
  const key = baseTemplateKey(inputs);
  const existing = o.templates.find('base');
  if (existing !== undefined && (await usable(existing, key, o.snapshots))) return existing;
  const t0 = performance.now();
  o.logger.info('building the base template (boot + snapshot)', {
    reason: existing ? 'inputs changed' : 'none yet',
  });
  await using cleanup = new Cleanup();
  const machine = await o.launcher.launch(
    {
      sandboxId: `build-${newId()}`,
      vcpus: inputs.vcpus,
      memoryMiB: inputs.memoryMiB,
      egress: DEFAULT_EGRESS_POLICY,
      source: { kind: 'boot', image: inputs.image },
    },
    AbortSignal.timeout(10 * 60_000),
  );
  cleanup.add('stop build machine', () => machine.stop());
  await waitForEnvd(machine.address(ENVD_PORT), o.envdReadyTimeoutMs);
  const { id, dir } = o.snapshots.allocate();
  const saved = await machine.suspend({ dir, keepMemory: true });
  const createdAt = new Date().toISOString();
  o.snapshots.add({
    id,
    kind: 'template',
    templateId: 'base',
    dir: saved.dir,
    image: saved.image,
    vcpus: inputs.vcpus,
    memoryMiB: inputs.memoryMiB,
    diskSizeMiB: inputs.diskSizeMiB,
    envdVersion: inputs.envdVersion,
    createdAt,
  });
  const record: TemplateRecord = {
    id: 'base',
    alias: 'base',
    snapshotId: id,
    vcpus: inputs.vcpus,
    memoryMiB: inputs.memoryMiB,
    diskSizeMiB: inputs.diskSizeMiB,
    buildKey: key,
    createdAt,
  };
  o.templates.put(record);
  if (existing !== undefined) {
    await o.snapshots.release(existing.snapshotId, (sid) => o.templates.usesSnapshot(sid));
  }
  const ms = performance.now() - t0;
  o.metrics?.record('template', 'ok', { total: ms });
  o.logger.info('base template built', {
    [LOG_FIELDS.templateId]: 'base',
    [LOG_FIELDS.snapshotId]: id,
    [LOG_FIELDS.durationMs]: Math.round(ms),
  });
  return record;
}
