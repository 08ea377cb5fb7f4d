// SPDX-License-Identifier: Apache-2.0
// Third-party notices of the built demo, from the bundler's own records.
//
// Vite's `build.license` writes .vite/license.json: every npm package whose modules landed in a
// chunk, with its licence identifier and text. This plugin, added to the page's and the worker's
// builds, records every module id of every chunk (.vite/modules.json, which
// tests/release/check_notices.mjs checks the notices against) and, when the page's bundle is
// written, makes THIRD_PARTY_NOTICES.md from:
//   - rungs itself (NOTICE; LICENSE copied beside it),
//   - the notices of the rungs npm package the worker bundles (the code compiled into its wasm),
//   - Vite's license.json, with each package's NOTICE file when it has one (Apache-2.0, 4(d)).
import { copyFileSync, existsSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';

const moduleIds = new Set();

function nearestPackageDir(file) {
  let dir = path.dirname(file);
  while (dir !== path.dirname(dir)) {
    const pj = path.join(dir, 'package.json');
    if (existsSync(pj) && JSON.parse(readFileSync(pj, 'utf8')).name) return dir;
    dir = path.dirname(dir);
  }
  return null;
}

// Collects module ids; `role` 'worker' only collects, 'page' also writes the files.
export function notices({ role, repoRoot, npmDir, licenseFile }) {
  return {
    name: `rungs:notices-${role}`,
    apply: 'build',
    generateBundle(_, bundle) {
      for (const chunk of Object.values(bundle)) {
        if (chunk.type === 'chunk') for (const id of chunk.moduleIds) moduleIds.add(id);
      }
    },
    writeBundle(options) {
      if (role !== 'page') return;
      const out = options.dir;
      const ids = [...moduleIds].filter((id) => !id.startsWith('\0')).sort();
      writeFileSync(path.join(out, '.vite/modules.json'), `${JSON.stringify(ids, null, 1)}\n`);

      const pkgDirs = new Map();  // npm package name -> folder
      for (const id of ids) {
        if (!id.includes('/node_modules/')) continue;
        const dir = nearestPackageDir(id.split('?')[0]);
        if (dir) pkgDirs.set(JSON.parse(readFileSync(path.join(dir, 'package.json'), 'utf8')).name, dir);
      }
      const rungsPkg = JSON.parse(readFileSync(path.join(npmDir, 'package.json'), 'utf8'));
      let text = `# Third-party notices: rungs ${rungsPkg.version}, browser demo (this folder)\n\n` +
        'The demo is part of rungs (Apache-2.0, LICENSE and NOTICE in this folder). Its bundles also\n' +
        'contain the packages below: the code the rungs npm package compiles into its wasm, then the\n' +
        "npm packages Vite bundled (from Vite's own licence report, .vite/license.json).\n";
      text += `\n## rungs ${rungsPkg.version} (${rungsPkg.license})\n\n` +
        '```\n' + readFileSync(path.join(repoRoot, 'NOTICE'), 'utf8') + '```\n';
      const own = readFileSync(path.join(npmDir, 'THIRD_PARTY_NOTICES.md'), 'utf8');
      text += own.slice(own.indexOf('\n## ')).replace(/\n+$/, '\n');
      for (const entry of JSON.parse(readFileSync(path.join(out, licenseFile), 'utf8'))) {
        text += `\n## ${entry.name} ${entry.version} (${entry.identifier ?? 'no licence identifier'})\n\n`;
        text += '```\n' + (entry.text ?? '(the package ships no licence file)') + '\n```\n';
        const dir = pkgDirs.get(entry.name);
        const noticeFile = dir && readdirSync(dir).find((f) => /^NOTICE(\.(md|txt))?$/i.test(f));
        if (noticeFile) text += `\nNOTICE:\n\n\`\`\`\n${readFileSync(path.join(dir, noticeFile), 'utf8').trim()}\n\`\`\`\n`;
      }
      writeFileSync(path.join(out, 'THIRD_PARTY_NOTICES.md'), text);
      for (const f of ['LICENSE', 'NOTICE']) copyFileSync(path.join(repoRoot, f), path.join(out, f));
    },
  };
}
