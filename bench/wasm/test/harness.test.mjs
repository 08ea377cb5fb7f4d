// SPDX-License-Identifier: Apache-2.0
// node --test bench/wasm/test: the drivers' shared scaffolding (lib/harness.mjs).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';

import { Mismatch, check, stopOnMismatch } from '../lib/harness.mjs';

const harness = new URL('../lib/harness.mjs', import.meta.url).href;

// A driver in a child process: what it prints and how it ends.
function driver(body) {
  const script = `import { Mismatch, check, stopOnMismatch } from ${JSON.stringify(harness)};\n` +
    `await stopOnMismatch(async () => { ${body} });\nconsole.log('after the sections');`;
  return spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' });
}

test('check: the max relative difference, Mismatch past the tolerance or on a length difference', () => {
  assert.equal(check('y', [1, 2, 4], [1, 2, 4], 1e-6), 0);
  assert.ok(Math.abs(check('y', [1, 2, 4.002], [1, 2, 4], 1e-3) - 0.0005) < 1e-12);
  assert.throws(() => check('y', [1, 2, 5], [1, 2, 4], 1e-3), Mismatch);
  assert.throws(() => check('y', [1, 2], [1, 2, 4], 1e-3), Mismatch);
});

test('stopOnMismatch: sections that agree run to the end', async () => {
  const r = driver("check('y', [1], [1], 1e-6);");
  assert.equal(r.status, 0, r.stderr);
  assert.equal(r.stdout, 'after the sections\n');
  let ran = false;
  await stopOnMismatch(async () => { ran = true; });
  assert.ok(ran);
});

test('stopOnMismatch: a Mismatch ends the driver with its message and exit code 1', () => {
  const r = driver("check('encoder output', [1, 2], [1, 3], 1e-4);");
  assert.equal(r.status, 1);
  assert.equal(r.stdout, '', 'nothing after the sections ran');
  assert.match(r.stderr, /^\nFAILED: .*encoder output/);
});

test('stopOnMismatch: any other error is thrown on, not turned into a mismatch', async () => {
  await assert.rejects(stopOnMismatch(async () => { throw new TypeError('a bug'); }), TypeError);
  const r = driver("throw new RangeError('out of range');");
  // Node ends on an uncaught error with code 1 too: what tells the two apart is the error's stack
  // where a mismatch prints its FAILED line.
  assert.notEqual(r.status, 0);
  assert.equal(r.stdout, '');
  assert.match(r.stderr, /RangeError: out of range\n\s+at /);
  assert.doesNotMatch(r.stderr, /FAILED:/);
});
