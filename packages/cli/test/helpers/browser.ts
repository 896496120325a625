/**
 * Debian's Chromium driven by `playwright-core` for the dashboard's browser
 * suites: headless, no sandbox (tests run as root), nothing that calls out
 * (no GPU, QUIC, component updates, sync, background networking), and a
 * fresh profile in a temporary directory removed at close. Screenshots go
 * to `$AENV_TEST_ARTIFACTS/<suite>` when set, else to a new temporary
 * directory that is kept (they are the suite's artifacts) and printed.
 *
 * @module
 */
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type BrowserContext, type Page } from 'playwright-core';

/** Where Debian installs Chromium (apt `chromium`). */
export const CHROMIUM = process.env.AENV_TEST_CHROMIUM ?? '/usr/bin/chromium';

const FLAGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--disable-dev-shm-usage',
];

/** Why the browser suites cannot run here, or undefined. */
export function browserUnavailable(): string | undefined {
  if (!existsSync(CHROMIUM)) return `no Chromium at ${CHROMIUM} (apt-get install chromium)`;
  return undefined;
}

/** A browser with one page. */
export interface TestBrowser {
  readonly context: BrowserContext;
  readonly page: Page;
  /** Where screenshots go. */
  readonly artifacts: string;
  /** Saves a full-page screenshot named `<n>-<name>.png`; returns its path. */
  shot(name: string): Promise<string>;
  close(): Promise<void>;
}

/** Starts Chromium with a fresh profile. */
export async function startBrowser(suite: string): Promise<TestBrowser> {
  const profile = mkdtempSync(join(tmpdir(), 'aenv-chromium-'));
  const base = process.env.AENV_TEST_ARTIFACTS;
  const artifacts =
    base === undefined || base === ''
      ? mkdtempSync(join(tmpdir(), `aenv-${suite}-`))
      : join(base, suite);
  mkdirSync(artifacts, { recursive: true });
  console.log(`# ${suite}: screenshots in ${artifacts}`);
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: FLAGS,
    viewport: { width: 1280, height: 900 },
  });
  const page = context.pages()[0] ?? (await context.newPage());
  page.setDefaultTimeout(30_000);
  let n = 0;
  return {
    context,
    page,
    artifacts,
    async shot(name) {
      const path = join(artifacts, `${String(++n).padStart(2, '0')}-${name}.png`);
      await page.screenshot({ path, fullPage: true });
      return path;
    },
    async close() {
      await context.close().catch(() => undefined);
      rmSync(profile, { recursive: true, force: true });
    },
  };
}
