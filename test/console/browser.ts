// The web console in a real browser for the console tests: Debian's Chromium driven by playwright-core (both
// obtained by tools/obtain-browser.sh and console/package.json), a page signed in with a tenant's key, its
// screenshots (test-results/console/) and its accessibility check (axe: no serious or critical violation).
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { expect } from 'chai';
import type { Browser, Page } from 'playwright-core';
import { as } from '../harness/client';
import { PASSWORD, setPasswordOf } from '../harness/people';
import { getStack } from '../harness/stack';

const ROOT = path.resolve(__dirname, '../../..');
// The browser tooling is the console's own dependency (console/node_modules), not the api's.
const consoleRequire = createRequire(path.join(ROOT, 'console', 'package.json'));
const { chromium } = consoleRequire('playwright-core') as typeof import('playwright-core');
const { AxeBuilder } = consoleRequire('@axe-core/playwright') as typeof import('@axe-core/playwright');
const CHROMIUM = process.env.CONSOLE_TEST_CHROMIUM ?? '/usr/bin/chromium';
export const SHOTS = path.join(ROOT, 'test-results', 'console');

export interface ConsoleBrowser {
  browser: Browser;
  page: Page;
  /** Opens a console path (after /console) and waits for its first heading. */
  open(consolePath: string): Promise<void>;
  shot(name: string): Promise<void>;
  accessible(name: string): Promise<void>;
  close(): Promise<void>;
}

export async function launchConsole(): Promise<ConsoleBrowser> {
  if (!fs.existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: run bash tools/obtain-browser.sh`);
  fs.mkdirSync(SHOTS, { recursive: true });
  // We run as root in CI: Chromium's own sandbox needs an unprivileged user.
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: ['--no-sandbox', '--disable-dev-shm-usage'],
  });
  // A context of its own (axe opens pages in it to run its checks).
  const page = await (
    await browser.newContext({ viewport: { width: 1280, height: 860 }, acceptDownloads: true })
  ).newPage();
  return {
    browser,
    page,
    async open(consolePath) {
      await page.goto(`${getStack().baseUrl}/console${consolePath}`);
      await page.locator('main h1').first().waitFor();
    },
    async shot(name) {
      await page.screenshot({ path: path.join(SHOTS, `${name}.png`), fullPage: true });
    },
    async accessible(name) {
      const { violations } = await new AxeBuilder({ page }).analyze();
      const serious = violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
      expect(
        serious.map((v) => `${name}: ${v.id} ${v.help} (${v.nodes.map((n) => n.target).join(' ')})`),
      ).to.deep.equal([]);
    },
    close: () => browser.close(),
  };
}

/** A browser whose console is signed in as the user of a new tenant's `key`. */
export async function signedInConsole(key: string): Promise<ConsoleBrowser> {
  const me = await as(key).get('/api/users');
  expect(me.status, me.text).to.equal(200);
  const [user] = me.body.users as Array<{ user_id: string; email: string }>; // a new tenant's one user
  return signedInConsoleAs({ userId: user.user_id, email: user.email });
}

/** A browser whose console is signed in as `user`, by email and password through the sign-in form. */
export async function signedInConsoleAs(user: { userId: string; email: string }): Promise<ConsoleBrowser> {
  // The user gets a password (through a reset link) and signs in with it, as a person does.
  await setPasswordOf(user.userId, PASSWORD);
  const c = await launchConsole();
  await c.page.goto(`${getStack().baseUrl}/console`);
  await c.page.getByLabel('Email').fill(user.email);
  await c.page.getByLabel('Password').fill(PASSWORD);
  await c.page.getByRole('button', { name: 'Sign in', exact: true }).click();
  await c.page.getByRole('heading', { name: 'Dashboard' }).waitFor();
  return c;
}
