// SPDX-License-Identifier: Apache-2.0
// rungs from CommonJS: require('rungs') lands here (the "require" condition in package.json).
// The package is an ES module that instantiates its WebAssembly with top-level await, which a
// synchronous require() cannot wait for; say how to load it instead of Node's
// ERR_REQUIRE_ASYNC_MODULE / ERR_REQUIRE_ESM.
const error = new Error(
  "require('rungs') cannot load rungs: it is an ES module that instantiates its WebAssembly with " +
    'top-level await. From CommonJS use a dynamic import, which returns a promise of the module: ' +
    "`const rungs = await import('rungs');` inside an async function (or " +
    "`import('rungs').then((rungs) => { ... })`). From an ES module: `import { Session } from 'rungs';`.",
);
error.code = 'ERR_REQUIRE_ASYNC_MODULE';
throw error;
