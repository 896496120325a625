/**
 * `GET /templates`: the templates of this node in E2B's `Template` shape
 * (`templateID`, `aliases`, `cpuCount`, `memoryMB`, `diskSizeMB`,
 * `createdAt`, `buildStatus`).
 *
 * @module
 */
import type { TemplateCatalog } from '../../template/template-catalog.js';
import type { Reply } from '../router.js';

/** The list-templates handler. */
export function listTemplates(templates: TemplateCatalog) {
  return (): Reply => ({
    status: 200,
    body: templates.list().map((t) => ({
      templateID: t.id,
      aliases: t.alias === undefined ? [] : [t.alias],
      cpuCount: t.vcpus,
      memoryMB: t.memoryMiB,
      diskSizeMB: t.diskSizeMiB,
      createdAt: t.createdAt,
      buildStatus: 'ready',
      public: false,
    })),
  });
}
