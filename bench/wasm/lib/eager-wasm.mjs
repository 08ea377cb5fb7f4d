// SPDX-License-Identifier: Apache-2.0
// Imported first by the Node benchmarks: every engine's wasm is compiled by V8's optimizing tier
// when it is instantiated, instead of starting on the baseline tier and tiering up the functions
// that get hot while the benchmark runs. Tier-up compiles on V8's background threads, and on a
// 2-core machine that took a core from whichever contender ran then: rungs' 2-thread encoder
// batches right after onnxruntime-web's first runs took 13-18 ms instead of 5.3. The same flag for
// every engine; the compilation it moves to start-up ends before anything is timed (waitForQuiet).
import v8 from 'node:v8';

v8.setFlagsFromString('--no-wasm-dynamic-tiering');
