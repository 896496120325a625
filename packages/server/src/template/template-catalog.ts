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

  /** Records (or replaces) a template. */
  put(record: TemplateRecord): void {
    this.#table.put(record);
  }

  /** Removes a template record. */
  delete(id: string): boolean {
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
