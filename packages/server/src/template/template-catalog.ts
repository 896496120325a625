/**
 * The node's templates, in the node store, looked up by id or alias.
 *
 * @module
 */
import { AenvError } from '@aenv/shared';
import type { DocTable } from '../store/node-store.js';
import type { TemplateRecord } from './template-record.js';

/** Looks templates up by id or alias. */
export class TemplateCatalog {
  readonly #table: DocTable<TemplateRecord>;
  /** Owners of templates whose build was requested but not recorded yet. */
  readonly #claims = new Map<string, string>();

  constructor(table: DocTable<TemplateRecord>) {
    this.#table = table;
  }

  /** The template with this id or alias, or undefined. */
  find(idOrAlias: string): TemplateRecord | undefined {
    return this.#table.get(idOrAlias) ?? this.list().find((t) => t.alias === idOrAlias);
  }

  /**
   * The template with this id or alias.
   * @throws {AenvError} `TEMPLATE_NOT_FOUND`.
   */
  resolve(idOrAlias: string): TemplateRecord {
    const t = this.find(idOrAlias);
    if (t === undefined) {
      throw new AenvError('TEMPLATE_NOT_FOUND', `template '${idOrAlias}' not found`, {
        fields: { templateId: idOrAlias },
      });
    }
    return t;
  }

  /**
   * Records (or replaces) a template. A record that names no owner keeps
   * the one recorded before, or takes the one its build was claimed for.
   */
  put(record: TemplateRecord): void {
    const tenant =
      record.tenant ?? this.#table.get(record.id)?.tenant ?? this.#claims.get(record.id);
    this.#table.put(tenant === undefined ? record : { ...record, tenant });
    this.#claims.delete(record.id);
  }

  /** Notes that a build of `id` (not recorded yet) is `tenant`'s; the record takes it. */
  claim(id: string, tenant: string): void {
    if (this.#table.get(id) === undefined) this.#claims.set(id, tenant);
  }

  /** The tenant that owns a template (by id), `undefined` = public or unknown. */
  ownerOf(id: string): string | undefined {
    return this.#table.get(id)?.tenant ?? this.#claims.get(id);
  }

  /** Removes a template record. */
  delete(id: string): boolean {
    this.#claims.delete(id);
    return this.#table.delete(id);
  }

  /** Every template. */
  list(): TemplateRecord[] {
    return this.#table.all();
  }

  /** Whether any template is built on this snapshot. */
  usesSnapshot(snapshotId: string): boolean {
    return this.list().some((t) => t.snapshotId === snapshotId);
  }
}
