// SPDX-License-Identifier: Apache-2.0
// Headless Chromium for the demo's browser tests (web/test/*.test.mjs): Debian's /usr/bin/chromium
// (or $CHROMIUM) driven by playwright-core against the built demo served by server.mjs, with every
// console error or warning, page error and failed request of a page collected, so that a test can
// require a clean console. Kept outside web/test/ because `node --test` runs every file there.
import { chromium } from 'playwright-core';

import { serve } from './server.mjs';

export const executablePath = process.env.CHROMIUM ?? '/usr/bin/chromium';

export function launch() {
  return chromium.launch({
    executablePath,
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
      '--disable-component-update', '--disable-sync'],
  });
}

/** Appends the page's console errors and warnings, page errors and failed requests to `problems`. */
export function watch(page, problems, tag = '') {
  const prefix = tag ? `${tag} ` : '';
  page.on('console', (m) => {
    if (m.type() === 'error' || m.type() === 'warning') problems.push(`${prefix}console.${m.type()}: ${m.text()}`);
  });
  page.on('pageerror', (e) => problems.push(`${prefix}page error: ${e.message}`));
  page.on('requestfailed', (r) => problems.push(`${prefix}request failed: ${r.url()} ${r.failure()?.errorText}`));
}

/**
 * Serves `dir` (server.mjs; `isolate: false` leaves out COOP/COEP), launches Chromium and calls
 * `body({ browser, url, problems, newPage })`, where `newPage(tag, options)` opens a 1280 x 900
 * page watched into `problems`; the browser and the server are closed however the body ends.
 */
export async function withDemo(dir, { isolate = true } = {}, body) {
  const { server, url } = await serve(dir, 0, '127.0.0.1', { isolate });
  const browser = await launch();
  const problems = [];
  const newPage = async (tag = '', options = {}) => {
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 }, ...options });
    watch(page, problems, tag);
    return page;
  };
  try {
    return await body({ browser, url, problems, newPage });
  } finally {
    await browser.close();
    server.closeAllConnections();
    server.close();
  }
}
