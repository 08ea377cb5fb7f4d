// SPDX-License-Identifier: Apache-2.0
// A bundled model read from disk (model.mjs holds what Node and the browser share).
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

import { modelFromBytes } from './model.mjs';

/** Reads name.json and the weights beside it: {spec, jsonText, weightBytes, params}. */
export function readModel(jsonPath) {
  const jsonText = readFileSync(jsonPath, 'utf8');
  const weightsPath = join(dirname(jsonPath), JSON.parse(jsonText).weights);
  return modelFromBytes(jsonText, new Uint8Array(readFileSync(weightsPath)), weightsPath);
}
