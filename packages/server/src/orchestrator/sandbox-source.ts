/**
 * Where sandboxes come from, as pure functions the orchestrator uses:
 * resolving a create's `templateID` (a template, or a user snapshot by id
 * or name), building the record of a new sandbox (or fork child) from it, and the record
 * of a snapshot captured from a sandbox (pause, fork, user snapshot).
 *
 * @module
 */
import { AenvError, newId, newToken } from '@aenv/shared';
import type { SnapshotCatalog } from '../snapshot/snapshot-catalog.js';
import type { SnapshotKind, SnapshotRecord } from '../snapshot/snapshot-record.js';
import type { TemplateCatalog } from '../template/template-catalog.js';
import type { MachineSnapshot } from './launcher.js';
import type { ForkRequest } from './sandbox-helpers.js';
import type { CreateSandboxRequest, SandboxRecord } from './sandbox.js';

/** A template or user snapshot resolved for a create. */
export interface Source {
  readonly templateId: string;
  readonly alias: string | undefined;
  readonly snapshot: SnapshotRecord;
}

/**
 * The snapshot a create starts from: a template's, or a user snapshot's.
 * @throws {AenvError} `TEMPLATE_NOT_FOUND`.
 */
export function resolveSource(
  templates: TemplateCatalog,
  snapshots: SnapshotCatalog,
  idOrAlias: string,
): Source {
  const template = templates.find(idOrAlias);
  if (template !== undefined) {
    return {
      templateId: template.id,
      alias: template.alias,
      snapshot: snapshots.get(template.snapshotId),
    };
  }
  const snapshot = snapshots.findUser(idOrAlias);
  if (snapshot !== undefined) return { templateId: snapshot.id, alias: snapshot.name, snapshot };
  // A cold start's own snapshot (by id): the sandbox reports the image as its template.
  const cold = snapshots.find(idOrAlias);
  if (cold?.kind === 'cold')
    return { templateId: cold.templateId, alias: undefined, snapshot: cold };
  throw new AenvError('TEMPLATE_NOT_FOUND', `no template or snapshot '${idOrAlias}'`, {
    fields: { templateId: idOrAlias },
  });
}

/** The record of a sandbox about to start from `source`. */
export function newRecord(
  envdVersion: string,
  req: CreateSandboxRequest,
  source: Source,
  parentId: string | undefined,
): SandboxRecord {
  const { snapshot } = source;
  const now = new Date();
  return {
    id: newId(),
    tenant: req.tenant,
    templateId: source.templateId,
    alias: source.alias,
    metadata: { ...req.metadata },
    envVars: { ...req.envVars },
    envdDefaults: snapshot.envdDefaults,
    vcpus: snapshot.vcpus,
    memoryMiB: snapshot.memoryMiB,
    diskSizeMiB: snapshot.diskSizeMiB,
    envdVersion,
    envdAccessToken: req.secure ? newToken() : undefined,
    trafficAccessToken: req.network.allowPublicTraffic ? undefined : newToken(),
    network: req.network,
    lifecycle: req.lifecycle,
    startedAt: now,
    endAt: now,
    timeoutSeconds: req.timeoutSeconds,
    state: 'creating',
    pausedSnapshotId: undefined,
    sourceSnapshotId: snapshot.id,
    pausedAt: undefined,
    parentId,
    lineage: snapshot.lineage ?? [snapshot.id],
    resumeOnStart: false,
    createTimings: {},
  };
}

/**
 * The record of a fork child of `parent` restored from `snapshot`: fresh
 * id and tokens, everything else inherited (metadata merged with the
 * fork's, TTL the fork's or the parent's).
 */
export function forkChildRecord(
  envdVersion: string,
  parent: SandboxRecord,
  req: ForkRequest,
  snapshot: SnapshotRecord,
): SandboxRecord {
  const childReq: CreateSandboxRequest = {
    tenant: parent.tenant,
    templateId: parent.templateId,
    timeoutSeconds: req.timeoutSeconds ?? parent.timeoutSeconds,
    metadata: { ...parent.metadata, ...req.metadata },
    envVars: parent.envVars,
    secure: parent.envdAccessToken !== undefined,
    network: parent.network,
    lifecycle: parent.lifecycle,
  };
  const source = { templateId: parent.templateId, alias: parent.alias, snapshot };
  return newRecord(envdVersion, childReq, source, parent.id);
}

/** The record of a snapshot captured from `record`'s machine. */
export function snapshotOf(
  record: SandboxRecord,
  what: { readonly id: string; readonly kind: SnapshotKind; readonly name: string | undefined },
  saved: MachineSnapshot,
): SnapshotRecord {
  return {
    id: what.id,
    kind: what.kind,
    name: what.name,
    sandboxId: record.id,
    tenant: record.tenant,
    templateId: record.templateId,
    dir: saved.dir,
    image: saved.image,
    vcpus: record.vcpus,
    memoryMiB: record.memoryMiB,
    diskSizeMiB: record.diskSizeMiB,
    envdVersion: record.envdVersion,
    envdAccessToken: record.envdAccessToken,
    envdDefaults: record.envdDefaults,
    lineage: [...record.lineage, what.id],
    createdAt: new Date().toISOString(),
  };
}
