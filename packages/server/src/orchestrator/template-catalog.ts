/**
 * Templates a sandbox can be created from. For now the node knows the
 * built-in `base` template (the Debian image prepared by `guest`); building
 * and registering more templates comes with the template work.
 *
 * @module
 */
import { AenvError } from '@aenv/shared';

/** A template's resources and identity. */
export interface Template {
  readonly id: string;
  readonly alias: string | undefined;
  readonly vcpus: number;
  readonly memoryMiB: number;
  readonly diskSizeMiB: number;
}

/** Looks templates up by id or alias. */
export class TemplateCatalog {
  readonly #byKey = new Map<string, Template>();

  constructor(templates: readonly Template[]) {
    for (const t of templates) {
      this.#byKey.set(t.id, t);
      if (t.alias !== undefined) this.#byKey.set(t.alias, t);
    }
  }

  /**
   * The template with this id or alias.
   * @throws {AenvError} `TEMPLATE_NOT_FOUND`.
   */
  resolve(idOrAlias: string): Template {
    const t = this.#byKey.get(idOrAlias);
    if (t === undefined) {
      throw new AenvError('TEMPLATE_NOT_FOUND', `template '${idOrAlias}' not found`, {
        fields: { templateId: idOrAlias },
      });
    }
    return t;
  }

  /** Every template, once. */
  list(): Template[] {
    return [...new Set(this.#byKey.values())];
  }
}
