/**
 * `GET /templates`: the templates of this node in E2B's `Template` shape
 * (`templateID`, `aliases`, `cpuCount`, `memoryMB`, `diskSizeMB`,
 * `createdAt`, `buildStatus`).
 *
 * @module
 */
import type { TemplateCatalog } from '../../template/template-catalog.js';

/** The list-templates handler. */
export function listTemplates(templates: TemplateCatalog) {
  return (): { templateID: string }[] =>
    templates.list().map((t) => ({
      templateID: t.id,
      aliases: t.alias === undefined ? [] : [t.alias],
      cpuCount: t.vcpus,
      memoryMB: t.memoryMiB,
      diskSizeMB: t.diskSizeMiB,
      createdAt: t.createdAt,
      buildStatus: 'ready',
      public: false,
    }));
}
