// SPDX-License-Identifier: Apache-2.0
// Every ```js block of README.md and of the package's README runs, as written, against the
// installed package: a wrong example fails CI.
//
// How a block runs: written to a file in a fresh folder inside the test's working directory (the
// folder the packed package was installed into, so `import ... from 'rungs'` resolves as for a
// user; the folder is removed afterwards), as .mjs, or as .cjs when its first line is
// `// <name>.cjs`; then `node <file>` with the working directory
//   - README.md:               the repository root (its examples read examples/models/...);
//   - the package's README.md: examples/models/ (its examples read encoder.json, ...).
// Preamble (the one stub): Node's fetch() takes absolute URLs only, so for the package README's
// browser example a relative URL is read from that working directory instead (--import
// snippet-fetch.mjs, written below). Nothing else is defined for a block: it must be complete.
//
// Output: each `console.log(...)` line that ends in a comment `// text` must print `text` up to the
// comment's first ': ' (the rest explains it), in order, one line each. A block that throws, exits
// non-zero or prints something else fails.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';

const require = createRequire(import.meta.url);
const examplesDir = process.env.RUNGS_EXAMPLES_DIR;
const repoDir = examplesDir ? resolve(examplesDir, '..') : null;
const skip = !examplesDir && 'set RUNGS_EXAMPLES_DIR (scripts/test does)';

/**
 * The ```js blocks of a markdown text: [{ line, code, cwd }]. A block right after a line
 * `<!-- snippet: cwd DIR -->` runs in DIR (relative to the repository root) instead: the npm
 * packages of tests/text/reference, for a block that reads node_modules/@energetic-ai/... as a
 * user who installed them would.
 */
export function jsBlocks(markdown) {
  const blocks = [];
  const lines = markdown.split('\n');
  for (let i = 0; i < lines.length; i++) {
    if (lines[i].trim() !== '```js') continue;
    const marker = i > 0 ? lines[i - 1].match(/^<!--\s*snippet:\s*cwd\s+(\S+)\s*-->$/) : null;
    const start = i + 1;
    let j = start;
    while (j < lines.length && lines[j].trim() !== '```') j++;
    blocks.push({ line: start + 1, code: lines.slice(start, j).join('\n'), ...(marker ? { cwd: marker[1] } : {}) });
    i = j;
  }
  return blocks;
}

/** What a block says it prints: the comment text of each console.log line, up to its first ': '. */
export function expectedOutput(code) {
  const out = [];
  for (const line of code.split('\n')) {
    const m = line.match(/console\.log\(.*\);\s*\/\/\s*(.*)$/);
    if (m) out.push(m[1].split(': ')[0].trim());
  }
  return out;
}

const fetchStub = `// snippet-fetch.mjs (wasm/test/snippets.test.mjs): fetch() of a relative URL reads the file
// from the working directory, as a browser would fetch it from the page's folder.
import { readFile } from 'node:fs/promises';
import { pathToFileURL } from 'node:url';
const realFetch = globalThis.fetch;
globalThis.fetch = async (url, init) => {
  if (typeof url === 'string' && !/^[a-z][a-z0-9+.-]*:/i.test(url)) {
    const path = new URL(url, pathToFileURL(process.cwd() + '/'));
    return new Response(await readFile(path));
  }
  return realFetch(url, init);
};
`;

function runBlocks(t, source, markdown, cwd) {
  const blocks = jsBlocks(markdown);
  assert.ok(blocks.length > 0, `${source} has js blocks`);
  const dir = mkdtempSync(join(process.cwd(), '.snippets-'));
  try {
    const stub = join(dir, 'snippet-fetch.mjs');
    writeFileSync(stub, fetchStub);
    for (const [k, block] of blocks.entries()) {
      const first = block.code.split('\n')[0];
      const cjs = /^\/\/\s*\S+\.cjs\s*$/.test(first);
      const file = join(dir, `snippet-${source.replace(/\W+/g, '-')}-${k + 1}.${cjs ? 'cjs' : 'mjs'}`);
      writeFileSync(file, `${block.code}\n`);
      let stdout;
      try {
        stdout = execFileSync(process.execPath, ['--import', stub, file],
          { cwd: block.cwd ? join(repoDir, block.cwd) : cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
      } catch (e) {
        assert.fail(`${source}:${block.line}: the block failed:\n${e.stderr || e.message}`);
      }
      const printed = stdout.trimEnd().split('\n').filter((l) => l !== '');
      const want = expectedOutput(block.code);
      assert.deepEqual(printed, want, `${source}:${block.line}: printed vs the block's comments`);
      t.diagnostic(`${source}:${block.line}: ok (${want.length} checked lines)`);
    }
    return blocks.length;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

test('the extraction finds blocks and their claimed output', () => {
  const md = 'text\n```js\nconsole.log(1 + 1);  // 2: two\nfoo();\n```\n```sh\nls\n```\n```js\nconsole.log(3);\n```\n';
  const blocks = jsBlocks(md);
  assert.deepEqual(blocks.map((b) => b.line), [3, 10]);
  assert.deepEqual(expectedOutput(blocks[0].code), ['2']);
  assert.deepEqual(expectedOutput(blocks[1].code), []);
  const marked = jsBlocks('<!-- snippet: cwd tests/text/reference -->\n```js\nconsole.log(1);\n```\n');
  assert.deepEqual(marked, [{ line: 3, code: 'console.log(1);', cwd: 'tests/text/reference' }]);
});

test("README.md's js blocks run and print what they say", { skip }, (t) => {
  const readme = join(repoDir, 'README.md');
  assert.ok(existsSync(readme), readme);
  runBlocks(t, 'README.md', readFileSync(readme, 'utf8'), repoDir);
});

test("the package README's js blocks run and print what they say", { skip }, (t) => {
  // The README inside the installed package: what npm shows.
  const readme = join(dirname(require.resolve('rungs/package.json')), 'README.md');
  runBlocks(t, 'npm-README.md', readFileSync(readme, 'utf8'), join(examplesDir, 'models'));
});

test('a wrong block fails: an undefined input, or a claimed output that is not printed', (t) => {
  const bad = [
    "```js\nimport { loadModel } from 'rungs';\nloadModel(jsonText, bytes);\n```\n",
    "```js\nimport { version } from 'rungs';\nconsole.log(typeof version());  // number\n```\n",
  ];
  for (const md of bad) assert.throws(() => runBlocks(t, 'bad.md', md, process.cwd()), assert.AssertionError);
  const left = readdirSync(process.cwd()).filter((f) => f.startsWith('.snippets-') || f.startsWith('snippet-'));
  assert.deepEqual(left, [], 'the blocks run in a folder of their own, removed afterwards');
});
