import fs from 'node:fs';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import type { Test } from 'tap';
import { tempDataDir, type TestApp } from './app.js';

/** Driving the admin UI in headless Chromium (skipped, saying why, without one). */
export const executablePath = process.env.CHROMIUM_PATH || '/usr/bin/chromium';
export const noChromium = fs.existsSync(executablePath) ? false : `no Chromium at ${executablePath} (apt-get install chromium, or set CHROMIUM_PATH)`;

export const PHONE = { width: 375, height: 740 };
export const DESKTOP = { width: 1280, height: 900 };
export const PASSWORD = 'correct horse battery staple';

export interface Browser {
  origin: string;
  page: Page;
  context: BrowserContext;
  /** Console errors, page errors, failed requests and HTTP errors the page met. */
  problems: string[];
  requests: string[];
  /** JavaScript dialogs (alert, confirm, prompt) that opened. */
  dialogs: string[];
  shots: string;
}

/**
 * Headless Chromium on a fresh profile in `dir`, closed when the test ends (before the folder
 * goes: teardowns run last-registered first). No network of its own: no updates, sync or probes.
 */
export async function launchChromium(t: Test, dir: string): Promise<{ context: BrowserContext; page: Page }> {
  const context = await chromium.launchPersistentContext(path.join(dir, 'profile'), {
    executablePath,
    headless: true,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    viewport: DESKTOP,
    timeout: 30_000,
  });
  t.teardown(() => context.close());
  context.setDefaultTimeout(20_000);
  return { context, page: context.pages()[0] ?? (await context.newPage()) };
}

/** Listens on a free port and opens a fresh Chromium profile on it; closed when the test ends. */
export async function openBrowser(t: Test, ctx: TestApp): Promise<Browser> {
  await ctx.app.listen({ port: 0, host: '127.0.0.1' });
  const origin = `http://127.0.0.1:${(ctx.app.server.address() as AddressInfo).port}`;
  const tmp = tempDataDir(t);
  // ADMIN_UI_SHOTS keeps them somewhere to look at; by default they go with the temporary folder.
  const shots = process.env.ADMIN_UI_SHOTS || path.join(tmp, 'screenshots');
  fs.mkdirSync(shots, { recursive: true });
  const { context, page } = await launchChromium(t, tmp);
  const problems: string[] = [];
  const requests: string[] = [];
  const dialogs: string[] = [];
  page.on('console', (message) => {
    if (message.type() === 'error') problems.push(`console error: ${message.text()} at ${message.location().url}`);
  });
  page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
  page.on('requestfailed', (request) => {
    // A fetch still running when the page moves on (a click to the next screen) is cancelled by
    // the browser itself: net::ERR_ABORTED, not a failure of the service. So is whatever a frame
    // (the editor's preview) is still loading, its page or its style sheet, when the page is left
    // or the preview reloads.
    const cancelled = request.failure()?.errorText === 'net::ERR_ABORTED';
    if (cancelled && ['fetch', 'xhr'].includes(request.resourceType())) return;
    if (cancelled && request.frame() !== page.mainFrame()) return;
    problems.push(`request failed: ${request.url()} (${request.failure()?.errorText})`);
  });
  page.on('request', (request) => requests.push(request.url()));
  page.on('dialog', (dialog) => {
    dialogs.push(`${dialog.type()}: ${dialog.message()}`);
    void dialog.dismiss();
  });
  return { origin, page, context, problems, requests, dialogs, shots };
}

/**
 * A new owner (or editor) of the test site as the operator's CLI makes one (`blog-admin user
 * create`): the token of its setup link. (Owners invite instead; see test/admin-ui/accounts-mail.test.ts.)
 */
export async function invite(t: Test, ctx: TestApp, email: string, role: 'owner' | 'editor' | 'author' | 'contributor' = 'owner'): Promise<string> {
  const { setupToken } = await ctx.app.accounts.addMember(ctx.site.id, email, role);
  t.ok(setupToken, `made ${email}`);
  return setupToken!;
}

/** Chooses a password on the setup page; ends on the post list, signed in. */
export async function setUp(b: Browser, token: string, password = PASSWORD): Promise<void> {
  const { page } = b;
  await page.goto(`${b.origin}/admin/setup#token=${encodeURIComponent(token)}`);
  await page.getByLabel('Password', { exact: true }).fill(password);
  await page.getByLabel('Repeat password').fill(password);
  await page.getByRole('button', { name: 'Set password' }).click();
  await page.waitForURL(`${b.origin}/admin/posts`);
  await page.getByRole('heading', { level: 1, name: 'Posts' }).waitFor();
}

export async function signIn(b: Browser, email: string, password = PASSWORD): Promise<void> {
  const { page } = b;
  await page.getByLabel('Email').fill(email);
  await page.getByLabel('Password').fill(password);
  await page.getByRole('button', { name: 'Sign in' }).click();
}

export async function noHorizontalScroll(page: Page): Promise<{ scrollWidth: number; innerWidth: number }> {
  return page.evaluate(() => ({ scrollWidth: document.documentElement.scrollWidth, innerWidth: window.innerWidth }));
}

/** Screenshots at phone and desktop width, checking that nothing scrolls sideways on the phone. */
export async function shoot(t: Test, b: Browser, name: string): Promise<void> {
  const { page } = b;
  await page.setViewportSize(PHONE);
  const phone = await noHorizontalScroll(page);
  t.ok(phone.scrollWidth <= phone.innerWidth, `${name}: no horizontal scroll at ${PHONE.width}px (${JSON.stringify(phone)})`);
  await page.screenshot({ path: path.join(b.shots, `${name}-phone.png`), fullPage: true });
  await page.setViewportSize(DESKTOP);
  await page.screenshot({ path: path.join(b.shots, `${name}-desktop.png`), fullPage: true });
  const size = fs.statSync(path.join(b.shots, `${name}-desktop.png`)).size;
  t.ok(size > 3_000, `${name}-desktop.png is not blank (${size} bytes)`);
}
