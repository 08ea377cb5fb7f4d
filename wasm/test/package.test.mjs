// SPDX-License-Identifier: Apache-2.0
// The package as a user gets it: its package.json, the sizes of its files, and a
// TypeScript example type-checked against the shipped declarations (tsc --strict), then run.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { fileURLToPath } from 'node:url';

const require = createRequire(import.meta.url);
const pkgDir = dirname(require.resolve('rungs/package.json'));
const pkg = JSON.parse(readFileSync(join(pkgDir, 'package.json'), 'utf8'));
const here = dirname(fileURLToPath(import.meta.url));

test('package.json: ES module, exports with node and browser conditions, files allowlist, licence', () => {
  assert.equal(pkg.type, 'module');
  assert.deepEqual(Object.keys(pkg.exports['.']).sort(), ['browser', 'default', 'node', 'require', 'types']);
  assert.equal(pkg.types, './index.d.ts');
  assert.deepEqual([...pkg.files].sort(),
    ['LICENSE', 'NOTICE', 'README.md', 'THIRD_PARTY_NOTICES.md', 'calls.js', 'index.cjs', 'index.d.ts', 'index.js', 'module.js', 'rungs_core.js',
      'rungs_core.wasm', 'rungs_core_mt.js', 'rungs_core_mt.wasm', 'rungs_core_mt.worker.cjs', 'rungs_core_mt.worker.js']);
  assert.equal(pkg.license, 'Apache-2.0');
  for (const f of ['LICENSE', 'NOTICE', 'THIRD_PARTY_NOTICES.md']) {
    assert.ok(readFileSync(join(pkgDir, f), 'utf8').length > 100, `${f} is installed with the package`);
  }
});

test("require('rungs') says how to load it from CommonJS; import() from CommonJS works", () => {
  let caught;
  try {
    require('rungs');
  } catch (e) {
    caught = e;
  }
  assert.ok(caught instanceof Error, 'require() fails');
  assert.equal(caught.code, 'ERR_REQUIRE_ASYNC_MODULE');
  assert.match(caught.message, /ES module/);
  assert.match(caught.message, /await import\('rungs'\)/, caught.message);
  // What the message says works: a CommonJS script that loads rungs with a dynamic import.
  const dir = mkdtempSync(join(process.cwd(), 'cjs-example-'));
  try {
    writeFileSync(join(dir, 'main.cjs'), [
      "async function main() {",
      "  const { Session, Device, version } = await import('rungs');",
      "  const session = new Session(Device.Cpu);",
      "  session.delete();",
      "  console.log(version());",
      "}",
      "main();",
    ].join('\n'));
    const out = execFileSync(process.execPath, [join(dir, 'main.cjs')], { encoding: 'utf8' });
    assert.match(out.trim(), /^\d+\.\d+\.\d+$/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

// A shipped file's size, raw and gzipped (-9).
function size(file) {
  const bytes = readFileSync(join(pkgDir, file));
  return { raw: bytes.length, gz: gzipSync(bytes, { level: 9 }).length };
}

// A variant as shipped: its JS and its wasm, a file of its own beside it (wasm/CMakeLists.txt: not
// base64 inside the JS, which cost ~160 KB gzipped per variant).
function variant(name) {
  const js = size(`${name}.js`);
  const wasm = size(`${name}.wasm`);
  assert.equal(readFileSync(join(pkgDir, `${name}.wasm`)).subarray(0, 4).toString('latin1'), '\0asm');
  // (The runtime's isDataURI keeps the bare prefix; an embedded wasm would follow it.)
  assert.ok(!/data:application\/octet-stream;base64,[A-Za-z0-9+/]{64}/.test(readFileSync(join(pkgDir, `${name}.js`), 'latin1')),
    `${name}.js does not embed the wasm`);
  console.log(`${name}: wasm ${wasm.raw} bytes, ${wasm.gz} gzipped; js ${js.raw} bytes, ${js.gz} gzipped`);
  return { wasmGz: wasm.gz, gz: js.gz + wasm.gz };
}

test('the wasm binary is under 1 MiB gzipped', () => {
  const { wasmGz } = variant('rungs_core');
  assert.ok(wasmGz < 1024 * 1024, `${wasmGz} bytes gzipped`);
});

// The packed package holds both variants (scripts/test builds wasm-threads before wasm-release).
const hasThreaded = existsSync(join(pkgDir, 'rungs_core_mt.js'));
// Both variants together under 1.5 MiB gzipped, as shipped: every file a variant loads, each
// gzipped (docs/onnx.md). The test prints where the size stands.
const kSizeBudget = 1.5 * 2 ** 20;
test('both variants ship, together under 1.5 MiB gzipped', { skip: !hasThreaded && process.env.RUNGS_EXPECT_THREADED !== '1' && 'no threaded variant in this package (build the wasm-threads preset first)' }, () => {
  assert.ok(hasThreaded, 'RUNGS_EXPECT_THREADED=1 but the package has no rungs_core_mt.js');
  let total = variant('rungs_core').gz + variant('rungs_core_mt').gz;
  for (const f of ['rungs_core_mt.worker.js', 'rungs_core_mt.worker.cjs']) total += size(f).gz;
  console.log(`both variants, as shipped: ${total} bytes gzipped (${(total / 2 ** 20).toFixed(3)} MiB; ` +
    `budget ${kSizeBudget / 2 ** 20} MiB)`);
  assert.ok(total < kSizeBudget, `${total} bytes gzipped`);
});

const tsc = process.env.RUNGS_TSC;
test('a TypeScript example type-checks against index.d.ts and runs', { skip: !tsc && 'set RUNGS_TSC (scripts/test does)' }, () => {
  // Compiled in the folder the package was installed into (the working directory), so `rungs`
  // resolves through node_modules and its exports as for a user.
  const dir = mkdtempSync(join(process.cwd(), 'ts-example-'));
  try {
    cpSync(join(here, 'types'), dir, { recursive: true });
    writeFileSync(join(dir, 'package.json'), '{ "type": "module" }\n');
    execFileSync(tsc, ['-p', dir], { stdio: 'inherit' });
    const out = JSON.parse(execFileSync(process.execPath, [join(dir, 'out', 'example.js')], { encoding: 'utf8' }));
    // ladder.optimal([3, 3, 5, 12, 12, 30], 3) has extents 5, 12, 30 (69 padded rows).
    assert.deepEqual(out.uppers, [5, 5, 12, 30, 5]);
    assert.equal(out.compiles, 3);
    assert.ok(Math.abs(out.waste - 57 / 52) < 1e-12, `waste ${out.waste}`);
    assert.equal(out.code, 'ShapeMismatch');
    assert.deepEqual(out.y, [0.5, 0.5, 0.5, 0.5]);
    assert.ok(Math.abs(out.cos - Math.SQRT1_2) < 1e-12, `cosineSimilarity ${out.cos}`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
