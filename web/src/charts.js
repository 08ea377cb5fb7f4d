// SPDX-License-Identifier: Apache-2.0
// The demo's charts, drawn by Apache ECharts (bundled from npm; only the parts used are imported).
// Each factory takes an element and returns { update(data) }; a chart re-lays itself out when its
// element resizes.
import * as echarts from 'echarts/core';
import { BarChart, CustomChart, HeatmapChart, LineChart, ScatterChart } from 'echarts/charts';
import { GridComponent, LegendComponent, MarkLineComponent, TitleComponent, TooltipComponent, VisualMapComponent } from 'echarts/components';
import { CanvasRenderer } from 'echarts/renderers';
import { fmtBytes, fmtInt, fmtMs, fmtX, mix } from './format.js';

echarts.use([BarChart, CustomChart, HeatmapChart, LineChart, ScatterChart, GridComponent, LegendComponent,
  MarkLineComponent, TitleComponent, TooltipComponent, VisualMapComponent, CanvasRenderer]);

const FONT = "'Inter Variable', 'DejaVu Sans', sans-serif";
const INK = '#14161f';
const INK2 = '#4a5063';
const INK3 = '#7c8296';
const LINE = '#e3e6ee';
const EMPTY = '#eef0f5';
const COMPILE = '#ea580c';

const base = {
  animation: false,
  textStyle: { fontFamily: FONT, color: INK2 },
  tooltip: {
    confine: true,
    backgroundColor: 'rgba(255,255,255,0.97)',
    borderColor: LINE,
    textStyle: { color: INK, fontSize: 12, fontFamily: FONT },
    extraCssText: 'box-shadow: 0 4px 16px rgba(20,22,31,.12); border-radius: 8px;',
  },
};
const axisCommon = {
  axisLine: { lineStyle: { color: LINE } },
  axisTick: { lineStyle: { color: LINE } },
  axisLabel: { color: INK3, fontSize: 11, fontFamily: FONT },
  splitLine: { lineStyle: { color: '#f0f1f5' } },
  nameTextStyle: { color: INK3, fontSize: 11, fontFamily: FONT },
};

/** The width charts are drawn at for printing (A4 or Letter portrait, default margins). */
export const PRINT_WIDTH = 680;

// A chart that, while a run streams updates (several a second to five charts), draws only when on
// screen: updates that arrive while it is scrolled away are kept and drawn when it comes back.
// update(data, { always: true }) draws anyway (the final state of a run). print(true) draws it
// now at the print width, print(false) back at the element's size.
function make(el) {
  const chart = echarts.init(el, null, { renderer: 'canvas' });
  let last = null;
  let draw = null;
  let visible = true;
  let dirty = false;
  let printing = false;
  const paint = () => {
    dirty = false;
    if (last && draw) draw(last);
  };
  new ResizeObserver(() => {
    if (printing) return;
    chart.resize();
    if (visible) paint();
    else dirty = true;
  }).observe(el);
  new IntersectionObserver((entries) => {
    visible = entries[entries.length - 1].isIntersecting;
    if (visible && dirty) paint();
  }, { rootMargin: '200px' }).observe(el);
  return {
    chart,
    narrow: () => (printing ? PRINT_WIDTH : el.clientWidth) < 520,
    print(on) {
      printing = on;
      chart.resize(on ? { width: PRINT_WIDTH, height: el.clientHeight || 260 } : undefined);
      if (on || visible) paint();
      else dirty = true;
      el.dataset.printWidth = on ? String(chart.getWidth()) : '';
    },
    set(fn, data, always) {
      draw = fn;
      last = data;
      if (visible || always) paint();
      else dirty = true;
    },
  };
}

// A quiet message in the middle of a chart that has nothing to draw.
const emptyNote = (text) => (text ? {
  title: { text, left: 'center', top: 'middle', textStyle: { color: INK3, fontSize: 12.5, fontWeight: 500, fontFamily: FONT } },
} : {});

const esc = (s) => String(s).replace(/[&<>"]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[c]);
const bucketName = (r) => (r.end - r.start === 1 ? `${r.start}` : `${r.start}–${r.end - 1}`);

// ----------------------------------------------------------------------------------------- ladder

/**
 * The ladder: one rectangle per bucket over its key range [start, end) on the request-length axis,
 * shaded by requests served, a ▼ at its compile extent (filled once compiled), and under it the
 * histogram of request lengths, each bar tinted by the bucket it falls in.
 */
export function ladderChart(el, onSelect) {
  const c = make(el);
  c.chart.on('click', (p) => {
    if (p.seriesId === 'buckets' || p.seriesId === 'hist') {
      const b = p.value[3];
      if (b >= 0) onSelect(b);
    }
  });
  const draw = (d) => {
    const { ranges, buckets, lengths, done, selected, log, color } = d;
    const lastEnd = ranges.length ? ranges[ranges.length - 1].end : 2;
    const longest = lengths.reduce((m, k) => Math.max(m, k), 0);
    const xMax = Math.max(lastEnd, longest + 1);
    const runs = ranges.map((_, i) => (buckets ? buckets[i].runs : 0));
    const maxRuns = Math.max(1, ...runs);

    // Histogram bins: width 1 up to 320 keys, wider beyond so there are at most ~320 bars.
    const width = Math.max(1, Math.ceil(xMax / 320));
    const binOf = (k) => Math.floor((k - 1) / width) * width + 1;
    const counts = new Map();
    for (const k of lengths) counts.set(binOf(k), (counts.get(binOf(k)) ?? 0) + 1);
    // While a run is going, the part of each bar already sent through the cache is solid.
    const doneCounts = new Map();
    if (done) for (const [k, n] of done) doneCounts.set(binOf(k), (doneCounts.get(binOf(k)) ?? 0) + n);
    const bucketAt = (k) => {
      for (let i = 0; i < ranges.length; i++) if (k >= ranges[i].start && k < ranges[i].end) return i;
      return -1;
    };
    const hist = [...counts.entries()].sort((a, b) => a[0] - b[0])
      .map(([s, n]) => [s, s + width, n, bucketAt(s), done ? doneCounts.get(s) ?? 0 : n]);

    const narrow = c.narrow();
    const grids = [
      { left: narrow ? 40 : 54, right: 16, top: 26, height: 58 },
      { left: narrow ? 40 : 54, right: 16, top: 104, bottom: 44 },
    ];
    const xAxisBase = {
      ...axisCommon,
      type: log ? 'log' : 'value',
      logBase: 2,
      min: 1,
      max: xMax,
      splitLine: { show: false },
    };
    const bucketFill = (i) => (runs[i] === 0 ? EMPTY : mix('#ffffff', color, 0.18 + 0.82 * (runs[i] / maxRuns)));

    c.chart.setOption({
      ...base,
      tooltip: { ...base.tooltip, trigger: 'item' },
      ...(ranges.length === 0 ? { title: { text: 'No ladder: the scheme is invalid', left: 'center', top: 40, textStyle: { color: INK3, fontSize: 12.5, fontWeight: 500, fontFamily: FONT } } } : {}),
      grid: grids,
      xAxis: [
        { ...xAxisBase, gridIndex: 0, axisLabel: { show: false }, axisTick: { show: false }, axisLine: { show: false } },
        { ...xAxisBase, gridIndex: 1, name: 'request length (rows)', nameLocation: 'middle', nameGap: 26, axisLabel: { ...axisCommon.axisLabel, hideOverlap: true } },
      ],
      yAxis: [
        { gridIndex: 0, type: 'value', min: 0, max: 1, show: false },
        { ...axisCommon, gridIndex: 1, type: 'value', minInterval: 1, splitNumber: 3 },
      ],
      series: [
        {
          id: 'buckets',
          type: 'custom',
          xAxisIndex: 0,
          yAxisIndex: 0,
          data: ranges.map((r, i) => [r.start, r.end, runs[i], i, buckets && buckets[i].compiled ? 1 : 0]),
          encode: { x: [0, 1], y: 2 },
          renderItem: (params, api) => {
            const i = api.value(3);
            const p0 = api.coord([api.value(0), 1]);
            const p1 = api.coord([api.value(1), 0]);
            const sys = params.coordSys;
            const shape = echarts.graphic.clipRectByRect(
              { x: p0[0], y: p0[1] + 12, width: Math.max(1, p1[0] - p0[0]), height: p1[1] - p0[1] - 12 },
              { x: sys.x, y: sys.y - 20, width: sys.width, height: sys.height + 20 });
            if (!shape) return null;
            const compiled = api.value(4) === 1;
            const upper = api.value(1) - 1;
            const xm = api.coord([upper + 0.5, 1])[0];
            const sel = i === selected;
            const children = [{
              type: 'rect',
              shape: { ...shape, r: 3 },
              style: { fill: bucketFill(i), stroke: sel ? INK : '#ffffff', lineWidth: sel ? 2 : 1 },
            }, {
              type: 'polygon',
              shape: { points: [[xm - 5, p0[1] + 1], [xm + 5, p0[1] + 1], [xm, p0[1] + 9]] },
              style: { fill: compiled ? INK : '#ffffff', stroke: compiled ? INK : INK3, lineWidth: 1 },
            }];
            if (shape.width > 34) {
              const dark = runs[i] / maxRuns > 0.45;
              children.push({
                type: 'text',
                style: {
                  text: `${upper}`,
                  x: shape.x + shape.width / 2,
                  y: shape.y + shape.height / 2,
                  align: 'center',
                  verticalAlign: 'middle',
                  fill: dark ? '#ffffff' : INK2,
                  font: `600 11px ${FONT}`,
                },
              });
            }
            return { type: 'group', children };
          },
          tooltip: {
            formatter: (p) => {
              const i = p.value[3];
              const r = ranges[i];
              const b = buckets && buckets[i];
              const head = `<b>Bucket ${bucketName(r)}</b> · compiles at <b>${r.end - 1}</b>`;
              if (!b) return `${head}<br><span style="color:${INK3}">not run yet</span>`;
              const waste = b.actualRows ? fmtX(b.paddedRows / b.actualRows) : '—';
              return `${head}<br>${b.compiled ? `compiled in ${fmtMs(b.compileMs)}` : 'not compiled'}<br>` +
                `${fmtInt(b.runs)} requests (${fmtInt(b.hits)} cache hits + ${fmtInt(b.compiles)} compile)<br>` +
                `${fmtInt(b.actualRows)} real → ${fmtInt(b.paddedRows)} padded rows (${waste})`;
            },
          },
          z: 3,
        },
        {
          id: 'hist',
          type: 'custom',
          xAxisIndex: 1,
          yAxisIndex: 1,
          data: hist,
          encode: { x: [0, 1], y: 2 },
          renderItem: (params, api) => {
            const b = api.value(3);
            const p0 = api.coord([api.value(0), api.value(2)]);
            const p1 = api.coord([api.value(1), 0]);
            const gap = p1[0] - p0[0] > 4 ? 1 : 0;
            const fill = ranges.length === 0 ? '#c3c7d4' : b < 0 ? '#e5484d' : mix('#ffffff', color, b % 2 === 0 ? 0.85 : 0.5);
            const x = p0[0];
            const w = Math.max(2, p1[0] - p0[0] - gap);
            const full = echarts.graphic.clipRectByRect({ x, y: p0[1], width: w, height: p1[1] - p0[1] }, params.coordSys);
            if (!full) return null;
            const opacity = selected >= 0 && b !== selected ? 0.55 : 1;
            const n = api.value(2);
            const k = api.value(4);
            if (k >= n) return { type: 'rect', shape: full, style: { fill, opacity } };
            const yDone = api.coord([api.value(0), k])[1];
            return {
              type: 'group',
              children: [
                { type: 'rect', shape: full, style: { fill, opacity: opacity * 0.28 } },
                { type: 'rect', shape: { x, y: yDone, width: w, height: p1[1] - yDone }, style: { fill, opacity } },
              ],
            };
          },
          tooltip: {
            formatter: (p) => {
              const [s, e, n, b, k] = p.value;
              const keys = e - s === 1 ? `length ${s}` : `lengths ${s}–${e - 1}`;
              const sofar = k < n ? ` (${fmtInt(k)} sent so far)` : '';
              const where = ranges.length === 0 ? 'no ladder' : b < 0 ? '<span style="color:#b42318">outside every bucket: refused</span>' : `bucket ${bucketName(ranges[b])}, padded to ${ranges[b].end - 1}`;
              return `<b>${fmtInt(n)}</b> requests of ${keys}${sofar}<br>${where}`;
            },
          },
        },
        {
          id: 'bounds',
          type: 'custom',
          xAxisIndex: 1,
          yAxisIndex: 1,
          silent: true,
          data: ranges.slice(1).map((r) => [r.start]),
          renderItem: (params, api) => {
            const x = api.coord([api.value(0), 0])[0];
            const sys = params.coordSys;
            if (x < sys.x || x > sys.x + sys.width) return null;
            return { type: 'line', shape: { x1: x, y1: sys.y, x2: x, y2: sys.y + sys.height }, style: { stroke: '#c9cdda', lineDash: [3, 3], lineWidth: 1 } };
          },
          z: 1,
        },
      ],
    }, { notMerge: true });
  };
  return { update: (d, o) => c.set(draw, d, o && o.always), print: (on) => c.print(on) };
}

// ----------------------------------------------------------------------------------------- rows per bucket

/** Real rows and padding rows per bucket, stacked: the bar's height is the padded rows. */
export function paddingChart(el, onSelect) {
  const c = make(el);
  c.chart.on('click', (p) => onSelect(p.dataIndex));
  const draw = ({ ranges, buckets, selected, color, active, note }) => {
    const labels = ranges.map((r) => `≤${r.end - 1}`);
    const real = ranges.map((_, i) => (buckets ? buckets[i].actualRows : 0));
    const pad = ranges.map((_, i) => (buckets ? buckets[i].paddedRows - buckets[i].actualRows : 0));
    const dim = (i) => (selected >= 0 && i !== selected ? 0.55 : 1);
    c.chart.setOption({
      ...base,
      ...emptyNote(note ?? (ranges.length === 0 ? 'No buckets: the scheme is invalid' : !buckets ? 'Run to see the rows' : '')),
      tooltip: {
        ...base.tooltip,
        trigger: 'axis',
        axisPointer: { type: 'shadow' },
        formatter: (ps) => {
          const i = ps[0].dataIndex;
          const b = buckets && buckets[i];
          if (!b) return `Bucket ${bucketName(ranges[i])}: not run yet`;
          const w = b.actualRows ? fmtX(b.paddedRows / b.actualRows) : '—';
          return `<b>Bucket ${bucketName(ranges[i])}</b> (extent ${ranges[i].end - 1})<br>` +
            `${fmtInt(b.actualRows)} real rows<br>${fmtInt(b.paddedRows - b.actualRows)} padding rows` +
            `${active ? ` (computed: ${fmtInt(b.computedRows - b.actualRows)})` : ''}<br>waste ${w}`;
        },
      },
      legend: { top: 0, right: 0, itemWidth: 12, itemHeight: 10, textStyle: { color: INK2, fontSize: 11.5, fontFamily: FONT } },
      grid: { left: 8, right: 8, top: 30, bottom: 4, containLabel: true },
      xAxis: { ...axisCommon, type: 'category', data: labels, axisLabel: { ...axisCommon.axisLabel, hideOverlap: true }, splitLine: { show: false } },
      yAxis: { ...axisCommon, type: 'value', name: 'rows', splitNumber: 4 },
      series: [
        {
          name: 'real rows',
          type: 'bar',
          stack: 'rows',
          barMaxWidth: 46,
          data: real.map((v, i) => ({ value: v, itemStyle: { color, opacity: dim(i) } })),
          itemStyle: { color },
        },
        {
          name: active ? 'padding rows (not computed)' : 'padding rows',
          type: 'bar',
          stack: 'rows',
          barMaxWidth: 46,
          data: pad.map((v, i) => ({ value: v, itemStyle: { opacity: dim(i) } })),
          itemStyle: {
            color: mix('#ffffff', color, 0.28),
            borderRadius: [3, 3, 0, 0],
            decal: { symbol: 'rect', dashArrayX: [1, 0], dashArrayY: [2, 4], rotation: -Math.PI / 4, color: mix('#ffffff', color, 0.55) },
          },
        },
      ],
    }, { notMerge: true });
  };
  return { update: (d, o) => c.set(draw, d, o && o.always), print: (on) => c.print(on) };
}

// ----------------------------------------------------------------------------------------- waste over time

/** Cumulative padded ÷ real rows after each request, one line per scheme, predicted value dashed. */
export function wasteChart(el) {
  const c = make(el);
  const draw = ({ lines, total }) => {
    c.chart.setOption({
      ...base,
      ...emptyNote(lines.every((l) => l.points.length === 0) ? 'Run to see the waste build up' : ''),
      tooltip: {
        ...base.tooltip,
        trigger: 'axis',
        valueFormatter: (v) => fmtX(v),
      },
      legend: { top: 0, right: 0, itemWidth: 14, itemHeight: 8, textStyle: { color: INK2, fontSize: 11.5, fontFamily: FONT } },
      grid: { left: 8, right: 16, top: 30, bottom: 24, containLabel: true },
      xAxis: { ...axisCommon, type: 'value', min: 0, max: Math.max(1, total), name: 'requests', nameLocation: 'middle', nameGap: 24, splitLine: { show: false } },
      // Log scale: a 1.3× ladder and an 8× one big bucket stay readable on one chart.
      yAxis: { ...axisCommon, type: 'log', logBase: 2, min: 1, max: (v) => Math.max(2, 2 ** Math.ceil(Math.log2(v.max * 1.05))), axisLabel: { ...axisCommon.axisLabel, formatter: (v) => `${v}×` } },
      series: lines.map((l) => ({
        name: l.name,
        type: 'line',
        showSymbol: false,
        sampling: 'lttb',
        data: l.points,
        lineStyle: { width: l.selected ? 2.5 : 1.6, color: l.color },
        itemStyle: { color: l.color },
        z: l.selected ? 3 : 2,
        markLine: l.expected == null ? undefined : {
          silent: true,
          symbol: 'none',
          label: { show: false },
          lineStyle: { color: l.color, type: 'dashed', width: 1, opacity: 0.7 },
          data: [{ yAxis: l.expected }],
        },
      })),
    }, { notMerge: true });
  };
  return { update: (d, o) => c.set(draw, d, o && o.always), print: (on) => c.print(on) };
}

// ----------------------------------------------------------------------------------------- timeline

const LABEL_GAP = 4;

// Labels the compile diamonds with their extent where a label fits: left to right, a label is
// shown only if its box (measured in pixels where ECharts placed the point) overlaps no label
// already shown, so labels never pile on each other (ECharts' hideOverlap does not apply to
// scatter labels). The boxes shown are left in el.dataset.labels (JSON) for the browser test.
function labelCompiles(chart, el, compiles) {
  const ctx = labelCompiles.ctx ?? (labelCompiles.ctx = document.createElement('canvas').getContext('2d'));
  ctx.font = `600 10.5px ${FONT}`;
  const shown = [];
  const order = compiles.map((p, k) => k).sort((a, b) => compiles[a][0] - compiles[b][0]);
  const show = new Array(compiles.length).fill(false);
  for (const k of order) {
    const p = compiles[k];
    const at = chart.convertToPixel({ seriesId: 'compiles' }, [p[0], p[1]]);
    if (!at || !Number.isFinite(at[0]) || !Number.isFinite(at[1])) continue;
    const text = `${p[3]}`;
    const w = Math.ceil(ctx.measureText(text).width) + 2;
    const h = 14;
    const box = { x: at[0] + 6 + LABEL_GAP, y: at[1] - h / 2, w, h, text };
    if (box.x + w > chart.getWidth()) continue;
    const hit = shown.some((b) => box.x < b.x + b.w + 2 && b.x < box.x + box.w + 2 && box.y < b.y + b.h && b.y < box.y + box.h);
    if (hit) continue;
    shown.push(box);
    show[k] = true;
  }
  if (shown.length) {
    chart.setOption({ series: [{ id: 'compiles', data: compiles.map((p, k) => ({ value: p, label: { show: show[k] } })) }] });
  }
  el.dataset.labels = JSON.stringify(shown);
}

/** Latency of every request (log scale); requests that compiled their bucket stand out. */
export function timelineChart(el) {
  const c = make(el);
  const draw = ({ events, color, total, scheme }) => {
    if (scheme) el.setAttribute('aria-label', `Per-request latency and compile events of scheme ${scheme}`);
    const plain = [];
    const compiles = [];
    for (const e of events) {
      if (e.upper === null) continue;
      const point = [e.i + 1, Math.max(e.ms, 0.001), e.key, e.upper, e.compileMs];
      (e.compiled ? compiles : plain).push(point);
    }
    const refused = events.filter((e) => e.upper === null).length;
    c.chart.setOption({
      ...base,
      ...emptyNote(plain.length + compiles.length === 0 ? (refused ? 'Every request was refused' : 'Run to see each request') : ''),
      tooltip: {
        ...base.tooltip,
        trigger: 'item',
        formatter: (p) => {
          const [i, ms, key, upper, cms] = p.value;
          return `Request <b>#${i}</b>: ${key} rows → bucket extent ${upper}<br>${fmtMs(ms)} in runPadded` +
            (p.seriesId === 'compiles' ? `<br><span style="color:${COMPILE}">compiled the bucket: ${fmtMs(cms)}</span>` : '');
        },
      },
      legend: { top: 0, right: 0, itemWidth: 10, itemHeight: 10, textStyle: { color: INK2, fontSize: 11.5, fontFamily: FONT },
        data: ['request', 'first request of a bucket (compiles it)'] },
      grid: { left: 8, right: 16, top: 30, bottom: 24, containLabel: true },
      xAxis: { ...axisCommon, type: 'value', min: 0, max: Math.max(1, total), name: refused ? `request # (${refused} refused, not shown)` : 'request #', nameLocation: 'middle', nameGap: 24, splitLine: { show: false } },
      yAxis: { ...axisCommon, type: 'log', axisLabel: { ...axisCommon.axisLabel, formatter: (v) => `${v} ms` } },
      series: [
        {
          id: 'requests',
          name: 'request',
          type: 'scatter',
          data: plain,
          symbolSize: plain.length > 3000 ? 2.5 : 4.5,
          large: plain.length > 3000,
          itemStyle: { color, opacity: 0.55 },
        },
        {
          id: 'compiles',
          name: 'first request of a bucket (compiles it)',
          type: 'scatter',
          data: compiles,
          symbol: 'diamond',
          symbolSize: 12,
          itemStyle: { color: COMPILE, borderColor: '#ffffff', borderWidth: 1 },
          label: { show: false, position: 'right', distance: LABEL_GAP, formatter: (p) => `${p.value[3]}`, color: COMPILE, fontSize: 10.5, fontWeight: 600, fontFamily: FONT },
          z: 4,
        },
      ],
    }, { notMerge: true });
    labelCompiles(c.chart, el, compiles);
  };
  return { update: (d, o) => c.set(draw, d, o && o.always), print: (on) => c.print(on) };
}

// ----------------------------------------------------------------------------------------- compare

/** Small multiples: waste, compiles, total time and memory, one bar per scheme. */
export function compareChart(el) {
  const c = make(el);
  const draw = ({ rows }) => {
    const metrics = [
      { title: 'Padding waste', get: (r) => r.waste, fmt: (v) => fmtX(v) },
      { title: 'Compiles', get: (r) => r.compiles, fmt: (v) => fmtInt(v) },
      { title: 'Total time', get: (r) => r.totalMs, fmt: (v) => fmtMs(v) },
      { title: 'Arena + weights', get: (r) => r.memory, fmt: (v) => fmtBytes(v) },
    ];
    const narrow = c.narrow();
    const cols = narrow ? 2 : 4;
    const rowsN = Math.ceil(metrics.length / cols);
    const cellW = 100 / cols;
    const cellH = 100 / rowsN;
    const names = rows.map((r) => r.letter);
    const option = { ...base, tooltip: { ...base.tooltip, trigger: 'item' }, title: [], grid: [], xAxis: [], yAxis: [], series: [] };
    metrics.forEach((m, k) => {
      const col = k % cols;
      const row = Math.floor(k / cols);
      option.title.push({ text: m.title, left: `${col * cellW + 1}%`, top: `${row * cellH}%`, textStyle: { fontSize: 12, fontWeight: 600, color: INK2, fontFamily: FONT } });
      const h = el.clientHeight / rowsN;
      option.grid.push({ left: `${col * cellW + 1}%`, width: `${cellW - 4}%`, top: row * h + 24, height: h - 34, containLabel: true });
      option.xAxis.push({ ...axisCommon, gridIndex: k, type: 'value', show: false, min: 0, max: (v) => v.max * (narrow ? 1.9 : 1.45) || 1 });
      option.yAxis.push({ ...axisCommon, gridIndex: k, type: 'category', data: names, inverse: true, axisTick: { show: false }, axisLine: { show: false }, axisLabel: { ...axisCommon.axisLabel, fontWeight: 600, color: INK2 } });
      option.series.push({
        type: 'bar',
        xAxisIndex: k,
        yAxisIndex: k,
        barMaxWidth: 16,
        barCategoryGap: '28%',
        data: rows.map((r) => ({ value: m.get(r) ?? 0, itemStyle: { color: r.color, borderRadius: [0, 4, 4, 0], opacity: m.get(r) == null ? 0.2 : 1 } })),
        label: { show: true, position: 'right', formatter: (p) => (m.get(rows[p.dataIndex]) == null ? '…' : m.fmt(p.value)), color: INK, fontSize: 11.5, fontFamily: FONT, fontWeight: 550 },
        tooltip: { formatter: (p) => `<b>${esc(rows[p.dataIndex].letter)} · ${esc(rows[p.dataIndex].label)}</b><br>${m.title}: ${m.get(rows[p.dataIndex]) == null ? 'running…' : m.fmt(p.value)}` },
      });
    });
    if (rows.length === 0) option.title = [emptyNote('Run to compare the schemes').title];
    c.chart.setOption(option, { notMerge: true });
  };
  return { update: (d, o) => c.set(draw, d, o && o.always), print: (on) => c.print(on) };
}

// ----------------------------------------------------------------------------------------- similarity

/**
 * The cosine similarity of n sentences as an n x n heatmap (row i, column j: sim(i, j)), each cell
 * labelled with its value; `labels` names the rows ("1", "2", ...), `texts` are the tooltips.
 */
export function heatmapChart(el) {
  const c = make(el);
  const draw = ({ labels, texts, matrix, note }) => {
    const n = matrix.length;
    const data = [];
    for (let i = 0; i < n; i++) for (let j = 0; j < n; j++) data.push([j, i, matrix[i][j]]);
    const min = n ? Math.min(0, ...data.map((d) => d[2])) : 0;
    const cut = (s) => (s.length > 60 ? `${s.slice(0, 57)}…` : s);
    el.dataset.cells = String(data.length);  // what is drawn, for the browser test
    c.chart.setOption({
      ...base,
      ...emptyNote(n === 0 ? note || 'Embed some sentences to compare them' : ''),
      tooltip: {
        ...base.tooltip,
        formatter: (p) => `<b>${esc(cut(texts[p.value[1]]))}</b><br>${esc(cut(texts[p.value[0]]))}<br>cosine ${p.value[2].toFixed(4)}`,
      },
      grid: { left: 8, right: 8, top: 8, bottom: 40, containLabel: true },
      xAxis: { ...axisCommon, type: 'category', data: labels, splitArea: { show: false }, splitLine: { show: false } },
      yAxis: { ...axisCommon, type: 'category', data: labels, inverse: true, splitLine: { show: false } },
      visualMap: {
        show: n > 0,
        min, max: 1, calculable: false, orient: 'horizontal', left: 'center', bottom: 0, itemHeight: 120, itemWidth: 10,
        inRange: { color: ['#f8fafc', '#c7d2fe', '#4f46e5'] },
        textStyle: { color: INK3, fontSize: 11, fontFamily: FONT },
        formatter: (v) => v.toFixed(2),
      },
      series: [{
        id: 'similarity',
        type: 'heatmap',
        data,
        label: { show: n <= 12, fontSize: 11, fontFamily: FONT, formatter: (p) => p.value[2].toFixed(2) },
        itemStyle: { borderColor: '#fff', borderWidth: 1 },
      }],
    }, { notMerge: true });
  };
  return { update: (d, o) => c.set(draw, d, o && o.always), print: (on) => c.print(on) };
}
