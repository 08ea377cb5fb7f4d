// SPDX-License-Identifier: Apache-2.0
// The demo's settings and outputs in headless Chromium (issue 19): a bad ladder field shows its
// error beside the field and never leaves old results looking current; an empty traffic box says
// what is missing; clearing a number field logs nothing; repetitions give p50/p90/p99 per scheme;
// the results export as JSON and CSV; the settings live in the URL (a reload restores them); the
// timeline names its scheme and its compile labels do not overlap; printing draws every chart at
// the print width. The console must stay clean throughout.
//
//   bash scripts/web-test          (builds first)
//   node --test web/test/          (after bash scripts/web --build-only)
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { withDemo } from '../chromium.mjs';

const here = (p) => fileURLToPath(new URL(p, import.meta.url));
const buildDir = process.env.RUNGS_WEB_DIR ?? here('../../build/web');
const artifacts = process.env.RUNGS_WEB_ARTIFACTS ?? here('../../build/web-test');
const WAIT = 180_000;

// The snapshot is taken in the same page task that sees the run finished (a debounced setting
// may start the next run right after).
// `current`: wait for the run of the settings now on the page (not an earlier one still ending).
async function finishedRun(page, after, status = 'done', current = true) {
  const handle = await page.waitForFunction(([id, cur]) => {
    const r = window.__rungs;
    return r && r.runId > id && (r.status === 'done' || r.status === 'error') && (!cur || !r.stale) && structuredClone(r);
  }, [after, current], { timeout: WAIT, polling: 100 });
  const snap = await handle.jsonValue();
  assert.equal(snap.status, status, `the run ended as ${snap.status}`);
  return snap;
}

async function showScheme(page, i) {
  await page.locator('#scheme-tabs input').nth(i).check();
  await page.waitForFunction((k) => window.__rungs.selected === k, i);
}

/** Parses RFC 4180 CSV (quoted fields with commas, doubled quotes). */
function parseCsv(text) {
  const rows = [];
  let row = [];
  let field = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') { field += '"'; i++; } else if (c === '"') quoted = false; else field += c;
    } else if (c === '"') quoted = true;
    else if (c === ',') { row.push(field); field = ''; } else if (c === '\r') { /* CRLF */ } else if (c === '\n') { row.push(field); rows.push(row); row = []; field = ''; } else field += c;
  }
  if (field !== '' || row.length) { row.push(field); rows.push(row); }
  return rows;
}

test('the demo settings and outputs in headless Chromium', { timeout: 600_000 }, async (t) => {
  assert.ok(existsSync(`${buildDir}/index.html`), `${buildDir}/index.html missing: bash scripts/web --build-only`);
  mkdirSync(artifacts, { recursive: true });
  await withDemo(buildDir, {}, async ({ url, problems, newPage }) => {
    const page = await newPage('desktop', { acceptDownloads: true });
    await page.goto(`${url}?autorun=0`);
    await page.waitForFunction(() => window.__rungs && window.__rungs.ready, null, { timeout: 60_000 });

    // ---- a first run: mlp, 120 requests, pow2 and optimal, 3 repetitions
    await page.check('input[name="model"][value="mlp"]');
    await page.fill('#traffic-count', '120');
    await page.fill('#traffic-seed', '3');
    await page.fill('#repetitions', '3');
    await page.waitForTimeout(600);
    await page.click('#run');
    let snap = await finishedRun(page, 0);
    assert.equal(snap.repetitions, 3);
    for (const s of snap.schemes) {
      assert.equal(s.repTotals.length, 3, `scheme ${s.letter}: one total per repetition`);
      const { p50, p90, p99, count } = s.latency;
      assert.equal(count, 3 * s.stats.runs, 'latency over every request of every repetition');
      assert.ok(p50 > 0 && p50 <= p90 && p90 <= p99, `p50 ${p50} <= p90 ${p90} <= p99 ${p99}`);
    }
    // The compare table shows them, and the mean ± sd of the totals.
    await page.waitForFunction(() => [...document.querySelectorAll('#compare-table td[data-field="p99"]')].every((td) => td.dataset.value !== ''));
    const cmp = await page.evaluate(() => [...document.querySelectorAll('#compare-table tbody tr')].map((tr) => Object.fromEntries(
      [...tr.querySelectorAll('td[data-field]')].map((td) => [td.dataset.field, td.dataset.value === '' ? null : Number(td.dataset.value)]))));
    const heads = await page.evaluate(() => [...document.querySelectorAll('#compare-table thead th')].map((th) => th.textContent));
    for (const h of ['p50', 'p90', 'p99', 'Total, mean ± sd of 3']) assert.ok(heads.includes(h), `compare table has ${h}: ${heads}`);
    snap.schemes.forEach((s, i) => {
      assert.equal(cmp[i].p50, s.latency.p50);
      assert.equal(cmp[i].p99, s.latency.p99);
      const mean = s.repTotals.reduce((a, b) => a + b, 0) / 3;
      assert.ok(Math.abs(cmp[i].totalMean - mean) < 1e-9, 'mean of the repetition totals');
    });

    // ---- the timeline names its scheme; its compile labels do not overlap
    await showScheme(page, 0);
    await page.waitForSelector('body[data-charts="idle"]');
    assert.equal(await page.locator('#timeline-scheme').textContent(), `A · ${snap.schemes[0].label}`);
    const boxes = JSON.parse(await page.locator('#chart-timeline').getAttribute('data-labels'));
    assert.ok(boxes.length >= 1, 'some compile labels are shown');
    for (let a = 0; a < boxes.length; a++) {
      for (let b = a + 1; b < boxes.length; b++) {
        const [p, q] = [boxes[a], boxes[b]];
        const overlap = p.x < q.x + q.w && q.x < p.x + p.w && p.y < q.y + q.h && q.y < p.y + p.h;
        assert.ok(!overlap, `timeline labels ${p.text} and ${q.text} overlap`);
      }
    }
    t.diagnostic(`timeline: ${boxes.length} of ${snap.schemes[0].stats.compiles} compile labels shown`);

    // ---- export: JSON and CSV with the numbers on the page
    const [jsonDl] = await Promise.all([page.waitForEvent('download'), page.click('#export-json')]);
    const exported = JSON.parse(readFileSync(await jsonDl.path(), 'utf8'));
    assert.equal(jsonDl.suggestedFilename(), 'rungs-demo-mlp.json');
    assert.equal(exported.format, 'rungs-demo-results');
    assert.deepEqual(exported.lengths, snap.lengths);
    exported.schemes.forEach((x, i) => {
      assert.deepEqual(x.stats, snap.schemes[i].stats, 'the final stats() as the page has them');
      assert.deepEqual(x.latencyMs, snap.schemes[i].latency);
      assert.deepEqual(x.repTotalsMs, snap.schemes[i].repTotals);
    });
    const [csvDl] = await Promise.all([page.waitForEvent('download'), page.click('#export-csv')]);
    const csv = parseCsv(readFileSync(await csvDl.path(), 'utf8'));
    const [header, ...rows] = csv;
    assert.equal(rows.length, snap.schemes.length);
    for (const row of rows) assert.equal(row.length, header.length, 'every CSV row has the header\'s fields');
    const col = (name) => header.indexOf(name);
    rows.forEach((row, i) => {
      const st = snap.schemes[i].stats;
      assert.equal(row[col('label')], snap.schemes[i].label);
      assert.equal(Number(row[col('requests')]), st.runs);
      assert.equal(Number(row[col('cache_hits')]), st.hits, 'cache_hits: requests served by a compiled bucket');
      assert.equal(Number(row[col('waste')]), st.waste);
      assert.equal(Number(row[col('p90_ms')]), snap.schemes[i].latency.p90);
    });
    writeFileSync(`${artifacts}/export.csv`, readFileSync(await csvDl.path()));

    // ---- the settings are in the URL: a reload (a shared link) restores them
    const shared = page.url();
    const back = await newPage('reloaded');
    await back.goto(shared.replace(/autorun=0/, 'autorun=0'));
    await back.waitForFunction(() => window.__rungs && window.__rungs.ready, null, { timeout: 60_000 });
    const restored = await back.evaluate(() => window.__rungs.settings);
    assert.deepEqual(restored, snap.settings, 'the reloaded page has the same settings');
    assert.equal(await back.locator('#repetitions').inputValue(), '3');
    assert.equal(await back.locator('#traffic-count').inputValue(), '120');
    assert.ok(await back.locator('input[name="model"][value="mlp"]').isChecked());
    await back.close();

    // ---- a bad list ladder: the error beside the field, and the old results not shown as current
    const before = snap.runId;
    await showScheme(page, 0);
    await page.selectOption('#scheme-kind', 'list');
    snap = await finishedRun(page, before);
    const good = snap.runId;
    await page.fill('#scheme-extents', '16, 32, abc');
    // At once (before the new plan arrives) the old results are marked stale...
    await page.waitForFunction(() => window.__rungs.stale === true);
    assert.equal(await page.locator('#results').getAttribute('data-stale'), 'true');
    assert.ok(await page.locator('#stale-note').isVisible(), 'a note says the results are for earlier settings');
    // ...then the rerun has scheme A invalid: its error beside the extents field, no stats for it.
    snap = await finishedRun(page, good);
    assert.equal(snap.stale, false);
    assert.match(snap.schemes[0].error, /extent 'abc' is not a whole number/);
    assert.equal(snap.schemes[0].stats, null, 'the invalid scheme shows no results');
    assert.equal(await page.locator('#scheme-extents').getAttribute('aria-invalid'), 'true');
    assert.match(await page.locator('#scheme-extents-error').textContent(), /extent 'abc' is not a whole number/);
    const describedBy = await page.locator('#scheme-extents').getAttribute('aria-describedby');
    assert.equal(describedBy, 'scheme-extents-error');
    assert.equal(await page.locator('#big-waste').textContent(), '—', 'no waste shown for the invalid scheme');
    assert.match(await page.locator('#big-waste-sub').textContent(), /invalid/);
    // Fixing it clears the message and runs again.
    await page.fill('#scheme-extents', '16, 32, 64, 256');
    snap = await finishedRun(page, snap.runId);
    assert.equal(snap.schemes[0].error, null);
    assert.equal(await page.locator('#scheme-extents-error').textContent(), '');

    // ---- clearing number fields logs nothing (no "The specified value NaN cannot be parsed")
    await showScheme(page, 1);
    await page.fill('#scheme-budget', '');
    await page.fill('#traffic-count', '');
    await page.fill('#repetitions', '');
    await page.waitForTimeout(800);
    assert.match(await page.locator('#scheme-budget-error').textContent(), /Bucket budget must be a whole number from 1 to 32, got nothing/);
    assert.match(await page.locator('#repetitions-error').textContent(), /Repetitions must be a whole number/);
    await page.fill('#traffic-count', '50');
    await page.fill('#scheme-budget', '4');
    await page.fill('#repetitions', '1');
    await page.waitForFunction(() => {
      const r = window.__rungs;
      return r.status === 'done' && !r.stale && r.lengths.length === 50 && r.repetitions === 1;
    }, null, { timeout: WAIT, polling: 100 });

    // ---- an empty, or whitespace-only, traffic box says what is missing
    const before2 = (await page.evaluate(() => window.__rungs.runId));
    await page.selectOption('#traffic-kind', 'lengths');
    // Typed text reaches the URL (written at most every 250 ms while typing).
    await page.fill('#traffic-text', '');
    await page.locator('#traffic-text').pressSequentially('12 40 7 128 33 '.repeat(10), { delay: 0 });
    await page.waitForFunction(() => new URLSearchParams(location.search).get('traffic').includes('12 40 7 128 33 12 40'));
    await page.fill('#traffic-text', '   \n  ');
    await page.waitForFunction((id) => {
      const r = window.__rungs;
      return r.runId > id && r.status === 'error' && r.lengths.length === 0 && !r.stale;
    }, before2, { timeout: WAIT, polling: 100 });
    snap = await page.evaluate(() => structuredClone(window.__rungs));
    assert.match(await page.locator('#traffic-problems').textContent(), /The box is empty: paste request lengths/);
    assert.match(await page.locator('#run-status').textContent(), /No requests to run/);
    await page.selectOption('#traffic-kind', 'text');
    await page.fill('#traffic-text', ' ... ');
    await page.waitForFunction(() => /no sentence with words/.test(document.getElementById('traffic-problems').textContent));
    await page.selectOption('#traffic-kind', 'lognormal');
    await page.waitForTimeout(100);
    snap = await finishedRun(page, snap.runId, 'done', true);
    assert.equal(snap.settings.traffic.kind, 'lognormal');

    // ---- printing: the settings are hidden and every chart is drawn again at the print width
    await page.waitForSelector('body[data-charts="idle"]');
    await page.emulateMedia({ media: 'print' });
    await page.evaluate(() => window.dispatchEvent(new Event('beforeprint')));
    assert.equal(await page.evaluate(() => getComputedStyle(document.getElementById('controls')).display), 'none');
    const printWidths = await page.evaluate(() => [...document.querySelectorAll('.chart')].map((e) => e.dataset.printWidth));
    assert.deepEqual(printWidths, printWidths.map(() => '680'), 'every chart drawn at the print width');
    const pdf = await page.pdf({ path: `${artifacts}/print.pdf`, format: 'A4', printBackground: true });
    assert.ok(pdf.length > 50_000, `the printed page has the charts (${pdf.length} bytes)`);
    await page.evaluate(() => window.dispatchEvent(new Event('afterprint')));
    await page.emulateMedia({ media: null });
    assert.deepEqual(await page.evaluate(() => [...document.querySelectorAll('.chart')].map((e) => e.dataset.printWidth)), printWidths.map(() => ''));

    assert.deepEqual(problems, [], 'no console errors or warnings, no page errors, no failed requests');
  });
});
