// SPDX-License-Identifier: Apache-2.0
// The demo page: controls, the worker conversation, and the pictures. The worker (worker.js) owns
// the wasm module; this thread only draws what it reports. See docs/web.md.
import '@fontsource-variable/inter';
import '@fontsource-variable/jetbrains-mono';
import './style.css';
import { compareChart, ladderChart, paddingChart, timelineChart, wasteChart } from './charts.js';
import { DEFAULT_SCHEME, KINDS, schemeLabel } from './schemes.js';
import { PRESETS } from './traffic.js';
import { exportCsv, exportJson } from './export.js';
import { MAX_REPETITIONS, MAX_SCHEMES, settingsFromQuery, settingsToQuery } from './url.js';
import { initOnnxFile } from './onnx-file.js';
import { cardsView, noticeText, runbarView } from './summary.js';
import { addedScheme, problemsText, quickSchemes, repetitionsError, schemeErrorPlace, schemeHint, trafficFields, trafficSummary } from './editor.js';
import { bucketOptions, bucketReport, bucketTableRows, compareRows, compareTable, defaultBucket } from './tables.js';
import { initTextMode } from './text.js';
import classifierDesc from '../../examples/models/classifier.json';
import classifierJson from '../../examples/models/classifier.json?url';
import classifierWeights from '../../examples/models/classifier.safetensors?url';
import encoderDesc from '../../examples/models/encoder.json';
import encoderJson from '../../examples/models/encoder.json?url';
import encoderWeights from '../../examples/models/encoder.safetensors?url';
import mlpDesc from '../../examples/models/mlp.json';
import mlpJson from '../../examples/models/mlp.json?url';
import mlpWeights from '../../examples/models/mlp.safetensors?url';

const abs = (u) => new URL(u, document.baseURI).href;
const MODELS = {
  mlp: { desc: mlpDesc, urls: { json: abs(mlpJson), weights: abs(mlpWeights) } },
  encoder: { desc: encoderDesc, urls: { json: abs(encoderJson), weights: abs(encoderWeights) } },
  classifier: { desc: classifierDesc, urls: { json: abs(classifierJson), weights: abs(classifierWeights) } },
};
const COLORS = ['#4f46e5', '#0d9488', '#d97706'];
const LETTERS = ['A', 'B', 'C'];

const SAMPLE_LENGTHS = '12 40 7 128 33 19 64 250 5 17 24 31 9 96 48 22 16 3 180 27';
const SAMPLE_TEXT = `A bucketed cache compiles one graph per bucket of request lengths. Each request is padded up to its bucket's extent.
Short chat turns are cheap. Long documents arrive now and then, and they need a big bucket!
How much of the work is padding? It depends on the ladder and on the traffic. Try a few ladders and see which one wastes the least for the lengths you actually get.`;

// ------------------------------------------------------------------------------------------ state

const params = new URLSearchParams(location.search);
const state = {
  model: 'encoder',
  active: false,
  repetitions: 1,  // each scheme runs the requests this many times, each with a fresh cache
  schemes: [{ ...DEFAULT_SCHEME }, { ...DEFAULT_SCHEME, kind: 'optimal', budget: 6 }],
  selected: 0,
  traffic: { kind: 'lognormal', count: 300, max: 256, median: 24, seed: 1, lengthsText: SAMPLE_LENGTHS, text: SAMPLE_TEXT },
  plan: null,  // the worker's answer for the current settings: lengths, problems, ladders
  run: null,  // the run on screen: { id, status, model, active, lengths, schemes, results }
  live: params.get('autorun') !== '0',  // rerun whenever a setting changes
  bucket: -1,  // selected bucket of the shown scheme
  bucketPicked: false,  // false: follow the busiest bucket
  ready: false,
  env: null,
  runsStarted: 0,
};

// ------------------------------------------------------------------------------------------ URL

// The settings live in the URL (url.js), so a view can be shared and a reload restores it.
function readUrl() {
  const got = settingsFromQuery(location.search, { ...settings(), selected: state.selected }, Object.keys(MODELS));
  Object.assign(state, { model: got.model, active: got.active, repetitions: got.repetitions, schemes: got.schemes, selected: got.selected, traffic: got.traffic });
}

function settings() {
  return { model: state.model, active: state.active, repetitions: state.repetitions, schemes: state.schemes, traffic: state.traffic };
}
// The settings a run depends on, as text (a run whose key differs from the current one is stale).
const settingsKey = () => JSON.stringify(settings());

// Written at most every 250 ms (typing in a box would otherwise call replaceState per key, which
// browsers throttle with a console warning past 100 calls in 10 s).
let lastUrl = '';
let urlTimer = 0;
function writeUrl() {
  if (!urlTimer) urlTimer = setTimeout(writeUrlNow, 250);
}
function writeUrlNow() {
  urlTimer = 0;
  const url = `${location.pathname}?${settingsToQuery({ ...settings(), selected: state.selected }, location.search)}`;
  if (url !== lastUrl) {
    lastUrl = url;
    history.replaceState(null, '', url);
  }
}

const $ = (id) => document.getElementById(id);
const el = {
  env: $('env'),
  modelDesc: $('model-description'),
  tabs: $('scheme-tabs'),
  kind: $('scheme-kind'),
  fields: {
    min: $('scheme-min'), max: $('scheme-max'), ratio: $('scheme-ratio'), step: $('scheme-step'),
    extents: $('scheme-extents'), budget: $('scheme-budget'),
  },
  head: $('scheme-head'),
  schemeError: $('scheme-error'),
  schemeHint: $('scheme-hint'),
  add: $('add-scheme'),
  remove: $('remove-scheme'),
  quick: $('quick-compare'),
  active: $('active'),
  repetitions: $('repetitions'),
  repetitionsError: $('repetitions-error'),
  trafficKind: $('traffic-kind'),
  count: $('traffic-count'),
  max: $('traffic-max'),
  median: $('traffic-median'),
  seed: $('traffic-seed'),
  text: $('traffic-text'),
  textLabel: $('traffic-text-label'),
  problems: $('traffic-problems'),
  trafficSummary: $('traffic-summary'),
  run: $('run'),
  stop: $('stop'),
  status: $('run-status'),
  runCount: $('run-count'),
  progress: $('progress'),
  heroScheme: $('hero-scheme'),
  bigWaste: $('big-waste'),
  bigWasteSub: $('big-waste-sub'),
  cards: {
    requests: [$('card-requests'), $('card-requests-sub')],
    compiles: [$('card-compiles'), $('card-compiles-sub')],
    time: [$('card-time'), $('card-time-sub')],
    memory: [$('card-memory'), $('card-memory-sub')],
  },
  notice: $('run-notice'),
  logAxis: $('log-axis'),
  compareBody: document.querySelector('#compare-table tbody'),
  bucketSelect: $('bucket-select'),
  bucketReport: $('bucket-report'),
  bucketBody: document.querySelector('#bucket-table tbody'),
  bucketTableScheme: $('bucket-table-scheme'),
};

// ------------------------------------------------------------------------------------------ worker

const worker = new Worker(new URL('./worker.js', import.meta.url), { type: 'module' });
let planId = 0;
let runId = 0;
let threadsId = 0;
const THREADS_SIZE = 256;  // the matmul the threads comparison times (size x size x size)
$('threads-compare').addEventListener('click', () => {
  $('threads-compare').disabled = true;
  $('threads-result').textContent = 'timing…';
  worker.postMessage({ type: 'threads', id: ++threadsId, size: THREADS_SIZE });
});

worker.onmessage = (ev) => {
  const m = ev.data;
  switch (m.type) {
    case 'ready':
      state.ready = true;
      state.env = { version: m.version, isa: m.isa, variant: m.variant, maxThreads: m.maxThreads };
      el.env.textContent = `rungs ${m.version} · ${m.isa === 'wasm' ? 'WebAssembly SIMD128' : m.isa} · Web Worker · ` +
        (m.variant === 'threads'
          ? `threaded variant, up to ${m.maxThreads} threads`
          : 'single-threaded variant (the page is not cross-origin isolated, or has one core)');
      $('threads-compare').disabled = false;
      $('threads-compare').textContent = m.maxThreads > 1 ? `Compare 1 and ${m.maxThreads} threads` : 'Time 1 thread';
      el.env.className = 'env ok';
      $('foot-version').textContent = m.version;
      publish();
      replan();
      textMode.ready();
      break;
    case 'onnx-loaded':
    case 'onnx-error':
      onnxFile.onMessage(m);
      break;
    case 'threads':
      if (m.id !== threadsId) return;
      $('threads-compare').disabled = false;
      if (m.error) {
        $('threads-result').textContent = `failed: ${m.error}`;
      } else {
        const rows = m.rows.map((r) => `${r.threads} thread${r.threads > 1 ? 's' : ''}: ${r.ms.toFixed(2)} ms (${r.gflops.toFixed(1)} GFLOP/s)`);
        const speedup = m.rows.length > 1 ? ` · ${(m.rows[0].ms / m.rows[m.rows.length - 1].ms).toFixed(2)}x` : '';
        $('threads-result').textContent = `matmul ${THREADS_SIZE}: ${rows.join(', ')}${speedup}${m.equal ? '' : ' · OUTPUTS DIFFER'}`;
      }
      state.threads = m;
      publish();
      break;
    case 'plan':
      if (m.planId !== planId) return;
      state.plan = m;
      renderControls();
      // The real text mode has its own results: synthetic runs wait until the page is back.
      if (state.live && !textMode.active()) startRun();
      else renderResults();
      textMode.schemeChanged();
      break;
    case 'scheme-start':
    case 'progress':
    case 'scheme-done':
    case 'done':
    case 'cancelled':
    case 'error':
      onRunMessage(m);
      break;
    default:
      textMode.onMessage(m);
      break;
  }
};
worker.onerror = (ev) => {
  ev.preventDefault();
  el.env.textContent = `The WebAssembly worker failed to start: ${ev.message || 'unknown error'}`;
  el.env.className = 'env bad';
};

// ------------------------------------------------------------------------------------------ .onnx

// A model of the user's own (onnx-file.js): once loaded it is the model 'onnx' of the controls.
const onnxFile = initOnnxFile({
  worker,
  onLoaded: (m) => {
    const inputs = m.inputs.map((i) => `${i.name} (${i.dtype}${i.role !== 'values' ? `, ${i.role}` : ''})`).join(', ');
    MODELS.onnx = {
      desc: { description: `${m.fileName}: ${m.paramCount.toLocaleString('en-US')} parameters; inputs ${inputs}; outputs ${m.outputs.join(', ')}`,
        bucket_dim: m.bucketDim },
      urls: null,
    };
    state.model = 'onnx';
    changed(0);
  },
});

function trafficSpec() {
  const t = state.traffic;
  if (t.kind === 'lengths') return { kind: 'lengths', text: t.lengthsText };
  if (t.kind === 'text') return { kind: 'text', text: t.text };
  return { kind: t.kind, count: t.count, max: t.max, seed: t.seed, median: t.median, sigma: 0.8 };
}

function replan() {
  if (!state.ready) return;
  planId++;
  worker.postMessage({ type: 'plan', planId, traffic: trafficSpec(), schemes: state.schemes.map((s) => ({ ...s })) });
}

let replanTimer = 0;
function replanSoon(delay = 220) {
  clearTimeout(replanTimer);
  replanTimer = setTimeout(replan, delay);
}

function startRun() {
  const plan = state.plan;
  if (!plan) return;
  if (state.run && state.run.status === 'running') worker.postMessage({ type: 'cancel', runId: state.run.id });
  runId++;
  state.runsStarted++;
  const schemes = state.schemes.map((spec, i) => ({
    spec: { ...spec },
    label: schemeLabel(spec),
    letter: LETTERS[i],
    color: COLORS[i],
    ranges: plan.ladders[i].ranges,
    error: plan.ladders[i].error,
    expectedWaste: plan.ladders[i].expectedWaste,
  }));
  const runnable = schemes.map((s, i) => (s.ranges ? i : -1)).filter((i) => i >= 0);
  const reps = state.repetitions;
  const repsOk = repetitionsError(reps) === '';
  state.run = {
    id: runId,
    key: settingsKey(),
    status: 'running',
    model: state.model,
    active: state.active,
    repetitions: repsOk ? reps : 1,
    lengths: plan.lengths,
    schemes,
    runnable,
    results: schemes.map(() => null),
    current: -1,
    message: '',
  };
  state.bucket = -1;
  state.bucketPicked = false;
  state.live = true;
  if (plan.lengths.length === 0 || runnable.length === 0 || !repsOk) {
    state.run.status = 'error';
    state.run.message = plan.lengths.length === 0 ? 'No requests to run: fix the traffic (see the notes under it).'
      : runnable.length === 0 ? 'No scheme can run: fix the scheme settings (see the message beside the field).'
        : `No run: repetitions must be a whole number from 1 to ${MAX_REPETITIONS}.`;
    publish();
    renderAll();
    return;
  }
  worker.postMessage({
    type: 'run',
    runId,
    model: state.model,
    modelUrls: MODELS[state.model].urls,  // null for a loaded .onnx (the worker holds it)
    active: state.active,
    repetitions: state.run.repetitions,
    lengths: plan.lengths,
    schemes: runnable.map((i) => ({ ranges: schemes[i].ranges })),
  });
  publish();
  renderAll();
}

function stopRun() {
  state.live = false;
  if (state.run && state.run.status === 'running') {
    worker.postMessage({ type: 'cancel', runId: state.run.id });
    state.run.status = 'stopped';
  }
  publish();
  renderAll();
}

function newResult() {
  return { done: 0, events: [], stats: null, final: false, reports: null, heap: null, totalMs: 0, refused: 0, cumActual: 0, cumPadded: 0, waste: [], repTotals: null, latency: null };
}

function absorb(res, events) {
  for (const e of events) {
    res.events.push(e);
    if (e.upper === null) {
      res.refused++;
      continue;
    }
    res.totalMs += e.ms;
    res.cumActual += e.key;
    res.cumPadded += e.upper;
    res.waste.push([e.i + 1, res.cumPadded / res.cumActual]);
  }
}

function onRunMessage(m) {
  const run = state.run;
  if (!run || m.runId !== run.id) return;
  const index = m.scheme === undefined ? -1 : run.runnable[m.scheme];
  if (m.type === 'scheme-start') {
    run.results[index] = newResult();
    run.current = index;
  } else if (m.type === 'progress') {
    const res = run.results[index];
    absorb(res, m.events);
    res.done = m.done;
    if (m.stats) {
      res.stats = m.stats;
      res.heap = m.heap;
    }
  } else if (m.type === 'scheme-done') {
    const res = run.results[index];
    res.stats = m.stats;
    res.reports = m.reports;
    res.heap = m.heap;
    res.final = true;
    res.totalMs = m.totalMs;
    res.refused = m.refused;
    res.done = run.lengths.length * run.repetitions;
    res.repTotals = m.repTotals;
    res.latency = m.latency;
  } else if (m.type === 'done') {
    run.status = 'done';
    run.current = -1;
  } else if (m.type === 'cancelled') {
    run.status = 'stopped';
  } else if (m.type === 'error') {
    run.status = 'error';
    run.message = `The run failed: ${m.message}`;
  }
  publish();
  scheduleRender(m.type === 'progress' ? 200 : 0);
}

// ------------------------------------------------------------------------------------------ test hook

// window.__rungs: a plain snapshot of what the page shows, for the browser test (and the curious).
function publish() {
  const run = state.run;
  document.body.dataset.status = run ? run.status : 'idle';
  document.body.dataset.runId = run ? String(run.id) : '';
  writeUrl();
  window.__rungs = {
    ready: state.ready,
    env: state.env,
    threads: state.threads ?? null,
    status: run ? run.status : 'idle',
    runId: run ? run.id : 0,
    runsStarted: state.runsStarted,
    model: run ? run.model : state.model,
    active: run ? run.active : state.active,
    repetitions: run ? run.repetitions : state.repetitions,
    settings: JSON.parse(settingsKey()),
    stale: !!run && run.key !== settingsKey(),
    problems: state.plan ? state.plan.problems : [],
    lengths: run ? run.lengths : state.plan ? state.plan.lengths : [],
    selected: state.selected,
    schemes: (run ? run.schemes : []).map((s, i) => {
      const r = run.results[i];
      return {
        letter: s.letter,
        label: s.label,
        spec: s.spec,
        ranges: s.ranges,
        error: s.error,
        expectedWaste: s.expectedWaste,
        done: r ? r.done : 0,
        final: r ? r.final : false,
        stats: r && r.final ? r.stats : null,  // the worker's final cache.stats() of this scheme
        totalMs: r ? r.totalMs : null,
        refused: r ? r.refused : 0,
        repTotals: r && r.final ? r.repTotals : null,
        latency: r && r.final ? r.latency : null,  // per-request ms percentiles over every repetition
      };
    }),
  };
}

// ------------------------------------------------------------------------------------------ controls

function buildStaticControls() {
  for (const [k, v] of Object.entries(KINDS)) el.kind.add(new Option(v.label, k));
  for (const [k, v] of Object.entries(PRESETS)) el.trafficKind.add(new Option(v, k));
  // A message slot beside each scheme field: an invalid setting is named next to the input.
  for (const [k, input] of Object.entries(el.fields)) {
    const note = document.createElement('span');
    note.className = 'field-error';
    note.id = `scheme-${k}-error`;
    note.setAttribute('aria-live', 'polite');
    input.insertAdjacentElement('afterend', note);
  }
}

// Sets a number input from the state without fighting the user: an empty field (NaN in the state)
// stays empty (assigning NaN would log "The specified value NaN cannot be parsed"), and a field
// whose text already means this number keeps its text.
function setNumber(input, v) {
  const want = typeof v === 'number' && Number.isFinite(v) ? v : NaN;
  if (Object.is(readNumber(input), want)) return;
  input.value = Number.isNaN(want) ? '' : String(want);
}

function syncInputs() {
  document.querySelector(`input[name="model"][value="${state.model}"]`).checked = true;
  const s = state.schemes[state.selected];
  el.kind.value = s.kind;
  for (const [k, input] of Object.entries(el.fields)) {
    if (k === 'extents') {
      if (input.value !== (s[k] ?? '')) input.value = s[k] ?? '';
    } else {
      setNumber(input, s[k]);
    }
  }
  el.head.checked = !!s.head;
  for (const label of document.querySelectorAll('[data-param]')) {
    label.hidden = !KINDS[s.kind].params.includes(label.dataset.param);
  }
  el.active.checked = state.active;
  setNumber(el.repetitions, state.repetitions);
  const repsError = repetitionsError(state.repetitions);
  el.repetitionsError.textContent = repsError;
  if (!repsError) el.repetitions.removeAttribute('aria-invalid');
  else el.repetitions.setAttribute('aria-invalid', 'true');
  const t = state.traffic;
  el.trafficKind.value = t.kind;
  setNumber(el.count, t.count);
  setNumber(el.max, t.max);
  setNumber(el.median, t.median);
  setNumber(el.seed, t.seed);
  const fields = trafficFields(t.kind);
  for (const label of document.querySelectorAll('[data-traffic]')) label.hidden = !fields.shown(label.dataset.traffic);
  el.textLabel.textContent = fields.textLabel;
  const want = t.kind === 'text' ? t.text : t.lengthsText;
  if (el.text.value !== want) el.text.value = want;
}

function renderTabs() {
  const ladders = state.plan ? state.plan.ladders : [];
  el.tabs.replaceChildren(...state.schemes.map((s, i) => {
    const label = document.createElement('label');
    label.className = 'scheme-tab';
    label.style.setProperty('--tab-color', COLORS[i]);
    const input = document.createElement('input');
    input.type = 'radio';
    input.name = 'scheme-tab';
    input.value = String(i);
    input.checked = i === state.selected;
    input.setAttribute('aria-label', `Scheme ${LETTERS[i]}: ${schemeLabel(s)}`);
    const tab = document.createElement('span');
    tab.className = 'tab';
    tab.innerHTML = `<span class="dot" style="background:${COLORS[i]}"></span><span class="letter">${LETTERS[i]}</span><span class="name"></span>`;
    tab.querySelector('.name').textContent = schemeLabel(s);
    if (ladders[i] && ladders[i].error) {
      const bad = document.createElement('span');
      bad.className = 'bad';
      bad.textContent = 'invalid';
      tab.append(bad);
    }
    label.append(input, tab);
    return label;
  }));
  el.add.disabled = state.schemes.length >= MAX_SCHEMES;
  el.remove.disabled = state.schemes.length <= 1;
}

function renderControls() {
  renderTabs();
  syncInputs();
  const d = MODELS[state.model].desc;
  el.modelDesc.textContent = `${d.description}. Bucket dimension: ${d.bucket_dim}.`;
  const plan = state.plan;
  const lad = plan ? plan.ladders[state.selected] : null;
  // An error about one field goes beside it; the library's own refusals (a ladder it rejects) under
  // the editor.
  const place = schemeErrorPlace(lad, Object.keys(el.fields));
  el.schemeError.textContent = place.schemeError;
  for (const [k, input] of Object.entries(el.fields)) {
    const note = $(`scheme-${k}-error`);
    if (k === place.field) {
      note.textContent = place.fieldError;
      input.setAttribute('aria-invalid', 'true');
      input.setAttribute('aria-describedby', note.id);
    } else {
      note.textContent = '';
      input.removeAttribute('aria-invalid');
      input.removeAttribute('aria-describedby');
    }
  }
  el.schemeHint.textContent = plan ? schemeHint(lad, plan.lengths.length) : '';
  if (plan) {
    el.problems.textContent = problemsText(plan.problems);
    el.trafficSummary.textContent = trafficSummary(plan.lengths);
  }
}

function readNumber(input) {
  return input.value.trim() === '' ? NaN : Number(input.value);
}

function changed(rerunDelay) {
  renderTabs();
  syncInputs();
  renderStale();
  replanSoon(rerunDelay);
}

// Results of a run made with other settings than the ones now on the page are marked as such
// (dimmed, with a note) until the new run replaces them.
function renderStale() {
  const run = state.run;
  const stale = !!run && run.key !== settingsKey();
  $('results').dataset.stale = stale ? 'true' : 'false';
  $('stale-note').hidden = !stale;
  publish();
}

function wireControls() {
  document.querySelectorAll('input[name="model"]').forEach((r) => r.addEventListener('change', () => {
    state.model = r.value;
    changed(0);
  }));
  el.tabs.addEventListener('change', (ev) => {
    state.selected = Number(ev.target.value);
    textMode.schemeChanged();
    writeUrl();
    state.bucket = -1;
    state.bucketPicked = false;
    renderControls();
    publish();
    renderResults();
  });
  el.kind.addEventListener('change', () => {
    state.schemes[state.selected].kind = el.kind.value;
    changed(0);
  });
  for (const [k, input] of Object.entries(el.fields)) {
    input.addEventListener('input', () => {
      state.schemes[state.selected][k] = k === 'extents' ? input.value : readNumber(input);
      renderTabs();
      renderStale();
      replanSoon(450);
    });
  }
  el.head.addEventListener('change', () => {
    state.schemes[state.selected].head = el.head.checked;
    changed(0);
  });
  el.add.addEventListener('click', () => {
    if (state.schemes.length >= MAX_SCHEMES) return;
    state.schemes.push(addedScheme(state.schemes));
    state.selected = state.schemes.length - 1;
    changed(0);
  });
  el.remove.addEventListener('click', () => {
    if (state.schemes.length <= 1) return;
    state.schemes.splice(state.selected, 1);
    state.selected = Math.max(0, state.selected - 1);
    changed(0);
  });
  el.quick.addEventListener('click', () => {
    state.schemes = quickSchemes(state.traffic);
    state.selected = 0;
    state.live = true;
    changed(0);
  });
  el.active.addEventListener('change', () => {
    state.active = el.active.checked;
    changed(0);
  });
  el.repetitions.addEventListener('input', () => {
    state.repetitions = readNumber(el.repetitions);
    syncInputs();
    renderStale();
    replanSoon(450);
  });
  el.trafficKind.addEventListener('change', () => {
    state.traffic.kind = el.trafficKind.value;
    changed(0);
  });
  for (const [k, input] of [['count', el.count], ['max', el.max], ['median', el.median], ['seed', el.seed]]) {
    input.addEventListener('input', () => {
      state.traffic[k] = readNumber(input);
      renderStale();
      replanSoon(450);
    });
  }
  el.text.addEventListener('input', () => {
    if (state.traffic.kind === 'text') state.traffic.text = el.text.value;
    else state.traffic.lengthsText = el.text.value;
    renderStale();
    replanSoon(600);
  });
  $('controls').addEventListener('submit', (ev) => {
    ev.preventDefault();
    state.live = true;
    clearTimeout(replanTimer);
    replan();
  });
  el.stop.addEventListener('click', stopRun);
  $('export-json').addEventListener('click', () => download('json'));
  $('export-csv').addEventListener('click', () => download('csv'));
  el.logAxis.addEventListener('change', () => renderResults());
  el.bucketSelect.addEventListener('change', () => {
    selectBucket(Number(el.bucketSelect.value));
  });
}

// ------------------------------------------------------------------------------------------ export

function download(kind) {
  const run = state.run;
  if (!run) return;
  const text = kind === 'json'
    ? exportJson(run, { rungs: state.env, url: location.href, settings: JSON.parse(run.key) })
    : exportCsv(run);
  const blob = new Blob([text], { type: kind === 'json' ? 'application/json' : 'text/csv' });
  const a = document.createElement('a');
  a.href = URL.createObjectURL(blob);
  a.download = `rungs-demo-${run.model}.${kind}`;
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(a.href), 10_000);
}

// ------------------------------------------------------------------------------------------ results

const chartLadder = ladderChart($('chart-ladder'), selectBucket);
const chartPadding = paddingChart($('chart-padding'), selectBucket);
const chartWaste = wasteChart($('chart-waste'));
const chartTimeline = timelineChart($('chart-timeline'));
const chartCompare = compareChart($('chart-compare'));

function selectBucket(i) {
  state.bucket = i;
  state.bucketPicked = true;
  renderResults();
}

let renderTimer = 0;
let lastRender = 0;
function scheduleRender(throttle) {
  if (renderTimer) return;
  const wait = Math.max(0, lastRender + throttle - performance.now());
  renderTimer = setTimeout(() => {
    renderTimer = 0;
    requestAnimationFrame(() => {
      lastRender = performance.now();
      renderResults();
    });
  }, wait);
}

function renderAll() {
  renderControls();
  renderResults();
}

// What the results area shows for the selected scheme: a finished or running result, or the
// planned ladder before anything ran.
function shown() {
  const run = state.run;
  const i = state.selected;
  if (run && run.schemes[i] && run.model === state.model) {
    return { scheme: run.schemes[i], result: run.results[i], lengths: run.lengths, run };
  }
  const plan = state.plan;
  if (!plan) return null;
  const spec = state.schemes[i];
  return {
    scheme: { spec, label: schemeLabel(spec), letter: LETTERS[i], color: COLORS[i], ranges: plan.ladders[i].ranges, error: plan.ladders[i].error, expectedWaste: plan.ladders[i].expectedWaste },
    result: null,
    lengths: plan.lengths,
    run: null,
  };
}

function setOut(node, text, value) {
  node.textContent = text;
  if (value !== undefined) node.dataset.value = value === null ? '' : String(value);
}

function renderRunbar() {
  const v = runbarView(state.run, state.ready);
  el.status.textContent = v.status;
  el.progress.max = v.max;
  el.progress.value = v.value;
  if (v.valueText !== null) el.progress.setAttribute('aria-valuetext', v.valueText);
  el.runCount.textContent = v.count;
  el.stop.disabled = v.stopDisabled;
}

function renderCards(view) {
  const v = cardsView(view);
  el.heroScheme.textContent = v.hero;
  document.querySelector('.hero').style.setProperty('--hero-color', v.color);
  setOut(el.bigWaste, v.waste.text, v.waste.value);
  el.bigWaste.classList.toggle('muted', v.waste.muted);
  el.bigWasteSub.textContent = v.wasteSub;
  for (const key of ['requests', 'compiles', 'time', 'memory']) {
    const [value, sub] = el.cards[key];
    setOut(value, v[key].text, v[key].value);
    sub.textContent = v[key].sub;
  }
}

// Fills the compare table and returns the job that draws the compare chart.
function renderCompare() {
  const run = state.run;
  const rows = compareRows(run);
  const shownRows = rows.filter((r) => !r.error);
  // Height follows the number of schemes: one 4-up row of small bars wide, two rows narrow.
  const chartEl = $('chart-compare');
  const perGrid = 34 + 28 * Math.max(1, shownRows.length);
  const want = `${chartEl.clientWidth < 520 ? 2 * perGrid : perGrid}px`;
  if (chartEl.style.height !== want) chartEl.style.height = want;
  const { head, body } = compareTable(rows, { active: !!(run && run.active), repetitions: run ? run.repetitions : 1, selected: state.selected });
  const thead = el.compareBody.parentElement.tHead;
  if (thead.innerHTML !== head) thead.innerHTML = head;
  el.compareBody.innerHTML = body;
  return (o) => chartCompare.update({ rows: shownRows }, o);
}

function renderBuckets(view) {
  const { scheme, result } = view;
  const ranges = scheme.ranges ?? [];
  const buckets = result && result.stats ? result.stats.buckets : null;
  el.bucketTableScheme.textContent = `${scheme.letter} · ${scheme.label}`;
  // The selector: every bucket, keyboard-reachable (the charts' click does the same).
  const opts = bucketOptions(ranges, buckets);
  if (el.bucketSelect.dataset.opts !== opts) {
    el.bucketSelect.innerHTML = opts;
    el.bucketSelect.dataset.opts = opts;
  }
  if (!state.bucketPicked || state.bucket < 0 || state.bucket >= ranges.length) state.bucket = defaultBucket(ranges, buckets);
  if (state.bucket >= 0) el.bucketSelect.value = String(state.bucket);
  el.bucketBody.innerHTML = bucketTableRows(ranges, buckets, state.bucket);
  const i = state.bucket;
  const report = result && result.reports ? result.reports[i] : null;
  el.bucketReport.innerHTML = bucketReport(i >= 0 ? ranges[i] : null, buckets ? buckets[i] : null, report ?? null, scheme.error);
}

function renderResults() {
  renderRunbar();
  const view = shown();
  if (!view) return;
  renderCards(view);
  el.notice.textContent = noticeText(view);
  const { scheme, result, lengths } = view;
  const ranges = scheme.ranges ?? [];
  const buckets = result && result.stats ? result.stats.buckets : null;
  const schemeName = `${scheme.letter} · ${scheme.label}`;
  $('timeline-scheme').textContent = schemeName;
  $('timeline-scheme').style.color = scheme.color;
  const canExport = !!state.run && state.run.results.some((r) => r && r.final);
  $('export-json').disabled = !canExport;
  $('export-csv').disabled = !canExport;
  renderStale();
  renderBuckets(view);
  const drawCompare = renderCompare();  // the table now, the chart with the others
  const run = state.run;
  const lines = run ? run.schemes.map((s, i) => ({
    name: `${s.letter} · ${s.label}`,
    color: s.color,
    points: run.results[i] ? run.results[i].waste : [],
    expected: s.expectedWaste,
    selected: i === state.selected,
  })).filter((l, i) => !run.schemes[i].error) : [];
  const active = view.run ? view.run.active : state.active;
  // One chart per task, so input events get in between while a run streams updates; off-screen
  // charts catch up when scrolled to, or at once when nothing is running.
  const o = { always: !run || run.status !== 'running' };
  drawCharts([
    () => chartLadder.update({ ranges, buckets, lengths, done: sentSoFar(view), selected: state.bucket, log: el.logAxis.checked, color: scheme.color }, o),
    () => chartPadding.update({ ranges, buckets, selected: state.bucket, color: scheme.color, active }, o),
    () => chartWaste.update({ lines, total: lengths.length }, o),
    () => chartTimeline.update({ events: result ? result.events : [], color: scheme.color, total: lengths.length, scheme: schemeName }, o),
    () => drawCompare(o),
  ]);
}

// Requests of each length sent through the shown scheme so far, while it runs (null otherwise:
// the histogram is then drawn solid).
function sentSoFar(view) {
  const r = view.result;
  if (!view.run || view.run.status !== 'running' || (r && r.final)) return null;
  const m = new Map();
  if (r) for (const e of r.events) m.set(e.key, (m.get(e.key) ?? 0) + 1);
  return m;
}

let chartJobs = [];
let chartTimer = 0;
function drawCharts(jobs) {
  chartJobs = jobs;  // newer data replaces jobs not yet run
  document.body.dataset.charts = 'drawing';
  if (!chartTimer) chartTimer = setTimeout(pumpCharts, 0);
}
function pumpCharts() {
  chartTimer = 0;
  const job = chartJobs.shift();
  if (job) job();
  if (chartJobs.length) chartTimer = setTimeout(pumpCharts, 0);
  else document.body.dataset.charts = 'idle';  // body[data-charts=idle]: every chart is drawn
}

// ------------------------------------------------------------------------------------------ start

// Printing: the print stylesheet lays the results out in one column; every chart (also those
// scrolled away, which are not drawn during a run) is drawn again at the print width.
const charts = [chartLadder, chartPadding, chartWaste, chartTimeline, chartCompare];
window.addEventListener('beforeprint', () => {
  for (const c of charts) c.print(true);
  textMode.print(true);
  document.body.dataset.printed = String(Number(document.body.dataset.printed ?? 0) + 1);
});
window.addEventListener('afterprint', () => {
  for (const c of charts) c.print(false);
  textMode.print(false);
});

// The real text mode (text.js): the same worker, the scheme selected here as its ladder. Entering
// it stops a synthetic run; leaving it plans (and, when live, runs) the synthetic traffic again.
const textMode = initTextMode({
  worker,
  scheme: () => ({ spec: state.schemes[state.selected], letter: LETTERS[state.selected], color: COLORS[state.selected] }),
  onMode: (mode) => {
    if (mode === 'text') {
      if (state.run && state.run.status === 'running') worker.postMessage({ type: 'cancel', runId: state.run.id });
    } else {
      replan();
    }
  },
});

readUrl();
textMode.start();
buildStaticControls();
wireControls();
syncInputs();
renderTabs();
publish();
renderResults();
// Charts draw text on canvas: wait for the bundled fonts before the first real drawing.
document.fonts.ready.then(() => renderResults());
