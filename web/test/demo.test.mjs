// SPDX-License-Identifier: Apache-2.0
// The browser demo in a real browser: Debian's Chromium, headless, driven by playwright-core.
// Serves build/web with web/server.mjs (the same server `bash scripts/web` runs), runs 300 requests
// through two schemes and checks that what the page shows is the module's own stats for them;
// then that changing a scheme resets and reruns, that pasted lengths out of range are reported on
// the page, and that the console stayed clean. Screenshots go to build/web-test/.
//
//   bash scripts/web-test          (builds first)
//   node --test web/test/          (after bash scripts/web --build-only)
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { executablePath, withDemo } from '../chromium.mjs';

const here = (p) => fileURLToPath(new URL(p, import.meta.url));
const buildDir = process.env.RUNGS_WEB_DIR ?? here('../../build/web');
const artifacts = process.env.RUNGS_WEB_ARTIFACTS ?? here('../../build/web-test');
const WAIT = 180_000;  // a run of 2 x 300 encoder requests takes seconds; the machine is shared

const sum = (xs) => xs.reduce((a, b) => a + b, 0);

function upperOf(ranges, key) {
  const r = ranges.find((b) => key >= b.start && key < b.end);
  return r ? r.end - 1 : null;
}

// Waits until a run newer than `after` (of `count` requests, when given) has finished and returns
// window.__rungs. A settings change may start more than one run (debounced text fields): the count
// tells the intended one.
async function finishedRun(page, after, count = null) {
  // The snapshot comes from the same page task that saw the run finished.
  const handle = await page.waitForFunction(([id, n]) => {
    const r = window.__rungs;
    return r && r.runId > id && (r.status === 'done' || r.status === 'error') && (n === null || r.lengths.length === n) && structuredClone(r);
  }, [after, count], { timeout: WAIT, polling: 100 });
  const snap = await handle.jsonValue();
  assert.equal(snap.status, 'done', `the run ended as ${snap.status}`);
  return snap;
}

// The bucket table of the scheme shown, as numbers: [{ bucket, runs, hits, ... }].
function bucketTable(page) {
  return page.evaluate(() => [...document.querySelectorAll('#bucket-table tbody tr')].map((tr) => {
    const row = { bucket: Number(tr.dataset.bucket) };
    for (const td of tr.querySelectorAll('td[data-value]')) row[td.dataset.field] = Number(td.dataset.value);
    return row;
  }));
}

function compareTable(page) {
  return page.evaluate(() => [...document.querySelectorAll('#compare-table tbody tr')].map((tr) => {
    const row = { scheme: Number(tr.dataset.scheme) };
    for (const td of tr.querySelectorAll('td[data-value]')) row[td.dataset.field] = td.dataset.value === '' ? null : Number(td.dataset.value);
    return row;
  }));
}

async function screenshot(page, path) {
  await page.waitForSelector('body[data-charts="idle"]');
  await page.screenshot({ path, fullPage: true });
}

async function showScheme(page, i) {
  await page.locator('#scheme-tabs input').nth(i).check();
  await page.waitForFunction((k) => window.__rungs.selected === k, i);
}

// Everything the page shows for scheme i equals the worker's final stats for it, and those
// stats are the stats of exactly these requests through exactly this ladder.
async function checkScheme(page, snap, i, expectRefused = 0) {
  const s = snap.schemes[i];
  const st = s.stats;
  assert.ok(st, `scheme ${s.letter} has final stats`);
  const lengths = snap.lengths;
  const served = lengths.filter((k) => upperOf(s.ranges, k) !== null);
  assert.equal(lengths.length - served.length, expectRefused, 'requests outside every bucket');

  // The module's counters add up over these requests.
  assert.equal(st.buckets.length, s.ranges.length);
  assert.equal(sum(st.buckets.map((b) => b.runs)), served.length, 'requests per bucket sum to the requests served');
  assert.equal(st.runs, served.length);
  assert.equal(st.outOfRange, expectRefused);
  for (const b of st.buckets) assert.equal(b.hits + b.compiles, b.runs, `bucket ${b.range.start}..${b.range.end}: hits + compiles = runs`);
  assert.equal(st.compiles, st.buckets.filter((b) => b.runs > 0).length, 'a bucket compiles once, when first needed (lazily)');
  assert.equal(st.actualRows, sum(served));
  assert.equal(st.paddedRows, sum(served.map((k) => upperOf(s.ranges, k))), 'padded rows = sum of the bucket extents');
  assert.ok(Math.abs(st.waste - st.paddedRows / st.actualRows) < 1e-12);
  if (expectRefused === 0) assert.ok(Math.abs(st.waste - s.expectedWaste) < 1e-9, 'measured waste = ladder.expectedWaste');

  // The page shows those numbers.
  await showScheme(page, i);
  const big = page.locator('#big-waste');
  assert.equal(Number(await big.getAttribute('data-value')), st.waste);
  assert.equal(await big.textContent(), `${st.waste.toFixed(2)}×`);
  assert.equal(Number(await page.locator('#card-requests').getAttribute('data-value')), st.runs);
  assert.equal(Number(await page.locator('#card-compiles').getAttribute('data-value')), st.compiles);
  const rows = await bucketTable(page);
  assert.equal(rows.length, s.ranges.length);
  for (const row of rows) {
    const b = st.buckets[row.bucket];
    for (const f of ['upper', 'runs', 'hits', 'compiles', 'actualRows', 'paddedRows']) {
      assert.equal(row[f], b[f], `bucket table, bucket ${row.bucket}, ${f}`);
    }
  }
  const cmp = (await compareTable(page)).find((r) => r.scheme === i);
  for (const f of ['compiles', 'actualRows', 'paddedRows', 'waste', 'compileMs']) {
    assert.equal(cmp[f], st[f], `compare table, scheme ${s.letter}, ${f}`);
  }
  assert.equal(cmp.memory, st.arenaBytes + st.weightBytes, 'compare table: memory = arena + weights');
  assert.equal(cmp.totalMs, s.totalMs);
  assert.equal(cmp.refused ?? 0, expectRefused);
}

// Clicks "Compare 1 and N threads" and returns what the worker measured (outputs checked equal).
async function compareThreads(page) {
  await page.click('#threads-compare');
  const handle = await page.waitForFunction(() => window.__rungs.threads && structuredClone(window.__rungs.threads), null, { timeout: WAIT });
  const th = await handle.jsonValue();
  assert.equal(th.error, undefined, `the threads comparison failed: ${th.error}`);
  assert.equal(th.equal, true, 'the outputs on 1 and N threads agree');
  assert.match(await page.locator('#threads-result').textContent(), /^matmul 256: 1 thread: /);
  return th;
}

// Without COOP/COEP the page cannot post shared memory to a worker: the package loads its
// single-threaded variant, which still runs (and says so), with a clean console.
test('the demo without cross-origin isolation loads the single-threaded variant', { timeout: 300_000 }, async (t) => {
  assert.ok(existsSync(`${buildDir}/index.html`), `${buildDir}/index.html missing: bash scripts/web --build-only`);
  await withDemo(buildDir, { isolate: false }, async ({ url, problems, newPage }) => {
    const page = await newPage();
    const response = await page.goto(`${url}?autorun=0`);
    assert.equal(response.headers()['cross-origin-embedder-policy'], undefined);
    await page.waitForFunction(() => window.__rungs && window.__rungs.ready, null, { timeout: 60_000 });
    assert.equal(await page.evaluate(() => crossOriginIsolated), false);
    const env = await page.evaluate(() => window.__rungs.env);
    assert.equal(env.variant, 'single');
    assert.equal(env.maxThreads, 1);
    assert.match(await page.locator('#env').textContent(), /single-threaded variant/);
    const th = await compareThreads(page);
    t.diagnostic(`single: ${th.rows.map((r) => `${r.threads}t ${r.gflops.toFixed(1)} GFLOP/s`).join(', ')}`);
    assert.deepEqual(th.rows.map((r) => r.threads), [1]);
    assert.deepEqual(problems, [], 'no console errors or warnings, no failed requests');
  });
});

test('the demo in headless Chromium', { timeout: 600_000 }, async (t) => {
  assert.ok(existsSync(`${buildDir}/index.html`), `${buildDir}/index.html missing: bash scripts/web --build-only`);
  assert.ok(existsSync(executablePath), `${executablePath} not found (scripts/setup installs Debian's chromium)`);
  mkdirSync(artifacts, { recursive: true });
  await withDemo(buildDir, {}, async ({ browser, url, problems, newPage }) => {
    const page = await newPage();

    const response = await page.goto(`${url}?autorun=0`);
    assert.equal(response.headers()['cross-origin-opener-policy'], 'same-origin');
    assert.equal(response.headers()['cross-origin-embedder-policy'], 'require-corp');
    await page.waitForFunction(() => window.__rungs && window.__rungs.ready, null, { timeout: 60_000 });
    assert.equal(await page.evaluate(() => crossOriginIsolated), true, 'the page is cross-origin isolated');
    const env = await page.evaluate(() => window.__rungs.env);
    t.diagnostic(`rungs ${env.version} (${env.isa}, ${env.variant} variant, up to ${env.maxThreads} threads) in ${await browser.version()}`);
    const cores = await page.evaluate(() => navigator.hardwareConcurrency);
    assert.equal(env.variant, cores > 1 ? 'threads' : 'single', 'an isolated page loads the threaded variant');
    assert.equal(env.maxThreads, cores > 1 ? Math.min(cores, 8) : 1);
    const th = await compareThreads(page);
    t.diagnostic(`threads: ${th.rows.map((r) => `${r.threads}t ${r.gflops.toFixed(1)} GFLOP/s`).join(', ')}`);
    assert.deepEqual(th.rows.map((r) => r.threads), env.maxThreads > 1 ? [1, env.maxThreads] : [1], 'the report says how many threads ran');

    // ---- 300 chat-like requests through power-of-two 8..256 and optimal (6 buckets)
    await page.check('input[name="model"][value="encoder"]');
    await page.selectOption('#traffic-kind', 'lognormal');
    await page.fill('#traffic-count', '300');
    await page.fill('#traffic-max', '256');
    await page.fill('#traffic-median', '24');
    await page.fill('#traffic-seed', '7');
    await showScheme(page, 0);
    await page.selectOption('#scheme-kind', 'pow2');
    await page.fill('#scheme-min', '8');
    await page.fill('#scheme-max', '256');
    await showScheme(page, 1);
    await page.selectOption('#scheme-kind', 'optimal');
    await page.fill('#scheme-budget', '6');
    // Four repetitions make the run last long enough (about 3 s here) for the progress bar to be
    // rendered several times part-way, whatever the machine's speed within a few times of ours.
    await page.fill('#repetitions', '4');
    await page.waitForTimeout(700);  // let the debounced plan settle

    // Every control has a label (its accessible name), and the form runs from the keyboard.
    const unlabelled = await page.evaluate(() => [...document.querySelectorAll('input, select, textarea, button')]
      .filter((e) => !(e.labels && e.labels.length) && !e.getAttribute('aria-label') && !e.textContent.trim())
      .map((e) => e.id || e.outerHTML.slice(0, 60)));
    assert.deepEqual(unlabelled, [], 'controls without a label');

    // While it runs, the main thread keeps ticking (the work is in the worker) and the progress
    // bar moves through intermediate values: every value the page renders is recorded (its
    // aria-valuetext changes with it), not samples of it.
    await page.evaluate(() => {
      const bar = document.getElementById('progress');
      const log = { values: [], maxGap: 0, last: performance.now() };
      window.__ticks = log;
      log.observer = new MutationObserver(() => log.values.push(bar.value));
      log.observer.observe(bar, { attributes: true, attributeFilter: ['aria-valuetext'] });
      log.timer = setInterval(() => {
        const now = performance.now();
        log.maxGap = Math.max(log.maxGap, now - log.last);
        log.last = now;
      }, 25);
    });
    await page.focus('#traffic-count');
    await page.keyboard.press('Enter');  // submits the settings form: Run
    let snap = await finishedRun(page, 0);
    const ticks = await page.evaluate(() => {
      clearInterval(window.__ticks.timer);
      window.__ticks.observer.disconnect();
      const { values, maxGap } = window.__ticks;
      return { values, maxGap, max: document.getElementById('progress').max };
    });
    const partial = new Set(ticks.values.filter((v) => v > 0 && v < ticks.max));
    assert.equal(ticks.max, 300 * 2 * 4, 'the bar counts every request of both schemes, four times');
    assert.ok(partial.size >= 3, `the progress bar showed intermediate values (${[...partial].slice(0, 10)})`);
    t.diagnostic(`main thread: longest gap between 25 ms ticks during the run ${ticks.maxGap.toFixed(0)} ms; ${partial.size} progress values seen`);
    // Not a benchmark: a generous bound that only fails if the work ran on the main thread (a
    // 300-request encoder run there would freeze the page for seconds).
    assert.ok(ticks.maxGap < 1000, `the page stayed responsive (longest main-thread stall ${ticks.maxGap.toFixed(0)} ms)`);
    assert.equal(snap.lengths.length, 300);
    assert.deepEqual(snap.schemes.map((s) => s.spec.kind), ['pow2', 'optimal']);
    assert.ok(snap.schemes[1].ranges.length <= 6);
    for (const i of [0, 1]) await checkScheme(page, snap, i);
    t.diagnostic(`waste: ${snap.schemes.map((s) => `${s.label} ${s.stats.waste.toFixed(3)}`).join(', ')}`);
    assert.ok(snap.schemes[1].stats.waste <= snap.schemes[0].stats.waste, 'optimal wastes no more than pow2 on its own traffic');

    // The selected bucket's compiled-graph report is on the page.
    await showScheme(page, 0);
    const busiest = snap.schemes[0].stats.buckets.reduce((best, b, i, all) => (b.runs > all[best].runs ? i : best), 0);
    await page.selectOption('#bucket-select', String(busiest));
    await page.locator('#bucket-report .kernels li').first().waitFor();
    assert.match(await page.locator('#bucket-report').textContent(), /Passes \(compile/);
    await screenshot(page, `${artifacts}/screenshot.png`);

    // ---- changing a scheme resets and reruns
    const before = snap.runId;
    await showScheme(page, 0);
    await page.selectOption('#scheme-kind', 'linear');  // step 32 by default
    snap = await finishedRun(page, before);
    assert.ok(snap.runId > before, 'a new run started');
    assert.equal(snap.schemes[0].spec.kind, 'linear');
    assert.deepEqual(snap.schemes[0].ranges.map((r) => r.end - 1), [8, 40, 72, 104, 136, 168, 200, 232, 256]);
    for (const i of [0, 1]) await checkScheme(page, snap, i);

    // ---- pasted lengths: bad tokens and lengths past the ladder are reported on the page
    const before2 = snap.runId;
    await page.selectOption('#traffic-kind', 'lengths');
    await page.fill('#traffic-text', '5 12 0 -3 abc 2.5 5000 300 40');
    snap = await finishedRun(page, before2, 4);
    assert.deepEqual(snap.lengths, [5, 12, 300, 40]);
    const note = await page.locator('#traffic-problems').textContent();
    for (const bit of ['0 (below 1)', '-3 (below 1)', 'abc (not a number)', '2.5 (not a whole number)', "5000 (above the demo's limit of 2048)"]) {
      assert.ok(note.includes(bit), `traffic note mentions ${bit}: ${note}`);
    }
    await checkScheme(page, snap, 0, 1);  // 300 is past linear's 256: refused by the cache
    await checkScheme(page, snap, 1, 0);  // optimal fits the traffic, 300 included
    await showScheme(page, 0);
    assert.match(await page.locator('#run-notice').textContent(), /1 request was longer than the largest bucket \(256\) and refused/);
    assert.match(await page.locator('#scheme-hint').textContent(), /1 of 4 requests are longer than 256/);
    await screenshot(page, `${artifacts}/screenshot-pasted.png`);

    // ---- a phone-width layout of a default run (three schemes, one click)
    const phone = await newPage('phone', { viewport: { width: 390, height: 844 }, deviceScaleFactor: 2, isMobile: true, hasTouch: true });
    await phone.goto(`${url}?autorun=0`);
    await phone.waitForFunction(() => window.__rungs && window.__rungs.ready, null, { timeout: 60_000 });
    await phone.check('input[name="model"][value="mlp"]');  // the fastest model: this part is about layout
    await phone.click('#quick-compare');
    const phoneSnap = await finishedRun(phone, 0);
    assert.deepEqual(phoneSnap.schemes.map((s) => s.spec.kind), ['pow2', 'optimal', 'one']);
    const width = await phone.evaluate(() => document.documentElement.scrollWidth);
    assert.ok(width <= 390, `no horizontal scrolling at 390 px (page is ${width} px wide)`);
    // Tables fit, or scroll inside their card: no table box reaches past the screen's edge.
    // One evaluation, not $$eval: $$eval queries and maps in two round trips, and a re-render in
    // between (the bucket report arriving after the run) leaves detached elements with no card.
    const tables = await phone.evaluate(() => [...document.querySelectorAll('.table-wrap')].map((w) => {
      const r = w.getBoundingClientRect();
      const card = w.closest('.panel').getBoundingClientRect();
      return { id: w.querySelector('table').id || 'report', left: r.left, right: r.right, cardRight: card.right, scrolls: w.scrollWidth > w.clientWidth };
    }));
    for (const tb of tables) {
      assert.ok(tb.right <= 390 && tb.left >= 0 && tb.right <= tb.cardRight + 0.5, `table ${tb.id} stays inside its card and the screen (${JSON.stringify(tb)})`);
    }
    t.diagnostic(`phone: ${tables.map((tb) => `${tb.id}${tb.scrolls ? ' scrolls in its card' : ' fits'}`).join(', ')}`);
    // Each group of settings sits just above what it changes, not below every chart.
    const box = (sel) => phone.locator(sel).evaluate((e) => { const r = e.getBoundingClientRect(); return { top: r.top + scrollY, bottom: r.bottom + scrollY }; });
    for (const [setting, target] of [['#set-schemes', '#ladder-panel'], ['#set-traffic', '#rows-panels'], ['#set-execution', '#timeline-panel']]) {
      const a = await box(setting);
      const b = await box(target);
      assert.ok(a.bottom <= b.top && b.top - a.bottom < 40, `${setting} sits right above ${target} (${a.bottom} -> ${b.top})`);
    }
    assert.ok((await box('#set-schemes')).top < (await box('#chart-padding')).top, 'the scheme settings come before the charts they change');
    await screenshot(phone, `${artifacts}/screenshot-390.png`);
    // The full-page screenshot is exactly the phone's width (390 px at 2x): nothing sticks out.
    const png = readFileSync(`${artifacts}/screenshot-390.png`);
    assert.equal(png.readUInt32BE(16), 390 * 2, 'the phone screenshot has no horizontal overflow');
    await phone.close();

    assert.deepEqual(problems, [], 'no console errors or warnings, no failed requests');
    t.diagnostic(`screenshots in ${artifacts}`);
  });
});
